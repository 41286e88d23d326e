import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ListBillPaymentsPageInput } from '../activities/accounting.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  SYNC_BATCH_FAILURES,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWebhookSignal,
  type SyncBatchInput,
  type SyncBatchSummary,
} from '../src/contracts/sync-batch.js';
import { API_RETRY, accountingQueue, type ActivitiesOn } from './activity-options.js';
import { count, failsTheWorkflow } from './metrics.js';
import { observe, type BatchScope, type Observation } from './sync-batch/observe.js';
import { SyncBatchRecord } from './sync-batch/record.js';
import { settingsOf, type SyncBatchSettings } from './sync-batch/settings.js';

interface Batch {
  input: SyncBatchInput;
  settings: SyncBatchSettings;
  scope: BatchScope;
  record: SyncBatchRecord;
  /** What the message handlers recorded for the process to act on. */
  inbox: { reprocessing: boolean; dismissReason: string | undefined };
  api: SyncBatchApi;
  /** Polls made by this run (the history grows with them; bounded by `pollsPerRun`). */
  pollsThisRun: number;
  lastPollAt: number;
}

/**
 * One accounting sync batch (docs/sync-batches.md): process once, then follow the payments with backoff, woken early
 * by webhooks; failed payments park it for an operator. Its end is counted once, by the run it ends in.
 */
export async function syncBatchWorkflow(input: SyncBatchInput): Promise<SyncBatchSummary> {
  try {
    return await followBatch(input);
  } catch (err) {
    // Counted here: a refused input has no record.
    if (failsTheWorkflow(err)) count('etims_sync_batches', { outcome: 'failed' });
    throw err;
  }
}

async function followBatch(input: SyncBatchInput): Promise<SyncBatchSummary> {
  const batch = openBatch(input);
  await processOnce(batch);
  for (;;) {
    if (batch.pollsThisRun >= batch.settings.pollsPerRun || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof syncBatchWorkflow>({ ...input, continued: batch.record.state });
    }
    const seen = await poll(batch);
    if (batch.inbox.dismissReason !== undefined) return finish(batch);
    // A reprocess ran while this look was under way: what it saw is from before, look again.
    if (seen === undefined) continue;
    if (seen.kind === 'unsettled') await waitForProgress(batch, seen);
    else if ((await completeOrPark(batch, seen)) === 'closed') return finish(batch);
  }
}

/** Both safe to repeat: an outage is ridden out in activity retries, which add no history events. */
function syncBatchActivities() {
  const api = proxyActivities<ActivitiesOn<'accounting'>>({
    taskQueue: accountingQueue(),
    startToCloseTimeout: '60 seconds',
    retry: API_RETRY,
  });
  return {
    processSyncBatch: (syncBatchId: string, companyId: string | undefined) =>
      api.processSyncBatch.executeWithOptions({ summary: `process sync batch ${syncBatchId}` }, [
        { syncBatchId, ...(companyId ? { companyId } : {}) },
      ]),
    listBillPaymentsPage: (input: ListBillPaymentsPageInput) =>
      api.listBillPaymentsPage.executeWithOptions(
        {
          summary:
            `${input.status ?? 'all'} bill payments` +
            `${input.syncBatchId ? ` of ${input.syncBatchId}` : ''}, page ${input.page}`,
        },
        [input],
      ),
  };
}

export type SyncBatchApi = ReturnType<typeof syncBatchActivities>;

function openBatch(input: SyncBatchInput): Batch {
  const settings = settingsOf(input);
  const batch: Batch = {
    input,
    settings,
    scope: {
      syncBatchId: input.syncBatchId,
      companyId: input.companyId,
      ids: input.billPaymentIds ? new Set(input.billPaymentIds) : undefined,
      pageSize: settings.pageSize,
    },
    record: new SyncBatchRecord(input),
    inbox: { reprocessing: false, dismissReason: undefined },
    api: syncBatchActivities(),
    pollsThisRun: 0,
    lastPollAt: 0,
  };
  handleBatchMessages(batch);
  return batch;
}

function handleBatchMessages({ record, inbox, api, input }: Batch): void {
  const { state } = record;
  const allowedWhileParked = (update: string) => {
    if (state.parked === null || state.failed.length === 0 || inbox.reprocessing || inbox.dismissReason !== undefined)
      refuse(`${update} is possible only while the sync batch is parked with failed bill payments`);
  };
  setHandler(getSyncBatchStateQuery, () => state);
  setHandler(syncBatchWebhookSignal, () => record.webhookReceived());
  setHandler(
    reprocessSyncBatchUpdate,
    async () => {
      inbox.reprocessing = true;
      try {
        // In the handler, so a refusal by the service (A21) fails the update and leaves the batch parked.
        record.reprocessed(await api.processSyncBatch(input.syncBatchId, input.companyId));
      } finally {
        inbox.reprocessing = false;
      }
      return state;
    },
    { validator: () => allowedWhileParked('reprocess') },
  );
  setHandler(
    dismissSyncBatchUpdate,
    ({ reason }) => {
      inbox.dismissReason = reason.trim();
      record.dismissed(inbox.dismissReason);
      return state;
    },
    {
      validator: (args) => {
        allowedWhileParked('dismiss');
        if (typeof args?.reason !== 'string' || args.reason.trim() === '') refuse('a dismiss needs a reason');
      },
    },
  );
}

function refuse(message: string): never {
  throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
}

/** A continued run goes on following. */
async function processOnce({ input, record, api }: Batch): Promise<void> {
  if (record.state.processCalls > 0) return;
  record.enter('processing');
  record.processed(await api.processSyncBatch(input.syncBatchId, input.companyId));
  record.enter('following');
}

/** One look at the batch's payments; undefined when a reprocess started meanwhile. */
async function poll(batch: Batch): Promise<Observation | undefined> {
  const generation = batch.record.state.processCalls;
  const seen = await observe(batch.api, batch.scope);
  batch.pollsThisRun += 1;
  batch.lastPollAt = Date.now();
  return batch.record.state.processCalls === generation ? seen : undefined;
}

/** The next poll after the first interval once something settled, doubled while nothing does, sooner on a webhook. */
async function waitForProgress(batch: Batch, seen: Extract<Observation, { kind: 'unsettled' }>): Promise<void> {
  const { record, settings } = batch;
  const previous = record.state.lastPoll;
  const progressed = previous !== null && seen.pending + seen.syncing < previous.pending + previous.syncing;
  record.unparked();
  record.unsettled(seen.pending, seen.syncing, settings.attentionAfterMs);
  if (record.state.step !== 'following') record.enter('following');
  const last = record.state.pollIntervalMs;
  record.state.pollIntervalMs =
    last <= 0 || progressed ? settings.pollIntervalMs : Math.min(last * 2, settings.maxPollIntervalMs);
  // A durable timer, cut short by a webhook; however many arrive, polls stay `minPollGap` apart.
  const webhooks = record.state.webhooks;
  if (await condition(() => record.state.webhooks > webhooks, Math.max(1, record.state.pollIntervalMs)))
    await keepPollGap(batch);
}

async function keepPollGap({ settings, lastPollAt }: Batch): Promise<void> {
  const gap = settings.minPollGapMs - (Date.now() - lastPollAt);
  if (gap > 0) await sleep(gap);
}

/** Every payment settled: the batch completes, or parks with the failed ones until an operator acts or a look. */
async function completeOrPark(
  batch: Batch,
  seen: Extract<Observation, { kind: 'settled' }>,
): Promise<'closed' | 'poll again'> {
  const { input, record, inbox, settings } = batch;
  if (seen.untagged && batch.scope.ids === undefined && seen.synced === 0 && seen.failed.length === 0)
    throw ApplicationFailure.nonRetryable(
      `the accounting service does not say which bill payments sync batch ${input.syncBatchId} covers ` +
        '(its bill payments carry no syncBatchId, contract assumption A18): start the workflow with billPaymentIds',
      SYNC_BATCH_FAILURES.coverageUnknown,
    );
  record.settled(seen.synced, seen.failed, seen.missing);
  if (seen.failed.length === 0) {
    record.unparked();
    if (seen.synced === 0) record.note('no bill payments found for the batch');
    record.completed();
    return 'closed';
  }
  record.park();
  // Until an operator acts, a webhook arrives (the payments may have been fixed elsewhere) or the parked poll is due.
  const webhooks = record.state.webhooks;
  await condition(
    () => record.state.parked === null || inbox.dismissReason !== undefined || record.state.webhooks > webhooks,
    settings.parkedPollIntervalMs,
  );
  if (record.state.parked !== null && inbox.dismissReason === undefined) await keepPollGap(batch);
  return inbox.dismissReason === undefined ? 'poll again' : 'closed';
}

async function finish(batch: Batch): Promise<SyncBatchSummary> {
  await condition(allHandlersFinished);
  return batch.record.finished(batch.inbox.dismissReason);
}

import { ApplicationFailure, allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { failsTheWorkflow } from './metrics.js';
import { SYNC_BATCH_FAILURES, type SyncBatchInput, type SyncBatchSummary } from '../src/contracts/sync-batch.js';
import { syncBatchActivities } from './sync-batch/activities.js';
import type { Batch } from './sync-batch/context.js';
import { handleBatchMessages } from './sync-batch/messages.js';
import { observe, type Observation } from './sync-batch/observe.js';
import { SyncBatchRecord, countFailedBatch } from './sync-batch/record.js';
import { settingsOf } from './sync-batch/settings.js';
import { nextInterval, waitForNextPoll, waitWhileParked } from './sync-batch/waits.js';

type Unsettled = Extract<Observation, { kind: 'unsettled' }>;
type Settled = Extract<Observation, { kind: 'settled' }>;

/**
 * One accounting sync batch from `process` to every bill payment settled (docs/sync-batches.md): process once,
 * then follow the payments with backoff, woken early by webhooks; failed payments park the batch for an operator.
 * Continues as new after `pollsPerRun` polls. Its end is counted once, by the run it ends in.
 */
export async function syncBatchWorkflow(input: SyncBatchInput): Promise<SyncBatchSummary> {
  try {
    return await followBatch(input);
  } catch (err) {
    if (failsTheWorkflow(err)) countFailedBatch();
    throw err;
  }
}

async function followBatch(input: SyncBatchInput): Promise<SyncBatchSummary> {
  const batch = openBatch(input);
  await processOnce(batch);
  for (;;) {
    if (runIsFull(batch)) return continueFollowing(batch);
    const seen = await poll(batch);
    if (batch.inbox.dismissReason !== undefined) return finish(batch);
    // A reprocess ran while this look was under way: what it saw is from before, look again.
    if (seen === undefined) continue;
    if (seen.kind === 'unsettled') await waitForProgress(batch, seen);
    else if ((await completeOrPark(batch, seen)) === 'closed') return finish(batch);
  }
}

function openBatch(input: SyncBatchInput): Batch {
  const settings = settingsOf(input);
  const record = new SyncBatchRecord(input, 0);
  const batch: Batch = {
    input,
    settings,
    scope: {
      syncBatchId: input.syncBatchId,
      companyId: input.companyId,
      ids: input.billPaymentIds ? new Set(input.billPaymentIds) : undefined,
      pageSize: settings.pageSize,
    },
    record,
    inbox: { reprocessing: false, dismissReason: undefined },
    api: syncBatchActivities(),
    pollsThisRun: 0,
    lastPollAt: 0,
  };
  handleBatchMessages(batch);
  return batch;
}

/** Process is called once a batch: a continued run goes on following. */
async function processOnce({ input, record, api }: Batch): Promise<void> {
  if (record.state.processCalls > 0) return;
  record.enter('processing');
  record.processed(await api.processSyncBatch(input.syncBatchId, input.companyId));
  record.enter('following');
}

function runIsFull(batch: Batch): boolean {
  return batch.pollsThisRun >= batch.settings.pollsPerRun || workflowInfo().continueAsNewSuggested;
}

async function continueFollowing({ input, record }: Batch): Promise<never> {
  await condition(allHandlersFinished);
  return continueAsNew<typeof syncBatchWorkflow>({ ...input, continued: record.state });
}

/** One look at the batch's payments; undefined when a reprocess started meanwhile. */
async function poll(batch: Batch): Promise<Observation | undefined> {
  const { record } = batch;
  const generation = record.state.processCalls;
  const seen = await observe(batch.api, batch.scope);
  batch.pollsThisRun += 1;
  batch.lastPollAt = Date.now();
  return record.state.processCalls === generation ? seen : undefined;
}

/** Payments still pending or syncing: the next poll comes later each time nothing settled, sooner on a webhook. */
async function waitForProgress(batch: Batch, seen: Unsettled): Promise<void> {
  const { record, settings } = batch;
  const previous = record.state.lastPoll;
  const progressed = previous !== null && seen.pending + seen.syncing < previous.pending + previous.syncing;
  record.unparked();
  record.unsettled(seen.pending, seen.syncing, settings.attentionAfterMs);
  if (record.state.step !== 'following') record.enter('following');
  record.state.pollIntervalMs = nextInterval(record.state.pollIntervalMs, progressed, settings);
  await waitForNextPoll(batch, record.state.pollIntervalMs);
}

/** Every payment settled: the batch completes, or parks with the failed ones until an operator acts or a look. */
async function completeOrPark(batch: Batch, seen: Settled): Promise<'closed' | 'poll again'> {
  const { input, record, inbox } = batch;
  if (seen.untagged && batch.scope.ids === undefined && seen.synced === 0 && seen.failed.length === 0) {
    throw ApplicationFailure.nonRetryable(
      `the accounting service does not say which bill payments sync batch ${input.syncBatchId} covers ` +
        '(its bill payments carry no syncBatchId, contract assumption A18): start the workflow with billPaymentIds',
      SYNC_BATCH_FAILURES.coverageUnknown,
    );
  }
  record.settled(seen.synced, seen.failed, seen.missing);
  if (seen.failed.length === 0) {
    record.unparked();
    if (seen.synced === 0) record.note('no bill payments found for the batch');
    record.completed();
    return 'closed';
  }
  record.park();
  await waitWhileParked(batch);
  return inbox.dismissReason === undefined ? 'poll again' : 'closed';
}

async function finish(batch: Batch): Promise<SyncBatchSummary> {
  await condition(allHandlersFinished);
  return batch.record.finished(batch.inbox.dismissReason);
}

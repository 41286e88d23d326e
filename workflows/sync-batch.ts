import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { parseDuration } from '../src/contracts/duration.js';
import {
  SYNC_BATCH_FAILURES,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWebhookSignal,
  type SyncBatchInput,
  type SyncBatchOptions,
  type SyncBatchSummary,
} from '../src/contracts/sync-batch.js';
import { syncBatchActivities, type SyncBatchApi } from './sync-batch/activities.js';
import { observe, type BatchScope } from './sync-batch/observe.js';
import { SyncBatchRecord } from './sync-batch/record.js';

interface Settings {
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  minPollGapMs: number;
  parkedPollIntervalMs: number;
  attentionAfterMs: number;
  pollsPerRun: number;
  pageSize: number;
}

/** What the message handlers recorded for the process to act on. */
interface Inbox {
  reprocessing: boolean;
  dismissReason: string | undefined;
}

interface Batch {
  input: SyncBatchInput;
  settings: Settings;
  scope: BatchScope;
  record: SyncBatchRecord;
  inbox: Inbox;
  api: SyncBatchApi;
  /** Polls made by this run (the history grows with them; bounded by `pollsPerRun`). */
  pollsThisRun: number;
  lastPollAt: number;
}

/**
 * One accounting sync batch from `process` to every bill payment settled: process is called once, then the
 * batch's payments are followed through the list endpoint (observe.ts) with backoff on durable timers, woken
 * early by webhook signals (polling stays the fallback). Failed payments park the batch for an operator
 * (`NeedsAttention`, current details, `reprocess` / `dismiss` updates). The history stays bounded: the workflow
 * continues as new after `pollsPerRun` polls or when Temporal suggests it, carrying its state.
 */
export async function syncBatchWorkflow(input: SyncBatchInput): Promise<SyncBatchSummary> {
  const batch = openBatch(input);
  const { record, api, inbox, settings } = batch;

  if (record.state.processCalls === 0) {
    record.enter('processing');
    record.processed(await api.processSyncBatch(input.syncBatchId));
    record.enter('following');
  }

  for (;;) {
    if (batch.pollsThisRun >= settings.pollsPerRun || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return await continueAsNew<typeof syncBatchWorkflow>({ ...input, continued: record.state });
    }
    const generation = record.state.processCalls;
    const seen = await observe(api, batch.scope);
    batch.pollsThisRun += 1;
    batch.lastPollAt = Date.now();
    record.countCalls(seen.apiCalls);
    if (inbox.dismissReason !== undefined) return finish(batch);
    // A reprocess ran while this look was under way: what it saw is from before, look again.
    if (record.state.processCalls !== generation) continue;

    if (seen.kind === 'unsettled') {
      const previous = record.state.lastPoll;
      const progressed = previous !== null && seen.pending + seen.syncing < previous.pending + previous.syncing;
      record.unparked();
      record.unsettled(seen.pending, seen.syncing, settings.attentionAfterMs);
      if (record.state.step !== 'following') record.enter('following');
      record.state.pollIntervalMs = nextInterval(record.state.pollIntervalMs, progressed, settings);
      await waitForNextPoll(batch, record.state.pollIntervalMs);
      continue;
    }

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
      return finish(batch);
    }
    record.park();
    await waitWhileParked(batch);
    if (inbox.dismissReason !== undefined) return finish(batch);
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
  handleMessages(batch);
  return batch;
}

function assertAllowed(allowed: boolean, message: string): void {
  if (!allowed) throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
}

/** The query, the webhook signal and the operator's updates. Validators refuse what the batch cannot do now. */
function handleMessages({ record, inbox, api, input }: Batch): void {
  const { state } = record;
  const parkedWithFailures = () => state.parked !== null && state.failed.length > 0 && !inbox.reprocessing && inbox.dismissReason === undefined;

  setHandler(getSyncBatchStateQuery, () => state);
  setHandler(syncBatchWebhookSignal, () => record.webhookReceived());
  setHandler(
    reprocessSyncBatchUpdate,
    async () => {
      inbox.reprocessing = true;
      try {
        // In the handler, so a refusal by the service (A21) fails the update and leaves the batch parked.
        record.reprocessed(await api.processSyncBatch(input.syncBatchId));
      } finally {
        inbox.reprocessing = false;
      }
      return state;
    },
    { validator: () => assertAllowed(parkedWithFailures(), 'reprocess is possible only while the sync batch is parked with failed bill payments') },
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
        assertAllowed(parkedWithFailures(), 'dismiss is possible only while the sync batch is parked with failed bill payments');
        assertAllowed(typeof args?.reason === 'string' && args.reason.trim() !== '', 'a dismiss needs a reason');
      },
    },
  );
}

/** The next wait: the first after process or progress, doubled while nothing settles, up to the maximum. */
function nextInterval(previousMs: number, progressed: boolean, settings: Settings): number {
  if (previousMs <= 0 || progressed) return settings.pollIntervalMs;
  return Math.min(previousMs * 2, settings.maxPollIntervalMs);
}

/** A durable timer, cut short by a webhook; however many arrive, polls stay `minPollGap` apart. */
async function waitForNextPoll(batch: Batch, waitMs: number): Promise<void> {
  const { record, settings } = batch;
  const webhooks = record.state.webhooks;
  const woken = await condition(() => record.state.webhooks > webhooks, Math.max(1, waitMs));
  if (!woken) return;
  const gap = settings.minPollGapMs - (Date.now() - batch.lastPollAt);
  if (gap > 0) await sleep(gap);
}

/** Until an operator acts, a webhook arrives (the payments may have been fixed elsewhere) or the parked poll is due. */
async function waitWhileParked(batch: Batch): Promise<void> {
  const { record, inbox, settings } = batch;
  const webhooks = record.state.webhooks;
  await condition(
    () => record.state.parked === null || inbox.dismissReason !== undefined || record.state.webhooks > webhooks,
    settings.parkedPollIntervalMs,
  );
  if (record.state.parked !== null && inbox.dismissReason === undefined) {
    const gap = settings.minPollGapMs - (Date.now() - batch.lastPollAt);
    if (gap > 0) await sleep(gap);
  }
}

async function finish(batch: Batch): Promise<SyncBatchSummary> {
  await condition(allHandlersFinished);
  return batch.record.summary(batch.inbox.dismissReason);
}

// ---------------------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------------------

/** Starts from plain JSON skip the client's validation: a bad input fails the run clearly, before any call. */
function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidInput);
}

function durationOption(options: SyncBatchOptions, name: keyof SyncBatchOptions, fallback: string): number {
  const value = options[name] ?? fallback;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms <= 0) throw invalid(`options.${name}: not a duration: ${String(value)}`);
  return ms;
}

function integerOption(options: SyncBatchOptions, name: 'pollsPerRun' | 'pageSize', fallback: number, max: number): number {
  const value = options[name] ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw invalid(`options.${name}: must be an integer from 1 to ${max}`);
  return value;
}

function settingsOf(input: SyncBatchInput): Settings {
  if (typeof input?.syncBatchId !== 'string' || input.syncBatchId.trim() === '') throw invalid('syncBatchId: must be a non-empty string');
  if (input.companyId !== undefined && (typeof input.companyId !== 'string' || input.companyId.trim() === '')) {
    throw invalid('companyId: must be a non-empty string when given');
  }
  const ids = input.billPaymentIds;
  if (ids !== undefined && (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.trim() !== ''))) {
    throw invalid('billPaymentIds: must be a non-empty list of bill payment ids when given');
  }
  const options = input.options ?? {};
  return {
    pollIntervalMs: durationOption(options, 'pollInterval', '2 seconds'),
    maxPollIntervalMs: durationOption(options, 'maxPollInterval', '5 minutes'),
    minPollGapMs: durationOption(options, 'minPollGap', '1 second'),
    parkedPollIntervalMs: durationOption(options, 'parkedPollInterval', '1 hour'),
    attentionAfterMs: durationOption(options, 'attentionAfter', '6 hours'),
    pollsPerRun: integerOption(options, 'pollsPerRun', 200, 10_000),
    pageSize: integerOption(options, 'pageSize', 100, 100),
  };
}

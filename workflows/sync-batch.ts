import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { parseDuration } from '../src/contracts/duration.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  SYNC_BATCH_FAILURES,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWebhookSignal,
  type SyncBatchInput,
  type SyncBatchOptions,
  type SyncBatchState,
  type SyncBatchSummary,
} from '../src/contracts/sync-batch.js';
import { count, failsTheWorkflow } from './metrics.js';
import { syncBatchActivities } from './sync-batch/api.js';
import { observe, type BatchScope } from './sync-batch/observe.js';
import { SyncBatchRecord } from './sync-batch/record.js';

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

type Changes = Partial<SyncBatchState>;

async function followBatch(input: SyncBatchInput): Promise<SyncBatchSummary> {
  const settings = settingsOf(input);
  const scope: BatchScope = {
    syncBatchId: input.syncBatchId,
    companyId: input.companyId,
    ids: input.billPaymentIds ? new Set(input.billPaymentIds) : undefined,
    pageSize: settings.pageSize,
  };
  const record = new SyncBatchRecord(input);
  const { state } = record;
  const api = syncBatchActivities();
  // What the message handlers recorded for the process to act on.
  let reprocessing = false;
  let dismissReason: string | undefined;
  // Polls made by this run (the history grows with them; bounded by `pollsPerRun`).
  let pollsThisRun = 0;
  let lastPollAt = 0;

  const allowedWhileParked = (update: string) => {
    if (state.parked === null || state.failed.length === 0 || reprocessing || dismissReason !== undefined)
      refuse(`${update} is possible only while the sync batch is parked with failed bill payments`);
  };
  setHandler(getSyncBatchStateQuery, () => state);
  setHandler(syncBatchWebhookSignal, () => void (state.webhooks += 1));
  setHandler(
    reprocessSyncBatchUpdate,
    async () => {
      reprocessing = true;
      try {
        // In the handler, so a refusal by the service (A21) fails the update and leaves the batch parked.
        const result = await api.processSyncBatch(input.syncBatchId, input.companyId);
        // Follows the failed payments again from the start.
        Object.assign(state, { parked: null, failed: [], pollIntervalMs: 0, step: 'following' } satisfies Changes);
        record.processed(result);
      } finally {
        reprocessing = false;
      }
      return state;
    },
    { validator: () => allowedWhileParked('reprocess') },
  );
  setHandler(
    dismissSyncBatchUpdate,
    ({ reason }) => {
      dismissReason = reason.trim();
      state.parked = null;
      record.note(`dismissed: ${dismissReason}`);
      record.enter('dismissed');
      return state;
    },
    {
      validator: (args) => {
        allowedWhileParked('dismiss');
        if (typeof args?.reason !== 'string' || args.reason.trim() === '') refuse('a dismiss needs a reason');
      },
    },
  );

  const keepPollGap = async () => {
    const gap = settings.minPollGapMs - (Date.now() - lastPollAt);
    if (gap > 0) await sleep(gap);
  };
  const finish = async () => {
    await condition(allHandlersFinished);
    return record.finished(dismissReason);
  };

  // A continued run goes on following.
  if (state.processCalls === 0) {
    record.enter('processing');
    record.processed(await api.processSyncBatch(input.syncBatchId, input.companyId));
    record.enter('following');
  }
  for (;;) {
    if (pollsThisRun >= settings.pollsPerRun || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof syncBatchWorkflow>({ ...input, continued: state });
    }
    const generation = state.processCalls;
    const seen = await observe(api, scope);
    pollsThisRun += 1;
    lastPollAt = Date.now();
    if (dismissReason !== undefined) return finish();
    // A reprocess ran while this look was under way: what it saw is from before, look again.
    if (state.processCalls !== generation) continue;

    if (seen.kind === 'unsettled') {
      // The next poll after the first interval once something settled, doubled while nothing does, sooner on a webhook.
      const previous = state.lastPoll;
      const progressed = previous !== null && seen.pending + seen.syncing < previous.pending + previous.syncing;
      record.unparked();
      record.unsettled(seen.pending, seen.syncing, settings.attentionAfterMs);
      if (state.step !== 'following') record.enter('following');
      const last = state.pollIntervalMs;
      state.pollIntervalMs =
        last <= 0 || progressed ? settings.pollIntervalMs : Math.min(last * 2, settings.maxPollIntervalMs);
      // A durable timer, cut short by a webhook; however many arrive, polls stay `minPollGap` apart.
      const webhooks = state.webhooks;
      if (await condition(() => state.webhooks > webhooks, Math.max(1, state.pollIntervalMs))) await keepPollGap();
      continue;
    }

    // Every payment settled: the batch completes, or parks with the failed ones until an operator acts or a look.
    if (seen.untagged && scope.ids === undefined && seen.synced === 0 && seen.failed.length === 0)
      throw ApplicationFailure.nonRetryable(
        `the accounting service does not say which bill payments sync batch ${input.syncBatchId} covers ` +
          '(its bill payments carry no syncBatchId, contract assumption A18): start the workflow with billPaymentIds',
        SYNC_BATCH_FAILURES.coverageUnknown,
      );
    const { synced, failed, missing } = seen;
    const settled: Changes = { synced, failed, missing, lastPoll: null, unsettledSince: null, stuck: false };
    Object.assign(state, settled, { polls: state.polls + 1 });
    if (seen.failed.length === 0) {
      record.unparked();
      if (seen.synced === 0) record.note('no bill payments found for the batch');
      record.note(`completed: ${synced} synced`);
      record.enter('completed');
      return finish();
    }
    record.park();
    // Until an operator acts, a webhook arrives (the payments may have been fixed elsewhere) or the parked poll is due.
    const webhooks = state.webhooks;
    await condition(
      () => state.parked === null || dismissReason !== undefined || state.webhooks > webhooks,
      settings.parkedPollIntervalMs,
    );
    if (dismissReason === undefined && state.parked !== null) await keepPollGap();
    if (dismissReason !== undefined) return finish();
  }
}

function refuse(message: string): never {
  throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
}

/** Starts from plain JSON skip the client's validation: a bad input fails the run clearly, before any call. */
function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidInput);
}

function settingsOf(input: SyncBatchInput) {
  if (typeof input?.syncBatchId !== 'string' || input.syncBatchId.trim() === '')
    throw invalid('syncBatchId: must be a non-empty string');
  if (input.companyId !== undefined && (typeof input.companyId !== 'string' || input.companyId.trim() === ''))
    throw invalid('companyId: must be a non-empty string when given');
  const ids = input.billPaymentIds;
  if (
    ids !== undefined &&
    (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.trim() !== ''))
  )
    throw invalid('billPaymentIds: must be a non-empty list of bill payment ids when given');
  const options: SyncBatchOptions = input.options ?? {};
  const duration = (name: keyof SyncBatchOptions, fallback: string) => {
    const value = options[name] ?? fallback;
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined || ms <= 0) throw invalid(`options.${name}: not a duration: ${String(value)}`);
    return ms;
  };
  const integer = (name: 'pollsPerRun' | 'pageSize', fallback: number, max: number) => {
    const value = options[name] ?? fallback;
    if (!Number.isSafeInteger(value) || value < 1 || value > max)
      throw invalid(`options.${name}: must be an integer from 1 to ${max}`);
    return value;
  };
  return {
    pollIntervalMs: duration('pollInterval', '2 seconds'),
    maxPollIntervalMs: duration('maxPollInterval', '5 minutes'),
    minPollGapMs: duration('minPollGap', '1 second'),
    parkedPollIntervalMs: duration('parkedPollInterval', '1 hour'),
    attentionAfterMs: duration('attentionAfter', '6 hours'),
    pollsPerRun: integer('pollsPerRun', 200, 10_000),
    pageSize: integer('pageSize', 100, 100),
  };
}

/**
 * What the sync-batch workflow, its activities, the accounting webhook receiver and the client share: input,
 * state, summary, signal, query and updates, declared once. Workflow code imports this file: no Node APIs.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { parseDuration } from './duration.js';

/** Workflow type name, for starting by name (the typed client, the Temporal CLI, plain JSON). */
export const SYNC_BATCH_WORKFLOW_TYPE = 'syncBatchWorkflow';

/** One execution per sync batch: starting the same batch twice finds the existing execution. */
export function syncBatchWorkflowId(syncBatchId: string): string {
  return `sync-batch:${syncBatchId}`;
}

const nonEmpty = () => z.string().refine((value) => value.trim().length > 0, 'must not be empty');
const duration = () =>
  z
    .string()
    .refine((value) => (parseDuration(value) ?? 0) > 0, "must be a duration: a number and a unit, e.g. '30 seconds'");

/** The input as a caller gives it (the sync-batch client checks it); unknown fields are refused. */
export const syncBatchInputSchema = z.strictObject({
  syncBatchId: nonEmpty(),
  /** Narrows every list call to one company (and lets the service refuse a company the key may not see). */
  companyId: nonEmpty().optional(),
  /**
   * The bill payments the batch covers, for a service that does not say (A18). Absent: the batch's payments
   * are those whose `syncBatchId` is this batch.
   */
  billPaymentIds: z.array(nonEmpty()).min(1, 'must name at least one bill payment').optional(),
  /** Behaviour knobs; every one has a default, so a plain JSON start works. Durations as `'30 seconds'`. */
  options: z
    .strictObject({
      /** First wait between polls of the bill payments, doubled while nothing settles (default '2 seconds'). */
      pollInterval: duration().optional(),
      /** Longest wait between polls (default '5 minutes'). */
      maxPollInterval: duration().optional(),
      /** Shortest gap between two polls however many webhooks arrive (default '1 second'). */
      minPollGap: duration().optional(),
      /** While parked, how often to look whether the failures were fixed elsewhere (default '1 hour'). */
      parkedPollInterval: duration().optional(),
      /** Payments still pending or syncing after this long set NeedsAttention, polling goes on (default '6 hours'). */
      attentionAfter: duration().optional(),
      /** Polls per run before the workflow continues as new, keeping its history short (default 200). */
      pollsPerRun: z.number().int().min(1).max(10_000).optional(),
      /** Bill payments per list page, 1..100 (default 100). */
      pageSize: z.number().int().min(1).max(100).optional(),
    })
    .optional(),
});

export type SyncBatchInput = z.output<typeof syncBatchInputSchema> & {
  /** Set by the workflow itself when it continues as new: where the previous run got to. */
  continued?: SyncBatchState;
};
export type SyncBatchOptions = NonNullable<SyncBatchInput['options']>;

export type SyncBatchStep = 'processing' | 'following' | 'parked' | 'completed' | 'dismissed';

export interface FailedBillPayment {
  id: string;
  /** The service's reason (A19), or null when it gave none. */
  reason: string | null;
  updatedAt: string | null;
}

/** Operator updates that move a parked batch on. */
export type SyncBatchAction = 'reprocess' | 'dismiss';

export interface SyncBatchParked {
  code: 'bill_payments_failed';
  message: string;
  since: string;
  actions: SyncBatchAction[];
}

/** The `getState` query's answer (and what a run hands the next when it continues as new). */
export interface SyncBatchState {
  syncBatchId: string;
  companyId: string | null;
  step: SyncBatchStep;
  /** The service's answer to the latest process call. */
  processMessage: string | null;
  processCalls: number;
  /** Polls of the bill payments, over all runs. */
  polls: number;
  /** Webhook signals received (each a hint to poll now). */
  webhooks: number;
  /** Runs of this execution (1 + continue-as-new count). */
  runs: number;
  startedAt: string;
  /** The latest poll that found payments still unsettled. */
  lastPoll: { at: string; pending: number; syncing: number } | null;
  /** Since when payments have been unsettled without a poll finding them all settled. */
  unsettledSince: string | null;
  /** Settled payments, as the latest complete count found them. */
  synced: number;
  failed: FailedBillPayment[];
  /** Payments named in `billPaymentIds` that no listing showed. */
  missing: string[];
  parked: SyncBatchParked | null;
  /** Set while payments have been unsettled longer than `attentionAfter`. */
  stuck: boolean;
  /** The current wait between polls (backoff), carried over continue-as-new. */
  pollIntervalMs: number;
  /** The latest events, newest last (bounded). */
  history: Array<{ at: string; event: string }>;
}

/** What a finished batch returns: its final counts, taken from the state, plus how it ended. */
export type SyncBatchSummary = Pick<
  SyncBatchState,
  | 'syncBatchId'
  | 'companyId'
  | 'synced'
  | 'failed'
  | 'missing'
  | 'processCalls'
  | 'polls'
  | 'webhooks'
  | 'runs'
  | 'startedAt'
> & {
  /** `synced`: every bill payment synced; `dismissed`: an operator closed it with failures left. */
  outcome: 'synced' | 'dismissed';
  finishedAt: string;
  dismissReason?: string;
};

/** A verified accounting webhook named this batch: a hint to poll now, never the status itself. */
export interface SyncBatchWebhookHint {
  webhookId: string;
  billPaymentId: string | null;
  status: string | null;
}

export const syncBatchWebhookSignal = defineSignal<[SyncBatchWebhookHint]>('accountingWebhook');
export const getSyncBatchStateQuery = defineQuery<SyncBatchState>('getState');
/** Calls process again for the failed bill payments and follows them; refused unless parked with failures. */
export const reprocessSyncBatchUpdate = defineUpdate<SyncBatchState, []>('reprocess');
/** Closes a parked batch with its failures left as they are (they can be fixed in the accounting system). */
export const dismissSyncBatchUpdate = defineUpdate<SyncBatchState, [{ reason: string }]>('dismiss');

/** Failure types of the workflow itself (the activities' are the API's codes and FAILURE_TYPES). */
export const SYNC_BATCH_FAILURES = {
  /** Neither the service (no `syncBatchId` on bill payments) nor the input says which payments the batch covers. */
  coverageUnknown: 'sync_batch_coverage_unknown',
} as const;

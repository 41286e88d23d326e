/** The sync-batch process's contract. Workflow code imports this file: no Node APIs. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { nonEmpty, positiveDuration } from './sale-input.js';

export const SYNC_BATCH_WORKFLOW_TYPE = 'syncBatchWorkflow';

export function syncBatchWorkflowId(syncBatchId: string): string {
  return `sync-batch:${syncBatchId}`;
}

const duration = () => positiveDuration("'30 seconds'");

const syncBatchInputSchema = z.strictObject({
  syncBatchId: nonEmpty(),
  companyId: nonEmpty().optional(),
  /** The bill payments the batch covers, for a service that does not say (A18): otherwise by their `syncBatchId`. */
  billPaymentIds: z.array(nonEmpty()).min(1, 'must name at least one bill payment').optional(),
  options: z
    .strictObject({
      /** First wait between polls, doubled while nothing settles (default '2 seconds'). */
      pollInterval: duration().optional(),
      /** Longest wait between polls (default '5 minutes'). */
      maxPollInterval: duration().optional(),
      /** Shortest gap between two polls, however many webhooks arrive (default '1 second'). */
      minPollGap: duration().optional(),
      /** While parked, how often to look whether the failures were fixed elsewhere (default '1 hour'). */
      parkedPollInterval: duration().optional(),
      /** Payments still pending or syncing after this long set NeedsAttention, polling goes on (default '6 hours'). */
      attentionAfter: duration().optional(),
      /** Before continuing as new (default 200). */
      pollsPerRun: z.number().int().min(1).max(10_000).optional(),
      pageSize: z.number().int().min(1).max(100).optional(),
    })
    .optional(),
});

const schemas = { input: syncBatchInputSchema };

/** Behind a function: the workflow sandbox freezes what a shared module's exports reach (see saleSchemas). */
export function syncBatchSchemas(): typeof schemas {
  return schemas;
}

export type SyncBatchInput = z.output<typeof syncBatchInputSchema> & {
  /** Set by the workflow itself when it continues as new. */
  continued?: SyncBatchState;
};
export type SyncBatchOptions = NonNullable<SyncBatchInput['options']>;

export type SyncBatchStep = 'processing' | 'following' | 'parked' | 'completed' | 'dismissed';

export interface FailedBillPayment {
  id: string;
  reason: string | null;
  updatedAt: string | null;
}

/** Also what a run hands the next when it continues as new. */
export interface SyncBatchState {
  syncBatchId: string;
  companyId: string | null;
  step: SyncBatchStep;
  processMessage: string | null;
  processCalls: number;
  /** Over all runs, as are `webhooks` (signals, each a hint to poll now) and `runs`. */
  polls: number;
  webhooks: number;
  runs: number;
  startedAt: string;
  lastPoll: { at: string; pending: number; syncing: number } | null;
  unsettledSince: string | null;
  synced: number;
  failed: FailedBillPayment[];
  /** Payments named in `billPaymentIds` that no listing showed. */
  missing: string[];
  parked: {
    code: 'bill_payments_failed';
    message: string;
    since: string;
    actions: Array<'reprocess' | 'dismiss'>;
  } | null;
  /** Set while payments have been unsettled longer than `attentionAfter`. */
  stuck: boolean;
  pollIntervalMs: number;
  history: Array<{ at: string; event: string }>;
}

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
  /** `dismissed`: an operator closed it with failures left. */
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

export const SYNC_BATCH_FAILURES = {
  /** Neither the service (no `syncBatchId` on bill payments) nor the input says which payments the batch covers. */
  coverageUnknown: 'sync_batch_coverage_unknown',
} as const;

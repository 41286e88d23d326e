/**
 * The typed API other services use to have an accounting sync batch processed and followed to the end: one
 * workflow execution per batch id (`sync-batch:<id>`), so a second start finds the first. Input is validated
 * here first (a `SaleInputError` naming the field; nothing is sent).
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { z } from 'zod';
import { fieldPath } from '../compliance/requests.js';
import { parseDuration } from '../../workflows/duration.js';
import { SALE_TASK_QUEUE } from '../../workflows/definitions.js';
import {
  NeedsAttention,
  SYNC_BATCH_WORKFLOW_TYPE,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWorkflowId,
  type SyncBatchInput,
  type SyncBatchState,
  type SyncBatchSummary,
} from '../../workflows/sync-batch-definitions.js';
import { connectSalesClient } from './connect.js';
import { SaleInputError, type InputProblem } from './errors.js';

export { SYNC_BATCH_WORKFLOW_TYPE, syncBatchWorkflowId };
export type { SyncBatchInput, SyncBatchState, SyncBatchSummary };

type SyncBatchWorkflow = (input: SyncBatchInput) => Promise<SyncBatchSummary>;

/** Memo key holding a random id per start call: how a start tells "I started it" from "it was running". */
const START_REQUEST_MEMO = 'startRequest';

// ---------------------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------------------

const nonEmpty = () => z.string().refine((value) => value.trim().length > 0, 'must not be empty');
const duration = () => z.string().refine((value) => (parseDuration(value) ?? 0) > 0, "must be a duration: a number and a unit, e.g. '30 seconds'");

/** The workflow's own input minus `continued`, which only the workflow sets. Unknown fields are refused. */
export const syncBatchInputSchema = z.strictObject({
  syncBatchId: nonEmpty(),
  companyId: nonEmpty().optional(),
  billPaymentIds: z.array(nonEmpty()).min(1, 'must name at least one bill payment').optional(),
  options: z
    .strictObject({
      pollInterval: duration().optional(),
      maxPollInterval: duration().optional(),
      minPollGap: duration().optional(),
      parkedPollInterval: duration().optional(),
      attentionAfter: duration().optional(),
      pollsPerRun: z.number().int().min(1).max(10_000).optional(),
      pageSize: z.number().int().min(1).max(100).optional(),
    })
    .optional(),
});

export function parseSyncBatchInput(input: unknown): SyncBatchInput {
  const parsed = syncBatchInputSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.flatMap((issue): InputProblem[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), reason: 'is not a known field' }))
      : [{ field: issue.path.length > 0 ? fieldPath(issue.path) : '(input)', reason: issue.message }],
  );
  const [first, ...rest] = problems;
  throw new SaleInputError('sync batch input', [first ?? { field: '(input)', reason: 'is invalid' }, ...rest]);
}

// ---------------------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------------------

export type SyncBatchOperation = 'getState' | 'result' | 'reprocess' | 'dismiss';

/** The batch's workflow was looked for but the operation did not go through. */
export class SyncBatchOperationError extends Error {
  override readonly name = 'SyncBatchOperationError';

  constructor(
    readonly operation: SyncBatchOperation,
    readonly workflowId: string,
    /** not_found: no such execution; rejected: the workflow refused; timed_out: no answer yet (repeat it). */
    readonly failure: 'not_found' | 'rejected' | 'timed_out',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

export interface StartSyncBatchResult {
  workflowId: string;
  runId?: string;
  /** False when the batch's workflow was already running or had already completed: nothing new started. */
  started: boolean;
}

export interface SyncBatchClientOptions {
  /** Task queue of the workflow worker (default `sales`); the accounting calls go to the queue derived from it. */
  taskQueue?: string;
}

export class SyncBatchClient {
  private readonly taskQueue: string;

  constructor(
    private readonly client: Client,
    options: SyncBatchClientOptions = {},
  ) {
    this.taskQueue = options.taskQueue ?? SALE_TASK_QUEUE;
  }

  /**
   * Starts processing the batch, or finds the execution already started for it: running (conflict policy
   * USE_EXISTING) or completed (reuse policy ALLOW_DUPLICATE_FAILED_ONLY: a batch that completed is not processed
   * again; one whose workflow failed or was terminated can be started afresh).
   */
  async process(input: unknown): Promise<StartSyncBatchResult> {
    const batch = parseSyncBatchInput(input);
    const workflowId = syncBatchWorkflowId(batch.syncBatchId);
    const startRequest = randomUUID();
    try {
      const handle = await this.client.workflow.start<SyncBatchWorkflow>(SYNC_BATCH_WORKFLOW_TYPE, {
        taskQueue: this.taskQueue,
        workflowId,
        args: [batch],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        typedSearchAttributes: [{ key: NeedsAttention, value: false }],
        memo: { [START_REQUEST_MEMO]: startRequest },
        staticSummary: `sync batch ${batch.syncBatchId}${batch.companyId ? ` (company ${batch.companyId})` : ''}`,
      });
      const runId = handle.firstExecutionRunId;
      const { memo } = await this.client.workflow.getHandle(workflowId, runId).describe();
      return { workflowId, runId, started: memo?.[START_REQUEST_MEMO] === startRequest };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      const { runId } = await this.client.workflow.getHandle(workflowId).describe();
      return { workflowId, runId, started: false };
    }
  }

  handle(syncBatchId: string): WorkflowHandle<SyncBatchWorkflow> {
    return this.client.workflow.getHandle<SyncBatchWorkflow>(syncBatchWorkflowId(syncBatchId));
  }

  async getState(syncBatchId: string): Promise<SyncBatchState> {
    const handle = this.handle(syncBatchId);
    return this.run('getState', handle.workflowId, () => handle.query(getSyncBatchStateQuery));
  }

  /** Waits until the batch is done (every payment synced, or dismissed) and returns its summary. */
  async result(syncBatchId: string): Promise<SyncBatchSummary> {
    const handle = this.handle(syncBatchId);
    return this.run('result', handle.workflowId, () => handle.result());
  }

  /**
   * Processes the failed bill payments of a parked batch again. The update id names the situation acted on
   * (the count of process calls so far), so two clicks on one parking act once, and a later parking acts again.
   */
  async reprocess(syncBatchId: string, options: { updateId?: string } = {}): Promise<SyncBatchState> {
    const handle = this.handle(syncBatchId);
    const updateId = options.updateId ?? `reprocess:${(await this.getState(syncBatchId)).processCalls}`;
    return this.run('reprocess', handle.workflowId, () => handle.executeUpdate(reprocessSyncBatchUpdate, { updateId }));
  }

  /** Closes a parked batch leaving its failed payments as they are. */
  async dismiss(syncBatchId: string, reason: string, options: { updateId?: string } = {}): Promise<SyncBatchState> {
    const handle = this.handle(syncBatchId);
    const args = { reason };
    return this.run('dismiss', handle.workflowId, () => handle.executeUpdate(dismissSyncBatchUpdate, { args: [args], updateId: options.updateId ?? 'dismiss' }));
  }

  private async run<T>(operation: SyncBatchOperation, workflowId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new SyncBatchOperationError(operation, workflowId, 'rejected', `${operation} of ${workflowId} was refused: ${err.cause?.message ?? err.message}`, { cause: err });
      }
      if (err instanceof WorkflowNotFoundError) {
        throw new SyncBatchOperationError(operation, workflowId, 'not_found', `${operation}: ${workflowId} not found or already finished`, { cause: err });
      }
      if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
        throw new SyncBatchOperationError(operation, workflowId, 'timed_out', `${operation} of ${workflowId} got no answer in time and may still complete`, { cause: err });
      }
      throw err;
    }
  }
}

/**
 * A SyncBatchClient connected exactly as connectSalesClient connects (environment, temporal.toml profiles,
 * payload encryption keys); `close()` closes the connection.
 */
export async function connectSyncBatchClient(options: Parameters<typeof connectSalesClient>[0] = {}) {
  const connected = await connectSalesClient(options);
  const syncBatches = new SyncBatchClient(connected.client, options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue });
  return { syncBatches, client: connected.client, settings: connected.settings, close: connected.close };
}

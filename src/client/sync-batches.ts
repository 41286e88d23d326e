/**
 * The typed API other services use to have an accounting sync batch processed and followed to the end: one
 * workflow execution per batch id (`sync-batch:<id>`), so a second start finds the first. Input is validated
 * here first (a `SaleInputError` naming the field; nothing is sent).
 */
import type { WorkflowHandle } from '@temporalio/client';
import { checkInput } from '../contracts/sale-input.js';
import { NeedsAttention } from '../contracts/search-attributes.js';
import {
  SYNC_BATCH_WORKFLOW_TYPE,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchInputSchema,
  syncBatchWorkflowId,
  type SyncBatchInput,
  type SyncBatchState,
  type SyncBatchSummary,
} from '../contracts/sync-batch.js';
import { connectSalesClient } from './connect.js';
import { SaleInputError } from './errors.js';
import {
  runOperation,
  TaskQueueClient,
  type OperationFailure,
  type StartOrFindResult,
  type TaskQueueClientOptions,
} from './start-or-find.js';

export { SYNC_BATCH_WORKFLOW_TYPE, syncBatchWorkflowId };
export type { SyncBatchInput, SyncBatchState, SyncBatchSummary };

type SyncBatchWorkflow = (input: SyncBatchInput) => Promise<SyncBatchSummary>;

// ---------------------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------------------

export function parseSyncBatchInput(input: unknown): SyncBatchInput {
  const checked = checkInput(syncBatchInputSchema, input);
  if (checked.ok) return checked.value;
  throw new SaleInputError('sync batch input', checked.problems);
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
    readonly failure: OperationFailure,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

/** `started` is false when the batch's workflow was already running or had already completed: nothing new started. */
export type StartSyncBatchResult = StartOrFindResult;

/** `taskQueue`: of the workflow worker (default `sales`); the accounting calls go to the queue derived from it. */
export type SyncBatchClientOptions = TaskQueueClientOptions;

export class SyncBatchClient extends TaskQueueClient {
  /**
   * Starts processing the batch, or finds the execution already started for it: running (conflict policy
   * USE_EXISTING) or completed (reuse policy ALLOW_DUPLICATE_FAILED_ONLY: a batch that completed is not processed
   * again; one whose workflow failed or was terminated can be started afresh).
   */
  async process(input: unknown): Promise<StartSyncBatchResult> {
    const batch = parseSyncBatchInput(input);
    return this.startOrFind<SyncBatchWorkflow>(SYNC_BATCH_WORKFLOW_TYPE, {
      workflowId: syncBatchWorkflowId(batch.syncBatchId),
      args: [batch],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      typedSearchAttributes: [{ key: NeedsAttention, value: false }],
      staticSummary: `sync batch ${batch.syncBatchId}${batch.companyId ? ` (company ${batch.companyId})` : ''}`,
    });
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
    return this.run('dismiss', handle.workflowId, () =>
      handle.executeUpdate(dismissSyncBatchUpdate, { args: [args], updateId: options.updateId ?? 'dismiss' }),
    );
  }

  private async run<T>(operation: SyncBatchOperation, workflowId: string, call: () => Promise<T>): Promise<T> {
    return runOperation(call, (failure, reason, cause) => {
      const message = {
        rejected: `${operation} of ${workflowId} was refused: ${reason}`,
        not_found: `${operation}: ${workflowId} not found or already finished`,
        timed_out: `${operation} of ${workflowId} got no answer in time and may still complete`,
      }[failure];
      return new SyncBatchOperationError(operation, workflowId, failure, message, { cause });
    });
  }
}

/**
 * A SyncBatchClient connected exactly as connectSalesClient connects (environment, temporal.toml profiles,
 * payload encryption keys); `close()` closes the connection.
 */
export async function connectSyncBatchClient(options: Parameters<typeof connectSalesClient>[0] = {}) {
  const connected = await connectSalesClient(options);
  const syncBatches = new SyncBatchClient(
    connected.client,
    options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue },
  );
  return { syncBatches, client: connected.client, settings: connected.settings, close: connected.close };
}

// One workflow execution per batch id, so a second start finds the first.
import type { WorkflowHandle } from '@temporalio/client';
import { NeedsAttention } from '../contracts/search-attributes.js';
import {
  SYNC_BATCH_WORKFLOW_TYPE,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchSchemas,
  syncBatchWorkflowId,
  type SyncBatchInput,
  type SyncBatchState,
  type SyncBatchSummary,
} from '../contracts/sync-batch.js';
import { parseInput, WorkflowOperationError } from './errors.js';
import { connectSalesClient, runOperation, TaskQueueClient, type StartOrFindResult } from './sales-client.js';

type SyncBatchWorkflow = (input: SyncBatchInput) => Promise<SyncBatchSummary>;

export function parseSyncBatchInput(input: unknown): SyncBatchInput {
  return parseInput('sync batch input', syncBatchSchemas().input, input);
}

/** The id of a batch to act on, checked as a started batch's is: a blank one names no batch. */
export function parseSyncBatchId(syncBatchId: unknown): string {
  const schema = syncBatchSchemas().input.pick({ syncBatchId: true });
  return parseInput('sync batch reference', schema, { syncBatchId }).syncBatchId;
}

type SyncBatchOperation = 'getState' | 'result' | 'reprocess' | 'dismiss';

export class SyncBatchOperationError extends WorkflowOperationError<SyncBatchOperation> {
  override readonly name = 'SyncBatchOperationError';
}

export type StartSyncBatchResult = StartOrFindResult;

export class SyncBatchClient extends TaskQueueClient {
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
    return this.client.workflow.getHandle<SyncBatchWorkflow>(syncBatchWorkflowId(parseSyncBatchId(syncBatchId)));
  }

  async getState(syncBatchId: string): Promise<SyncBatchState> {
    return this.run('getState', syncBatchId, (handle) => handle.query(getSyncBatchStateQuery));
  }

  async result(syncBatchId: string): Promise<SyncBatchSummary> {
    return this.run('result', syncBatchId, (handle) => handle.result());
  }

  /** The update id names the parking acted on: two clicks on one act once, and a later parking acts again. */
  async reprocess(syncBatchId: string, options: { updateId?: string } = {}): Promise<SyncBatchState> {
    const updateId = options.updateId ?? `reprocess:${(await this.getState(syncBatchId)).processCalls}`;
    return this.run('reprocess', syncBatchId, (handle) => handle.executeUpdate(reprocessSyncBatchUpdate, { updateId }));
  }

  async dismiss(syncBatchId: string, reason: string, options: { updateId?: string } = {}): Promise<SyncBatchState> {
    return this.run('dismiss', syncBatchId, (handle) =>
      handle.executeUpdate(dismissSyncBatchUpdate, { args: [{ reason }], updateId: options.updateId ?? 'dismiss' }),
    );
  }

  private async run<T>(
    operation: SyncBatchOperation,
    syncBatchId: string,
    call: (handle: WorkflowHandle<SyncBatchWorkflow>) => Promise<T>,
  ): Promise<T> {
    const handle = this.handle(syncBatchId);
    return runOperation(SyncBatchOperationError, operation, handle.workflowId, () => call(handle));
  }
}

export async function connectSyncBatchClient(options: Parameters<typeof connectSalesClient>[0] = {}) {
  const { client, settings, close } = await connectSalesClient(options);
  return { syncBatches: new SyncBatchClient(client, options), client, settings, close };
}

import type { FastifyInstance } from 'fastify';
import { applicationOf } from '../auth.js';
import { forbidden, notFound } from '../errors.js';
import type { AccountingState } from '../state.js';

/** A10/A21: processing a sync batch; repeatable, and a batch of another application is refused. */
export function syncRoutes(app: FastifyInstance, state: AccountingState): void {
  app.post<{ Params: { syncBatchId: string } }>('/sync/batches/:syncBatchId/process', async (request) => {
    const { syncBatchId } = request.params;
    const batch = state.syncBatch(syncBatchId);
    if (!batch) throw notFound(`Sync batch ${syncBatchId} not found`);
    if (state.ownerOf(batch) !== applicationOf(request).id) {
      throw forbidden(`Not authorized for sync batch ${syncBatchId}`);
    }
    switch (state.startProcessing(batch)) {
      case 'started':
        return { message: `Sync batch ${syncBatchId} processing started` };
      case 'reprocessing':
        return { message: `Sync batch ${syncBatchId} processing started again for its failed bill payments` };
      case 'already_processing':
        return { message: `Sync batch ${syncBatchId} is already processing` };
      case 'already_processed':
        return { message: `Sync batch ${syncBatchId} was already processed (${batch.status})` };
    }
  });
}

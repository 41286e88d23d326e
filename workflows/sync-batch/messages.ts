import { ApplicationFailure, setHandler } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWebhookSignal,
} from '../../src/contracts/sync-batch.js';
import type { Batch } from './context.js';

function assertAllowed(allowed: boolean, message: string): void {
  if (!allowed) throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
}

/** The query, the webhook signal and the operator's updates. Validators refuse what the batch cannot do now. */
export function handleBatchMessages({ record, inbox, api, input }: Batch): void {
  const { state } = record;
  const parkedWithFailures = () =>
    state.parked !== null && state.failed.length > 0 && !inbox.reprocessing && inbox.dismissReason === undefined;

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
    {
      validator: () =>
        assertAllowed(
          parkedWithFailures(),
          'reprocess is possible only while the sync batch is parked with failed bill payments',
        ),
    },
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
        assertAllowed(
          parkedWithFailures(),
          'dismiss is possible only while the sync batch is parked with failed bill payments',
        );
        assertAllowed(typeof args?.reason === 'string' && args.reason.trim() !== '', 'a dismiss needs a reason');
      },
    },
  );
}

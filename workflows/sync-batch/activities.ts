import { proxyActivities } from '@temporalio/workflow';
import type { ListBillPaymentsPageInput } from '../../activities/accounting.js';
import { API_RETRY, accountingQueue, type ActivitiesOn } from '../activity-options.js';

/**
 * The accounting activities of one sync batch, on the accounting queue (its server-side rate limit is the fleet's
 * budget). Both calls are safe to repeat, so an outage is ridden out in activity retries, which add no history
 * events: a day before the workflow gives up.
 */
export function syncBatchActivities() {
  const api = proxyActivities<ActivitiesOn<'accounting'>>({
    taskQueue: accountingQueue(),
    startToCloseTimeout: '60 seconds',
    scheduleToCloseTimeout: '1 day',
    retry: API_RETRY,
  });
  return {
    /** `companyId`: whose accounting application processes the batch when several are served (absent: the one). */
    processSyncBatch: (syncBatchId: string, companyId: string | undefined) =>
      api.processSyncBatch.executeWithOptions({ summary: `process sync batch ${syncBatchId}` }, [
        { syncBatchId, ...(companyId ? { companyId } : {}) },
      ]),
    listBillPaymentsPage: (input: ListBillPaymentsPageInput) =>
      api.listBillPaymentsPage.executeWithOptions(
        {
          summary:
            `${input.status ?? 'all'} bill payments` +
            `${input.syncBatchId ? ` of ${input.syncBatchId}` : ''}, page ${input.page}`,
        },
        [input],
      ),
  };
}

export type SyncBatchApi = ReturnType<typeof syncBatchActivities>;

import { proxyActivities } from '@temporalio/workflow';
import type { ListBillPaymentsPageInput } from '../../activities/accounting.js';
import { API_RETRY, accountingQueue, type ActivitiesOn } from '../activity-options.js';

/** Both safe to repeat: an outage is ridden out in activity retries, which add no history events. */
export function syncBatchActivities() {
  const api = proxyActivities<ActivitiesOn<'accounting'>>({
    taskQueue: accountingQueue(),
    startToCloseTimeout: '60 seconds',
    retry: API_RETRY,
  });
  return {
    processSyncBatch: (syncBatchId: string, companyId: string | undefined) =>
      api.processSyncBatch.executeWithOptions({ summary: `process sync batch ${syncBatchId}` }, [
        { syncBatchId, ...(companyId ? { companyId } : {}) },
      ]),
    listBillPaymentsPage: (input: ListBillPaymentsPageInput) => {
      const batch = input.syncBatchId ? ` of ${input.syncBatchId}` : '';
      const summary = `${input.status ?? 'all'} bill payments${batch}, page ${input.page}`;
      return api.listBillPaymentsPage.executeWithOptions({ summary }, [input]);
    },
  };
}

export type SyncBatchApi = ReturnType<typeof syncBatchActivities>;

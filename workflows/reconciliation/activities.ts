import { proxyActivities } from '@temporalio/workflow';
import type { ListReconciliationPurchasesInput } from '../../activities/reconciliation.js';
import { API_RETRY, PRIORITY, accountingQueue, type ActivitiesOn } from '../activity-options.js';
import type { CallRoute } from '../placement.js';

/**
 * One request per activity, each with the summary an operator reads in the Temporal UI. Behind every sale on the
 * compliance queue, and behind the sync batches on the accounting queue: nobody waits for a reconciliation. A page
 * that finds no slot of the budget in 6 hours (the tills took all of it) fails the run; the next scheduled run reads
 * again.
 */
export function reconciliationActivities({ complianceQueue, fairnessKey }: CallRoute) {
  const options = {
    startToCloseTimeout: '60 seconds',
    scheduleToCloseTimeout: '6 hours',
    retry: API_RETRY,
    priority: { priorityKey: PRIORITY.background, fairnessKey },
  } as const;
  const compliance = proxyActivities<ActivitiesOn<'compliance'>>({ ...options, taskQueue: complianceQueue });
  const accounting = proxyActivities<ActivitiesOn<'accounting'>>({ ...options, taskQueue: accountingQueue() });
  return {
    checkBusiness: (businessId: string) =>
      compliance.checkReconciliationBusiness.executeWithOptions(
        { summary: `can the compliance key act for ${businessId}?` },
        [{ businessId }],
      ),
    checkCompanyPage: (companyId: string, page: number) =>
      accounting.checkReconciliationCompany.executeWithOptions(
        { summary: `is ${companyId} on companies page ${page}?` },
        [{ companyId, page }],
      ),
    purchasesPage: (input: ListReconciliationPurchasesInput, page: number) =>
      compliance.listReconciliationPurchases.executeWithOptions(
        { summary: `purchases of ${input.businessId}, page ${page}` },
        [input],
      ),
    billPaymentsPage: (companyId: string, page: number) =>
      accounting.listReconciliationBillPayments.executeWithOptions(
        { summary: `bill payments of ${companyId}, page ${page}` },
        [{ companyId, page }],
      ),
  };
}

export type ReconciliationApi = ReturnType<typeof reconciliationActivities>;

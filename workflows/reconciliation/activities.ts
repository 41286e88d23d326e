import type { ListReconciliationPurchasesInput } from '../../activities/reconciliation.js';
import { API_RETRY, PRIORITY, routedActivities, type RoutedActivityOptions } from '../activity-options.js';
import type { CallRoute } from '../placement.js';

/**
 * Every request waits behind every sale for its slot of the budget. A page that finds none in 6 hours (the
 * tills took all of it) fails the run; the next scheduled run reads again.
 */
const PAGE_OPTIONS: RoutedActivityOptions = {
  startToCloseTimeout: '60 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: API_RETRY,
  priority: { priorityKey: PRIORITY.background },
};

/**
 * One request per activity, each with the summary an operator reads in the Temporal UI. Behind every sale on the
 * compliance queue, and behind the sync batches on the accounting queue: nobody waits for a reconciliation.
 */
export function reconciliationActivities(route?: CallRoute) {
  // With its placement's route (workflows/placement.ts) its compliance calls spend its application's budget.
  const api = routedActivities(
    route === undefined
      ? PAGE_OPTIONS
      : {
          ...PAGE_OPTIONS,
          priority: { ...PAGE_OPTIONS.priority, fairnessKey: route.fairnessKey },
          complianceQueue: route.complianceQueue,
        },
  );
  return {
    checkBusiness: (businessId: string) =>
      api.checkReconciliationBusiness.executeWithOptions({ summary: `can the compliance key act for ${businessId}?` }, [
        { businessId },
      ]),
    checkCompanyPage: (companyId: string, page: number) =>
      api.checkReconciliationCompany.executeWithOptions({ summary: `is ${companyId} on companies page ${page}?` }, [
        { companyId, page },
      ]),
    purchasesPage: (input: ListReconciliationPurchasesInput, page: number) =>
      api.listReconciliationPurchases.executeWithOptions(
        { summary: `purchases of ${input.businessId}, page ${page}` },
        [input],
      ),
    billPaymentsPage: (companyId: string, page: number) =>
      api.listReconciliationBillPayments.executeWithOptions(
        { summary: `bill payments of ${companyId}, page ${page}` },
        [{ companyId, page }],
      ),
  };
}

export type ReconciliationApi = ReturnType<typeof reconciliationActivities>;

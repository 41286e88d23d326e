import { patched, proxyLocalActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { SINGLE_KEY_APPLICATION, type BudgetPlacement } from '../src/contracts/budget-placement.js';
import { Application } from '../src/contracts/search-attributes.js';
import { windowComplianceTaskQueue } from '../src/contracts/task-queues.js';

/**
 * 0.7, each application held to its own budget (issue 16): a workflow asks the worker which application serves its
 * business (a local activity: no key enters its history), writes it as its `Application` search attribute, and its
 * compliance calls carry that application's fairness key. Workflows started before it replay without asking; their
 * calls keep the business as their fairness key.
 */
export const APPLICATION_BUDGET_PATCH = 'application-budget';

const { placeBusiness } = proxyLocalActivities<Pick<Activities, 'placeBusiness'>>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/**
 * The placement of the business's compliance calls, or undefined for a workflow started before the patch (its
 * fairness key stays the business). `newWork` refuses a business no application serves now: the refusal is a
 * non-retryable `business_not_served` activity failure, which a sale parks on.
 */
export async function placeOnBudget(businessId: string, newWork: boolean): Promise<BudgetPlacement | undefined> {
  if (!patched(APPLICATION_BUDGET_PATCH)) return undefined;
  const placement = await placeBusiness({ businessId, newWork });
  // A single-key worker's one application says nothing an operator could filter by: one history event saved per sale.
  if (placement.application !== null && placement.application !== SINGLE_KEY_APPLICATION) {
    upsertSearchAttributes([{ key: Application, value: placement.application }]);
  }
  return placement;
}

/** Where a workflow's compliance calls go: their fairness key, and the window's own queue when it has one. */
export interface CallRoute {
  fairnessKey: string;
  complianceQueue?: string | undefined;
}

/** The route of a business's compliance calls: its placement's, else (before the patch) the business on the shared queue. */
export function callRouteOf(businessId: string, placement: BudgetPlacement | undefined): CallRoute {
  if (!placement) return { fairnessKey: businessId };
  const complianceQueue =
    placement.ownQueue === undefined
      ? undefined
      : windowComplianceTaskQueue(workflowInfo().taskQueue, placement.ownQueue);
  return { fairnessKey: placement.fairnessKey, complianceQueue };
}

import { proxyLocalActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { SINGLE_KEY_APPLICATION } from '../src/contracts/budget-placement.js';
import { Application } from '../src/contracts/search-attributes.js';
import { complianceTaskQueue, windowComplianceTaskQueue } from '../src/contracts/task-queues.js';

const { placeBusiness } = proxyLocalActivities<Pick<Activities, 'placeBusiness'>>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/** The queue of the rate window serving the business (shared, or the window's own) and the fairness key. */
export interface CallRoute {
  complianceQueue: string;
  fairnessKey: string;
  /** The window's budget, when known. */
  requestsPerMinute?: number;
}

/**
 * Which application serves the business (a local activity: no key enters the history), written as `Application`.
 * `newWork` refuses a business none serves now (`business_not_served`, non-retryable): a sale parks on it.
 */
export async function placeOnBudget(businessId: string, newWork: boolean): Promise<CallRoute> {
  const placement = await placeBusiness({ businessId, newWork });
  // A single-key worker's one application says nothing an operator could filter by: one history event saved per sale.
  if (placement.application !== null && placement.application !== SINGLE_KEY_APPLICATION)
    upsertSearchAttributes([{ key: Application, value: placement.application }]);
  const { taskQueue } = workflowInfo();
  return {
    complianceQueue:
      placement.ownQueue === undefined
        ? complianceTaskQueue(taskQueue)
        : windowComplianceTaskQueue(taskQueue, placement.ownQueue),
    fairnessKey: placement.fairnessKey,
    ...(placement.requestsPerMinute === undefined ? {} : { requestsPerMinute: placement.requestsPerMinute }),
  };
}

/** The shared compliance queue, the business as fairness key: a workflow's route until it is placed. */
export function unplacedRoute(businessId: string): CallRoute {
  return { complianceQueue: complianceTaskQueue(workflowInfo().taskQueue), fairnessKey: businessId };
}

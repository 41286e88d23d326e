import { proxyLocalActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { SINGLE_KEY_APPLICATION } from '../src/contracts/budget-placement.js';
import { Application } from '../src/contracts/search-attributes.js';
import { complianceTaskQueue, windowComplianceTaskQueue } from '../src/contracts/task-queues.js';

const { placeBusiness } = proxyLocalActivities<Pick<Activities, 'placeBusiness'>>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/**
 * Where a workflow's compliance calls go: the queue of the rate window that serves its business (the shared
 * compliance queue, or the window's own when it serves several businesses), and the fairness key they queue by.
 */
export interface CallRoute {
  complianceQueue: string;
  fairnessKey: string;
}

/**
 * Asks the worker which application serves the business (a local activity: no key enters the history), and writes
 * it as the `Application` search attribute. `newWork` refuses a business no application serves now: a
 * non-retryable `business_not_served` failure, which a sale parks on.
 */
export async function placeOnBudget(businessId: string, newWork: boolean): Promise<CallRoute> {
  const placement = await placeBusiness({ businessId, newWork });
  // A single-key worker's one application says nothing an operator could filter by: one history event saved per sale.
  if (placement.application !== null && placement.application !== SINGLE_KEY_APPLICATION) {
    upsertSearchAttributes([{ key: Application, value: placement.application }]);
  }
  const { taskQueue } = workflowInfo();
  return {
    complianceQueue:
      placement.ownQueue === undefined
        ? complianceTaskQueue(taskQueue)
        : windowComplianceTaskQueue(taskQueue, placement.ownQueue),
    fairnessKey: placement.fairnessKey,
  };
}

/** The shared compliance queue, the business as fairness key: a workflow's route until it is placed. */
export function unplacedRoute(businessId: string): CallRoute {
  return { complianceQueue: complianceTaskQueue(workflowInfo().taskQueue), fairnessKey: businessId };
}

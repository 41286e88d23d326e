import { workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ACTIVITY_QUEUES } from '../src/contracts/task-queues.js';
import { accountingTaskQueue, type ActivityName, type ActivityQueue } from '../src/contracts/task-queues.js';

/** The activities the contract puts on one queue (ACTIVITY_QUEUES): a proxy of one queue offers only those. */
export type ActivitiesOn<Q extends ActivityQueue> = Pick<
  Activities,
  { [K in ActivityName]: (typeof ACTIVITY_QUEUES)[K] extends Q ? K : never }[ActivityName]
>;

/** Every API call: transient faults retried with backoff; a 429 sets its own delay from `Retry-After`. */
export const API_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/** Priority keys on the rate-limited compliance queue: when the budget is contended, lower goes first. */
export const PRIORITY = {
  /** Sales and credit notes: a customer is waiting at the till. */
  signing: 1,
  /** Reading an outcome the authority has not given yet. */
  polling: 2,
  /** Catalogue and stock calls. */
  bookkeeping: 3,
  /** The scheduled supplier-invoice sync: catching up can wait for any till. */
  purchases: 4,
  /** Work nobody waits for (the scheduled reconciliation, catalogue imports): only what the others leave. */
  background: 5,
} as const;

/** The accounting queue of this workflow's deployment. */
export function accountingQueue(): string {
  return accountingTaskQueue(workflowInfo().taskQueue);
}

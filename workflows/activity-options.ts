import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { complianceTaskQueue } from './definitions.js';

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
} as const;

/** Activities that call the compliance service, on the rate-limited queue derived from the caller's own queue. */
export function complianceActivities(ownTaskQueue: string, priorityKey: number, scheduleToCloseTimeout: string | number) {
  return proxyActivities<Activities>({
    taskQueue: complianceTaskQueue(ownTaskQueue),
    startToCloseTimeout: '60 seconds',
    scheduleToCloseTimeout,
    retry: API_RETRY,
    priority: { priorityKey },
  });
}

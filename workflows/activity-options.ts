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

/**
 * For activities whose every wait is an API call (callApi heartbeats a third of this while one is out): a call lost
 * with a killed worker is sent again after this, not after its start-to-close timeout.
 */
export const CALL_HEARTBEAT_TIMEOUT = '10 seconds';

export function accountingQueue(): string {
  return accountingTaskQueue(workflowInfo().taskQueue);
}

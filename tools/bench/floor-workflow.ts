/**
 * The latency floor: the least a workflow can do and still reach a service, one activity on the workflow's own
 * task queue. The bench times it exactly as it times a sale (client start → the workflow task that records the result).
 */
import { proxyActivities } from '@temporalio/workflow';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import type { FloorActivities } from './floor-activity.js';

export const FLOOR_WORKFLOW_TYPE = 'floorWorkflow';
/** The floor beside the product's workers in the throughput section's worker processes. */
export const FLOOR_QUEUE = `${WORKFLOW_TASK_QUEUE}.floor`;

const eager = proxyActivities<FloorActivities>({ startToCloseTimeout: '30 seconds' });
// The server hands an activity on the workflow's own queue to the worker in its answer to the workflow task (eager
// dispatch), a step no call on a rate-limited queue can skip: the SDK never asks for it there, and the server would
// not count it against the queue's rate. `matched` makes the floor's call wait for the server's matching as a budgeted
// call does.
const matched = proxyActivities<FloorActivities>({ startToCloseTimeout: '30 seconds', allowEagerDispatch: false });

export async function floorWorkflow(options: { matched?: boolean } = {}): Promise<number> {
  return (options.matched ? matched : eager).readLookup();
}

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

const { readLookup } = proxyActivities<FloorActivities>({ startToCloseTimeout: '30 seconds' });

export async function floorWorkflow(): Promise<number> {
  return readLookup();
}

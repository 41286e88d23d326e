/**
 * A till's latency as the till feels it: one update-with-start call (start the sale and ask `awaitReceipt`) until the
 * receipt values are in its hands, next to `executeWorkflow` of the floor workflow until its result is in the
 * caller's hands. Both end in the caller's hands, so the ratio compares like with like (the other latency figures end
 * at the moment the history records the result).
 */
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  awaitReceiptUpdate,
  SALE_WORKFLOW_TYPE,
  saleWorkflowId,
  type ReceiptAnswer,
  type SaleInput,
} from '../../src/contracts/sale.js';
import { salePriority } from '../../src/client/sale-start.js';
import type { BenchTemporal, BenchWorkers } from './env.js';
import { benchSale, NAIROBI_LINES } from './env.js';
import { segmentsToCaller, type Segment } from './history.js';

export interface TimedCall {
  ms: number;
  /** Where the time went, from the history, ending in the caller's hands. */
  path: Segment[];
}

/**
 * The call a till makes, in any SDK: the sale's input twice (to start it, and so a found sale's input is checked), at
 * a till's priority.
 */
export function tillCall(t: BenchTemporal, taskQueue: string, input: SaleInput): Promise<ReceiptAnswer> {
  const workflowId = saleWorkflowId(input.businessId, input.traderInvoiceNumber);
  return t.client.workflow.executeUpdateWithStart(awaitReceiptUpdate, {
    args: [{ wait: '60 seconds', input }],
    startWorkflowOperation: new WithStartWorkflowOperation(SALE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      priority: salePriority(input),
    }),
  });
}

/** One till sale: the call's milliseconds and its steps; the sale is left to close (untimed) so the next runs alone. */
export async function timeTill(t: BenchTemporal, w: BenchWorkers, tin: string): Promise<TimedCall> {
  const input = benchSale(tin, NAIROBI_LINES);
  const workflowId = saleWorkflowId(input.businessId, input.traderInvoiceNumber);
  const clientStart = Date.now();
  const t0 = performance.now();
  const answer = await tillCall(t, w.taskQueue, input);
  const ms = performance.now() - t0;
  const inHands = Date.now();
  if (!answer.signed || !answer.receipt?.signature)
    throw new Error(`till sale ${tin}: awaitReceipt answered without a signed receipt (step ${answer.state.step})`);
  await t.client.workflow.getHandle(workflowId).result();
  const events = await t.events(workflowId);
  return {
    ms,
    path: segmentsToCaller(events, clientStart, (e) => e.type === 'WORKFLOW_EXECUTION_UPDATE_COMPLETED', inHands),
  };
}

/** One floor workflow by `executeWorkflow`: start → result in the caller's hands. */
export async function timeFloorExecute(t: BenchTemporal, w: BenchWorkers, matched = false): Promise<TimedCall> {
  const clientStart = Date.now();
  const t0 = performance.now();
  const { workflowId } = await w.executeFloor(matched);
  const ms = performance.now() - t0;
  const inHands = Date.now();
  const events = await t.events(workflowId);
  return { ms, path: segmentsToCaller(events, clientStart, (e) => e.type === 'WORKFLOW_EXECUTION_COMPLETED', inHands) };
}

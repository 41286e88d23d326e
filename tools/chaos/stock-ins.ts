/**
 * The stock-ins of a chaos run, as the settle step sees them: each running `stockInWorkflow`'s `getState`, to know
 * whether it has been told every invoice's last review status. Like the ledgers' state, it only says when to judge:
 * a stock-in that has not heard of a review yet may still move stock. The checker never reads it.
 */
import type { Client } from '@temporalio/client';
import { STOCK_IN_WORKFLOW_TYPE, getStockInStateQuery, type StockInState } from '../../src/contracts/stock-in.js';

export const RUNNING_STOCK_INS_QUERY = `WorkflowType = '${STOCK_IN_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;

/** Every running stock-in's state; throws when the server or a query cannot answer (the caller tries again). */
export async function readStockIns(client: Client): Promise<StockInState[]> {
  const states: StockInState[] = [];
  for await (const execution of client.workflow.list({ query: RUNNING_STOCK_INS_QUERY })) {
    states.push(await client.workflow.getHandle(execution.workflowId).query(getStockInStateQuery));
  }
  return states;
}

/**
 * The invoices the stock-in has not caught up with: confirmed in the sandbox now and not confirmed as far as it was
 * told, or the other way round. Only reaching and leaving `confirmed` is told (and moves stock): an invoice never
 * confirmed is unknown to it, and one taken back to `pending_review` and then rejected stays `pending_review` there.
 */
export function untold(
  states: ReadonlyArray<{ businessId: string; invoices: ReadonlyArray<{ purchaseId: string; status: string }> }>,
  recorded: ReadonlyArray<{ businessId: string; purchase: { id: string; status: string } }>,
): string[] {
  const heard = new Map(
    states.flatMap((s) => s.invoices.map((inv) => [`${s.businessId}|${inv.purchaseId}`, inv.status] as const)),
  );
  return recorded
    .filter(({ businessId, purchase }) => {
      const confirmedThere = heard.get(`${businessId}|${purchase.id}`) === 'confirmed';
      return confirmedThere !== (purchase.status === 'confirmed');
    })
    .map(({ purchase }) => purchase.id);
}

/** The stock-ins' own counts: reported beside the verdict (what the run exercised), never checked. */
export interface StockInCounts {
  stockIns: number;
  linesAdded: number;
  linesTakenBack: number;
  /** Confirmations after the first, over every invoice: what was added again after a take-back. */
  confirmedAgain: number;
  linesWaiting: number;
}

export function stockInCounts(
  states: ReadonlyArray<Pick<StockInState, 'totals'> & { invoices: ReadonlyArray<{ round: number }> }>,
): StockInCounts {
  return {
    stockIns: states.length,
    linesAdded: states.reduce((n, s) => n + s.totals.linesAdded, 0),
    linesTakenBack: states.reduce((n, s) => n + s.totals.linesTakenBack, 0),
    confirmedAgain: states.reduce((n, s) => n + s.invoices.reduce((r, inv) => r + Math.max(0, inv.round - 1), 0), 0),
    linesWaiting: states.reduce((n, s) => n + s.totals.linesWaiting, 0),
  };
}

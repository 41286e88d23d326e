import { ActivityFailure, ApplicationFailure, TimeoutFailure, sleep } from '@temporalio/workflow';
import type { AdjustStockResult } from '../../activities/types.js';
import { count } from '../metrics.js';
import { NON_RESTOCKING_REASONS } from '../../src/contracts/compliance-rules.js';
import { isAmbiguousWrite } from '../../src/contracts/failures.js';
import { adjustStockInput, provablyNotTaken, retryDelayMs } from '../stock-ledger/send.js';
import { type RefundRequest, type StockMovementState } from '../../src/contracts/sale.js';
import { stockReferenceId } from '../keys.js';
import type { SaleContext } from './context.js';

function newMovement(
  referenceId: string,
  itemId: string,
  action: 'ADD' | 'DEDUCT',
  quantity: number,
  unitPrice: number,
): StockMovementState {
  return { referenceId, itemId, action, quantity, unitPrice, status: 'pending' };
}

/** One deduction per stock-tracked line of the sale, referenced by the sale's key and the line's position. */
export function deductions(ctx: SaleContext, saleKey: string, stockTracked: Set<string>): StockMovementState[] {
  return ctx.input.lines.flatMap((line, index) =>
    stockTracked.has(line.itemId)
      ? [newMovement(stockReferenceId(saleKey, index, 'DEDUCT'), line.itemId, 'DEDUCT', line.quantity, line.unitPrice)]
      : [],
  );
}

/** Goods that come back on the shelf with a refund: every deduction, unless they were damaged or wasted. */
export function restocking(ctx: SaleContext, creditNoteKey: string, request: RefundRequest): StockMovementState[] {
  const restock = (request.restock ?? true) && !NON_RESTOCKING_REASONS.includes(request.reason);
  if (!restock) return [];
  return ctx.record.state.stockMovements
    .filter((m) => m.action === 'DEDUCT')
    .map((m, index) =>
      newMovement(stockReferenceId(creditNoteKey, index, 'ADD'), m.itemId, 'ADD', m.quantity, m.unitPrice),
    );
}

/**
 * Since 0.8: hands the lines to the branch's stock ledger, the one writer of its stock, which sends them (merged with
 * other sales' lines while the budget is contended) and settles their lost answers itself; the sale learns which
 * movement carried each line by the ledger's `stockCarried` signal.
 */
export async function handOverStock(
  ctx: SaleContext,
  movements: StockMovementState[],
  stayingOpen: boolean,
): Promise<void> {
  if (movements.length === 0) return;
  const { input } = ctx;
  const lines = movements.map((m) => ({
    // Only a sale still open to hear it is told which movement carried the line: a signal to a closed one is wasted.
    ...(stayingOpen ? { tellSale: true } : {}),
    lineId: m.referenceId,
    saleWorkflowId: ctx.workflowId,
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
  }));
  const { ledgerWorkflowId } = await ctx.api.ledger.handOverStock({
    businessId: input.businessId,
    ...(input.branchId ? { branchId: input.branchId } : {}),
    lines,
    taskQueue: ctx.taskQueue,
  });
  for (const m of movements) {
    if (m.status !== 'pending') continue;
    m.status = 'handed_over';
    m.ledger = ledgerWorkflowId;
  }
}

/**
 * Sends every pending movement once. The service does not de-duplicate movements, so a failure after sending
 * is never retried blindly: the movement waits for an operator to confirm it or to ask for a re-send.
 */
export async function reportPendingStock(ctx: SaleContext): Promise<void> {
  ctx.inbox.stockWork = false;
  const pending = ctx.record.state.stockMovements.filter((x) => x.status === 'pending');
  if (ctx.lean) {
    // Together: one workflow task for all of them, and the order of independent movements does not matter.
    await Promise.all(pending.map((m) => reportMovement(ctx, m)));
  } else {
    for (const m of pending) await reportMovement(ctx, m);
  }
  ctx.record.refreshAttention();
}

async function reportMovement(ctx: SaleContext, m: StockMovementState): Promise<void> {
  const { record } = ctx;
  try {
    const result = await sendMovement(ctx, m);
    m.status = 'reported';
    m.movementId = result.movementId;
  } catch (err) {
    const problem = operatorProblem(ctx, err);
    if (problem === undefined) throw err;
    m.status = 'needs_confirmation';
    m.problem = problem;
    record.note(`stock movement ${m.referenceId} needs an operator`);
    count('etims_stock_movements_needing_operator', { action: m.action });
  }
}

/** What an operator is told about a movement that failed; undefined for a failure that is not the movement's. */
function operatorProblem(ctx: SaleContext, err: unknown): string | undefined {
  if (!(err instanceof ActivityFailure)) return undefined;
  const { cause } = err;
  const uncertain =
    cause instanceof ApplicationFailure
      ? // Since 0.4 a retryable failure reaches here only when it may have been taken (sendMovement tried the others again).
        isAmbiguousWrite(cause.type) || (ctx.lean && !cause.nonRetryable)
      : // Since 0.4 an attempt that timed out (its worker died or hung, maybe after sending) is as uncertain.
        ctx.lean && cause instanceof TimeoutFailure;
  if (uncertain)
    return 'the service may or may not have recorded this movement: confirm it in the dashboard, or re-send it';
  if (cause instanceof ApplicationFailure)
    return `the service refused the movement (${cause.type ?? 'error'}): fix it, then re-send or confirm`;
  return undefined;
}

/**
 * One movement. Since 0.4 every attempt is an activity of its own, and only a failure that proves the request never
 * reached the service (rate limited, never sent) is tried again, after the delay it asked for; anything else, a
 * timed-out attempt included, goes to an operator: the service does not de-duplicate movements.
 */
async function sendMovement(ctx: SaleContext, m: StockMovementState): Promise<AdjustStockResult> {
  const { input, api } = ctx;
  const movement = adjustStockInput(input.businessId, input.branchId, m);
  if (!ctx.lean) return api.bookkeeping.adjustStock(movement);
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.stockWrites.adjustStock(movement);
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (!(cause instanceof ApplicationFailure) || !provablyNotTaken(cause)) throw err;
      await sleep(retryDelayMs(cause, attempt));
    }
  }
}

import { ActivityFailure, ApplicationFailure, metricMeter } from '@temporalio/workflow';
import { METRICS } from '../../src/temporal/metric-names.js';
import { NON_RESTOCKING_REASONS } from '../../src/compliance/rules.js';
import { isAmbiguousWrite, type RefundRequest, type StockMovementState } from '../definitions.js';
import { stockReferenceId } from '../keys.js';
import type { SaleContext } from './context.js';

function newMovement(referenceId: string, itemId: string, action: 'ADD' | 'DEDUCT', quantity: number, unitPrice: number): StockMovementState {
  return { referenceId, itemId, action, quantity, unitPrice, status: 'pending' };
}

/** One deduction per stock-tracked line of the sale, referenced by the sale's key and the line's position. */
export function deductions(ctx: SaleContext, saleKey: string, stockTracked: Set<string>): StockMovementState[] {
  return ctx.input.lines.flatMap((line, index) =>
    stockTracked.has(line.itemId) ? [newMovement(stockReferenceId(saleKey, index, 'DEDUCT'), line.itemId, 'DEDUCT', line.quantity, line.unitPrice)] : [],
  );
}

/** Goods that come back on the shelf with a refund: every deduction, unless they were damaged or wasted. */
export function restocking(ctx: SaleContext, creditNoteKey: string, request: RefundRequest): StockMovementState[] {
  const restock = (request.restock ?? true) && !NON_RESTOCKING_REASONS.includes(request.reason);
  if (!restock) return [];
  return ctx.record.state.stockMovements
    .filter((m) => m.action === 'DEDUCT')
    .map((m, index) => newMovement(stockReferenceId(creditNoteKey, index, 'ADD'), m.itemId, 'ADD', m.quantity, m.unitPrice));
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
  const { input, record, api } = ctx;
  try {
    const result = await api.bookkeeping.adjustStock({
      businessId: input.businessId,
      itemId: m.itemId,
      action: m.action,
      quantity: m.quantity,
      unitPrice: m.unitPrice,
      referenceId: m.referenceId,
      ...(input.branchId ? { branchId: input.branchId } : {}),
    });
    record.countCalls(result.apiCalls);
    m.status = 'reported';
    m.movementId = result.movementId;
  } catch (err) {
    if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) throw err;
    record.countCalls(1);
    m.status = 'needs_confirmation';
    m.problem = isAmbiguousWrite(err.cause.type)
      ? 'the service may or may not have recorded this movement: confirm it in the dashboard, or re-send it'
      : `the service refused the movement (${err.cause.type ?? 'error'}): fix it, then re-send or confirm`;
    record.note(`stock movement ${m.referenceId} needs an operator`);
    metricMeter.createCounter(METRICS.stockMovementsNeedingOperator).add(1, { action: m.action });
  }
}

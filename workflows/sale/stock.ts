import { NON_RESTOCKING_REASONS } from '../../src/contracts/compliance-rules.js';
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
 * Hands the lines to the branch's stock ledger, the one writer of its stock, which sends them (merged with other
 * sales' lines while the budget is contended) and settles their lost answers itself; a sale `stayingOpen` learns
 * which movement carried each line by the ledger's `stockCarried` signal.
 */
export async function handOverStock(
  ctx: SaleContext,
  movements: StockMovementState[],
  stayingOpen: boolean,
): Promise<void> {
  if (movements.length === 0) return;
  const { input } = ctx;
  const lines = movements.map((m) => ({
    ...(stayingOpen ? { tellSale: true } : {}),
    lineId: m.referenceId,
    saleWorkflowId: ctx.workflowId,
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
  }));
  const { ledgerWorkflowId } = await ctx.api.handOverStock({
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

import type { StockMovementState } from '../../src/contracts/sale.js';
import type { StockLine } from '../../src/contracts/stock-ledger.js';
import type { DocumentContext } from './context.js';

export function movement(
  referenceId: string,
  { itemId, action, quantity, unitPrice }: Pick<StockMovementState, 'itemId' | 'action' | 'quantity' | 'unitPrice'>,
): StockMovementState {
  return { referenceId, itemId, action, quantity, unitPrice, status: 'pending' };
}

/** The lines the branch's stock ledger moves: the process closes once they are handed over, nobody is told after. */
export function stockLines(ctx: DocumentContext, movements: readonly StockMovementState[]): StockLine[] {
  return movements.map((m) => ({
    lineId: m.referenceId,
    saleWorkflowId: ctx.workflowId,
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
  }));
}

/** To the branch's stock ledger, unless `ledgerWorkflowId` already took them (the signing activity hands over). */
export async function handOverStock(
  ctx: DocumentContext,
  movements: StockMovementState[],
  ledgerWorkflowId?: string,
): Promise<void> {
  if (movements.length === 0) return;
  const { input } = ctx;
  ledgerWorkflowId ??= (
    await ctx.api.handOverStock({
      businessId: input.businessId,
      ...(input.branchId ? { branchId: input.branchId } : {}),
      lines: stockLines(ctx, movements),
      taskQueue: ctx.taskQueue,
    })
  ).ledgerWorkflowId;
  for (const m of movements) {
    m.status = 'handed_over';
    m.ledger = ledgerWorkflowId;
  }
}

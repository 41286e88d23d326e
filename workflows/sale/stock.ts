import { ActivityFailure, ApplicationFailure, TimeoutFailure, sleep } from '@temporalio/workflow';
import type { AdjustStockResult } from '../../activities/types.js';
import { count } from '../metrics.js';
import { NON_RESTOCKING_REASONS } from '../../src/contracts/compliance-rules.js';
import { FAILURE_TYPES, isAmbiguousWrite } from '../../src/contracts/failures.js';
import { type RefundRequest, type StockMovementState } from '../../src/contracts/sale.js';
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
  const { record } = ctx;
  try {
    const result = await sendMovement(ctx, m);
    record.countCalls(result.apiCalls);
    m.status = 'reported';
    m.movementId = result.movementId;
  } catch (err) {
    const problem = operatorProblem(ctx, err);
    if (problem === undefined) throw err;
    record.countCalls(1);
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
  if (uncertain) return 'the service may or may not have recorded this movement: confirm it in the dashboard, or re-send it';
  if (cause instanceof ApplicationFailure) return `the service refused the movement (${cause.type ?? 'error'}): fix it, then re-send or confirm`;
  return undefined;
}

/**
 * One movement. Since 0.4 every attempt is an activity of its own, and only a failure that proves the request never
 * reached the service (rate limited, never sent) is tried again, after the delay it asked for; anything else, a
 * timed-out attempt included, goes to an operator: the service does not de-duplicate movements.
 */
async function sendMovement(ctx: SaleContext, m: StockMovementState): Promise<AdjustStockResult> {
  const { input, api } = ctx;
  const movement = {
    businessId: input.businessId,
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
    referenceId: m.referenceId,
    ...(input.branchId ? { branchId: input.branchId } : {}),
  };
  if (!ctx.lean) return api.bookkeeping.adjustStock(movement);
  let failedCalls = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await api.stockWrites.adjustStock(movement);
      return { ...result, apiCalls: result.apiCalls + failedCalls };
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (!(cause instanceof ApplicationFailure) || !provablyNotTaken(cause)) throw err;
      failedCalls++;
      await sleep(retryDelayMs(cause, attempt));
    }
  }
}

/** A 429 (the service took nothing), or a failure the activity reports as never having reached the service. */
function provablyNotTaken(failure: ApplicationFailure): boolean {
  if (failure.nonRetryable) return false;
  if (failure.type === FAILURE_TYPES.rateLimited) return true;
  const detail = failure.details?.[0] as { requestSent?: unknown } | undefined;
  return detail?.requestSent === false;
}

/** A 429's Retry-After (activities/failures.ts puts it in the details), else the API retry policy's backoff. */
function retryDelayMs(failure: ApplicationFailure, attempt: number): number {
  const detail = failure.details?.[0] as { retryAfterSeconds?: unknown } | undefined;
  const retryAfter = typeof detail?.retryAfterSeconds === 'number' ? detail.retryAfterSeconds : undefined;
  return retryAfter !== undefined ? Math.max(1, retryAfter) * 1000 : Math.min(1000 * 2 ** (attempt - 1), 60_000);
}

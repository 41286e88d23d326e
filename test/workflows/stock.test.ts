import { afterEach, describe, expect, it } from 'vitest';
import type { FaultRuleInput } from '../../sandbox/shared/faults.js';
import { NeedsAttention } from '../../src/contracts/search-attributes.js';
import { confirmStockMovementUpdate, resendStockMovementUpdate, type SaleState } from '../../src/contracts/sale.js';
import { DEMO, expectUpdateRefused, saleInput, searchAttribute, useSaleHarness } from './harness.js';

const h = useSaleHarness();
afterEach(async () => {
  await h.sandbox.inspector.clearFaults();
});

const STOCK = { service: 'compliance', method: 'POST', path: '/v1/stock/adjustments' } as const;
const nairobi = DEMO.businesses.nairobi;

/** One stock-tracked line, so the one movement is the one the fault hits. */
const oneLineSale = () => saleInput({ lines: [{ itemId: DEMO.items.cookingOil, quantity: 3, unitPrice: 389.99 }] });

async function oilOnHand(): Promise<number> {
  const levels = await h.sandbox.inspector.stockLevels(nairobi);
  return levels.find((l) => l.itemId === DEMO.items.cookingOil && l.branchId === DEMO.branches.nairobiCbd)?.quantity ?? 0;
}

async function postsSince(since: number, route: string) {
  return (await h.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter((r) => r.method === 'POST' && r.route === route);
}

/** Starts a one-line sale with `fault` on the stock endpoint and waits until its movement needs an operator. */
async function saleWithAmbiguousMovement(fault: Omit<FaultRuleInput, keyof typeof STOCK>) {
  await h.sandbox.inspector.addFault({ ...STOCK, times: 1, ...fault });
  const since = Date.now();
  const before = await oilOnHand();
  const handle = await h.start(oneLineSale());
  const waiting: SaleState = await h.waitFor(handle, (s) => s.stockMovements.some((m) => m.status === 'needs_confirmation'));
  const movement = waiting.stockMovements[0]!;
  return { handle, since, before, waiting, movement };
}

describe('stock movements after signing', () => {
  it('parks a movement whose answer was lost after the service recorded it, never re-sends it, and closes on confirmation', async () => {
    const { handle, since, before, waiting, movement } = await saleWithAmbiguousMovement({ kind: 'commit-then-fail', status: 503 });
    expect(movement).toMatchObject({ action: 'DEDUCT', quantity: 3, status: 'needs_confirmation' });
    expect(movement.problem).toMatch(/may or may not have recorded/);
    expect(waiting.sale?.status).toBe('completed');
    expect(await searchAttribute(handle, NeedsAttention)).toBe(true);

    // It stays open and does not try again by itself (for 30 days of waiting, see sale-logic.test.ts).
    expect((await h.state(handle)).step).toBe('reporting_stock');
    expect(await postsSince(since, '/v1/stock/adjustments')).toHaveLength(1);
    expect(await h.sandbox.inspector.stockMovements({ referenceId: movement.referenceId })).toHaveLength(1);
    expect(await oilOnHand()).toBe(before - 3);

    // The operator sees the movement in the dashboard and confirms it.
    await handle.executeUpdate(confirmStockMovementUpdate, { args: [{ referenceId: movement.referenceId }] });
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.stockMovements[0]).toMatchObject({ referenceId: movement.referenceId, status: 'confirmed' });
    expect(state.stockMovements[0]?.problem).toBeUndefined();
    expect(await searchAttribute(handle, NeedsAttention)).toBe(false);
    expect(await h.sandbox.inspector.stockMovements({ referenceId: movement.referenceId })).toHaveLength(1);
    expect(await oilOnHand()).toBe(before - 3);
    // Stock reporting never re-triggers signing.
    expect(await postsSince(since, '/v1/sales')).toHaveLength(1);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber })).toHaveLength(1);
  });

  it('treats a connection dropped after the write the same way', async () => {
    const { handle, before, movement } = await saleWithAmbiguousMovement({ kind: 'commit-then-fail', failWith: 'reset' });
    expect(await h.sandbox.inspector.stockMovements({ referenceId: movement.referenceId })).toHaveLength(1);
    await expectUpdateRefused(handle.executeUpdate(confirmStockMovementUpdate, { args: [{ referenceId: 'other' }] }), /other is not waiting for confirmation/);
    await handle.executeUpdate(confirmStockMovementUpdate, { args: [{ referenceId: movement.referenceId }] });
    await handle.result();
    expect(await h.sandbox.inspector.stockMovements({ referenceId: movement.referenceId })).toHaveLength(1);
    expect(await oilOnHand()).toBe(before - 3);
  });

  it('re-sends a movement the operator found missing (the connection dropped before the service handled it): exactly one movement', async () => {
    const { handle, since, before, movement } = await saleWithAmbiguousMovement({ kind: 'reset' });
    expect(await h.sandbox.inspector.stockMovements({ referenceId: movement.referenceId })).toEqual([]);
    expect(await oilOnHand()).toBe(before);

    await handle.executeUpdate(resendStockMovementUpdate, { args: [{ referenceId: movement.referenceId }] });
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.stockMovements[0]).toMatchObject({ status: 'reported' });
    expect(state.stockMovements[0]?.movementId).toMatch(/.+/);
    const recorded = await h.sandbox.inspector.stockMovements({ referenceId: movement.referenceId });
    expect(recorded.map((m) => m.movementId)).toEqual([state.stockMovements[0]?.movementId]);
    expect(await oilOnHand()).toBe(before - 3);
    expect((await postsSince(since, '/v1/stock/adjustments')).map((r) => r.status)).toEqual([0, 201]);
    expect(await postsSince(since, '/v1/sales')).toHaveLength(1);
  });

  it('retries a movement the service provably did not take (429) without an operator', async () => {
    await h.sandbox.inspector.addFault({ ...STOCK, kind: 'rate-limit', retryAfterSeconds: 0, times: 2 });
    const since = Date.now();
    const before = await oilOnHand();
    const state = await (await h.start(oneLineSale())).result();
    expect(state.stockMovements.map((m) => m.status)).toEqual(['reported']);
    expect((await postsSince(since, '/v1/stock/adjustments')).map((r) => r.status)).toEqual([429, 429, 201]);
    expect(await h.sandbox.inspector.stockMovements({ referenceId: state.stockMovements[0]!.referenceId })).toHaveLength(1);
    expect(await oilOnHand()).toBe(before - 3);
  });
});

/**
 * Stock movements after signing, end to end: the sale hands its lines to its branch's stock ledger and
 * closes; the ledger alone writes stock to the real sandbox over HTTP, with faults injected on the stock route. What is
 * proven comes from the sandbox's own records: each line's quantity recorded exactly once, under one reference.
 */
import { fetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { FaultRuleInput } from '../../sandbox/shared/faults.js';
import { AttentionReason, NeedsAttention } from '../../src/contracts/search-attributes.js';
import {
  getStockLedgerStateQuery,
  settleMovementUpdate,
  stockLedgerWorkflowId,
  type LedgerMovement,
} from '../../src/contracts/stock-ledger.js';
import type { StockMovementState } from '../../src/contracts/sale.js';
import { DEMO, saleInput, searchAttribute, useSaleHarness } from './harness.js';
import { carriersOf, ledgerHandle, ledgerWhen, type LedgerAt } from './ledger-reads.js';

const h = useSaleHarness();
afterEach(async () => {
  await h.sandbox.inspector.clearFaults();
});

const STOCK_ROUTE = '/v1/stock/adjustments';
const STOCK = { service: 'compliance', method: 'POST', path: STOCK_ROUTE } as const;
const nairobi = DEMO.businesses.nairobi;
const OIL = DEMO.items.cookingOil;
const ledgerAt = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: nairobi,
  branchId: DEMO.branches.nairobiCbd,
});

/** One stock-tracked line, so the one movement is the one the fault hits. */
const oneLineSale = (quantity = 3, refundWindowDays = 0) =>
  saleInput({ lines: [{ itemId: OIL, quantity, unitPrice: 389.99 }], options: { refundWindowDays } });

async function oilOnHand(): Promise<number> {
  const levels = await h.sandbox.inspector.stockLevels(nairobi);
  return levels.find((l) => l.itemId === OIL && l.branchId === DEMO.branches.nairobiCbd)?.quantity ?? 0;
}

async function postsSince(since: number, route: string) {
  return (await h.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
    (r) => r.method === 'POST' && r.route === route,
  );
}

/** The sandbox's records of the oil since `since`, oldest first (the ledger's probes are movements of 0). */
async function oilRecordsSince(since: number) {
  return (await h.sandbox.inspector.stockMovements({ businessId: nairobi, itemId: OIL })).filter(
    (m) => Date.parse(m.at) >= since,
  );
}

/**
 * Makes sure the ledger knows the oil's quantity on hand and has nothing of it under way, so the next request on the
 * stock route is the test sale's movement (not the probe a ledger sends first for an item it knows nothing of).
 */
async function ledgerReadyForOil(): Promise<void> {
  const known = await ledgerHandle(ledgerAt())
    .query(getStockLedgerStateQuery)
    .then((st) => st.onHand[OIL] !== undefined)
    .catch(() => false);
  if (!known) {
    const warmUp = await (await h.start(oneLineSale(1))).result();
    await carriersOf(ledgerAt(), warmUp.stockMovements);
  }
  const ready = await ledgerWhen(
    ledgerAt(),
    (st) => st.pending[OIL] === undefined && !st.open.some((m) => m.itemId === OIL),
    'nothing of the oil under way',
  );
  expect(ready.onHand[OIL]).toBe(await oilOnHand());
}

/**
 * Someone else at the branch (a stock count booked on the dashboard, another system): a movement of the item through
 * the service's own HTTP API, under the business's key, that the ledger did not send.
 */
async function someoneElseMoves(action: 'ADD' | 'DEDUCT', quantity: number): Promise<void> {
  const response = await fetch(`${h.sandbox.complianceUrl}${STOCK_ROUTE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': DEMO.keys.nairobi },
    body: JSON.stringify({
      itemId: OIL,
      action,
      quantity,
      unitPrice: 389.99,
      referenceId: `STOCK-COUNT-${Date.now()}`,
    }),
  });
  expect(response.status).toBe(201);
  await response.text();
}

/** Starts a one-line sale with `fault` on the stock route once the ledger is ready; returns it closed (or open). */
async function saleWithFaultedMovement(fault: Omit<FaultRuleInput, keyof typeof STOCK>, refundWindowDays = 0) {
  await ledgerReadyForOil();
  return startFaulted(fault, refundWindowDays);
}

async function startFaulted(fault: Omit<FaultRuleInput, keyof typeof STOCK>, refundWindowDays: number) {
  await h.sandbox.inspector.addFault({ ...STOCK, times: 1, ...fault });
  const since = Date.now();
  const before = await oilOnHand();
  const handle = await h.start(oneLineSale(3, refundWindowDays));
  const signed = await h.waitFor(
    handle,
    (s) => s.stockMovements.length === 1 && s.stockMovements[0]!.status !== 'pending',
  );
  const line: StockMovementState = signed.stockMovements[0]!;
  return { handle, since, before, line };
}

/** The sale handed its line to the branch's ledger and never waited for, or asked anyone about, its movement. */
function expectHandedOver(line: StockMovementState): void {
  expect(line).toMatchObject({
    action: 'DEDUCT',
    quantity: 3,
    status: 'handed_over',
    ledger: stockLedgerWorkflowId(h.taskQueue, nairobi, DEMO.branches.nairobiCbd),
  });
  expect(line).not.toHaveProperty('problem');
}

describe('a lost answer, settled by the stock ledger from the quantity on hand without an operator', () => {
  it.each([
    ['an error answer (503)', { kind: 'commit-then-fail', status: 503 } as const, 503],
    ['a dropped connection', { kind: 'commit-then-fail', failWith: 'reset' } as const, 0],
  ])(
    'the service recorded the movement, its answer was lost to %s: recorded by evidence, never sent again',
    async (_label, fault, lostStatus) => {
      const { handle, since, before, line } = await saleWithFaultedMovement(fault);
      const closed = await handle.result();
      expect(closed.step).toBe('completed');
      expectHandedOver(closed.stockMovements[0]!);

      const [movement] = await carriersOf(ledgerAt(), [line]);
      expect(movement).toMatchObject({
        referenceId: line.referenceId,
        status: 'recorded',
        settledBy: 'evidence',
        quantity: 3,
      });
      expect(movement!.lines).toEqual([{ lineId: line.referenceId, saleWorkflowId: handle.workflowId, quantity: 3 }]);
      // The sandbox: the movement once, then the ledger's probe (a movement of nothing) whose answer proved it.
      expect((await oilRecordsSince(since)).map((m) => [m.action, m.quantity, m.referenceId])).toEqual([
        ['DEDUCT', 3, line.referenceId],
        ['ADD', 0, expect.stringMatching(/^stk:[\w-]+:probe:\d+$/)],
      ]);
      expect((await postsSince(since, STOCK_ROUTE)).map((r) => r.status)).toEqual([lostStatus, 201]);
      expect(await oilOnHand()).toBe(before - 3);
      expect(await searchAttribute(ledgerHandle(ledgerAt()), NeedsAttention)).not.toBe(true);
      // Stock reporting never re-triggers signing.
      expect(await postsSince(since, '/v1/sales')).toHaveLength(1);
      expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: closed.traderInvoiceNumber })).toHaveLength(1);
    },
  );

  it('sends a movement again, under the same reference, when the quantity on hand proves the service never took it (connection dropped before it was handled): recorded once', async () => {
    const { handle, since, before, line } = await saleWithFaultedMovement({ kind: 'reset' });
    expectHandedOver((await handle.result()).stockMovements[0]!);

    const [movement] = await carriersOf(ledgerAt(), [line]);
    const recorded = await h.sandbox.inspector.stockMovements({ referenceId: line.referenceId });
    expect(recorded.map((m) => [m.action, m.quantity, m.movementId])).toEqual([['DEDUCT', 3, movement!.movementId]]);
    expect(movement).toMatchObject({ referenceId: line.referenceId, status: 'recorded', quantity: 3 });
    // Lost before the service handled it, the probe's quantity (unchanged), then the same movement again.
    expect((await postsSince(since, STOCK_ROUTE)).map((r) => r.status)).toEqual([0, 201, 201]);
    expect((await oilRecordsSince(since)).map((m) => [m.action, m.quantity])).toEqual([
      ['ADD', 0],
      ['DEDUCT', 3],
    ]);
    expect(await oilOnHand()).toBe(before - 3);
    expect(await postsSince(since, '/v1/sales')).toHaveLength(1);
  });

  it('retries a movement the service provably did not take (429) without an operator', async () => {
    const { handle, since, before, line } = await saleWithFaultedMovement({
      kind: 'rate-limit',
      retryAfterSeconds: 0,
      times: 2,
    });
    expectHandedOver((await handle.result()).stockMovements[0]!);
    const [movement] = await carriersOf(ledgerAt(), [line]);
    expect(movement).toMatchObject({ referenceId: line.referenceId, status: 'recorded' });
    expect(movement!.settledBy).toBeUndefined();
    expect((await postsSince(since, STOCK_ROUTE)).map((r) => r.status)).toEqual([429, 429, 201]);
    expect(await h.sandbox.inspector.stockMovements({ referenceId: line.referenceId })).toHaveLength(1);
    expect(await oilOnHand()).toBe(before - 3);
  });
});

describe('an inconclusive case: someone else moved the item through the service’s API meanwhile', () => {
  /**
   * The ledger knows the oil's quantity; someone else deducts 5 of it through the HTTP API; then the sale's movement
   * meets `fault`. The probe's quantity fits neither "applied" nor "not applied" by the ledger's own books.
   */
  async function inconclusive(fault: Omit<FaultRuleInput, keyof typeof STOCK>) {
    await ledgerReadyForOil();
    await someoneElseMoves('DEDUCT', 5);
    // The sale closes once its line is handed over; the ledger alone holds the line until the operator decides.
    const sale = await startFaulted(fault, 0);
    expectHandedOver(sale.line);
    const waiting = await ledgerWhen(
      ledgerAt(),
      (st) => st.open.some((m) => m.referenceId === sale.line.referenceId && m.status === 'needs_operator'),
      'the ledger asking an operator',
    );
    const movement: LedgerMovement = waiting.open.find((m) => m.referenceId === sale.line.referenceId)!;
    expect(movement.problem).toMatch(
      /fits no outcome of this ledger's movements: something else moved the item at this branch/,
    );
    // The sale asked to be told nothing: it has closed.
    expect(movement.lines).toEqual([
      { lineId: sale.line.referenceId, saleWorkflowId: sale.handle.workflowId, quantity: 3 },
    ]);
    expect((await sale.handle.result()).step).toBe('completed');
    const ledger = ledgerHandle(ledgerAt());
    expect(await searchAttribute(ledger, NeedsAttention)).toBe(true);
    expect(await searchAttribute(ledger, AttentionReason)).toBe('stock_needs_operator');
    // The sale itself waits for nothing and needs nobody.
    expect((await h.state(sale.handle)).stockMovements[0]?.status).toBe('handed_over');
    expect(await searchAttribute(sale.handle, NeedsAttention)).not.toBe(true);
    return { ...sale, ledger };
  }

  it('goes to an operator, who finds the movement on the dashboard and settles it as applied: nothing is sent again', async () => {
    const { handle, since, before, line, ledger } = await inconclusive({ kind: 'commit-then-fail', status: 503 });
    // What the operator sees on the dashboard: the reference, recorded once.
    expect(await h.sandbox.inspector.stockMovements({ referenceId: line.referenceId })).toHaveLength(1);

    const settled = await ledger.executeUpdate(settleMovementUpdate, {
      args: [{ referenceId: line.referenceId, decision: 'applied' }],
    });
    expect(settled).toMatchObject({ referenceId: line.referenceId, status: 'recorded', settledBy: 'operator' });
    const [carrier] = await carriersOf(ledgerAt(), [line]);
    expect(carrier).toMatchObject({ referenceId: line.referenceId, settledBy: 'operator' });
    expect((await handle.result()).stockMovements[0]).toMatchObject({ ledger: ledger.workflowId });
    await ledgerWhen(
      ledgerAt(),
      (st) => !st.open.some((m) => m.referenceId === line.referenceId),
      'the movement settled',
    );
    expect(await searchAttribute(ledger, NeedsAttention)).toBe(false);

    expect(await h.sandbox.inspector.stockMovements({ referenceId: line.referenceId })).toHaveLength(1);
    expect((await postsSince(since, STOCK_ROUTE)).map((r) => r.status)).toEqual([503, 201]);
    expect(await oilOnHand()).toBe(before - 3);
  });

  it('goes to an operator, who finds nothing on the dashboard and has it sent again: recorded once, under the same reference', async () => {
    const { since, before, line, ledger } = await inconclusive({ kind: 'reset' });
    expect(await h.sandbox.inspector.stockMovements({ referenceId: line.referenceId })).toEqual([]);

    await ledger.executeUpdate(settleMovementUpdate, { args: [{ referenceId: line.referenceId, decision: 'resend' }] });
    const [carrier] = await carriersOf(ledgerAt(), [line]);
    const recorded = await h.sandbox.inspector.stockMovements({ referenceId: line.referenceId });
    expect(recorded.map((m) => [m.action, m.quantity])).toEqual([['DEDUCT', 3]]);
    expect(carrier).toMatchObject({ referenceId: line.referenceId, movementId: recorded[0]!.movementId });
    await ledgerWhen(
      ledgerAt(),
      (st) => !st.open.some((m) => m.referenceId === line.referenceId),
      'the movement settled',
    );
    expect(await searchAttribute(ledger, NeedsAttention)).toBe(false);

    expect((await postsSince(since, STOCK_ROUTE)).map((r) => r.status)).toEqual([0, 201, 201]);
    expect(await oilOnHand()).toBe(before - 3);
  });
});

import { describe, expect, it } from 'vitest';
import { check, type CheckedApplication, type CheckInput, type StartedSale } from '../../tools/chaos/checker.js';
import { exactlyOnce, type ExpectedStockLine } from '../../tools/chaos/exactly-once.js';
import type { StockMovement } from '../../sandbox/compliance/model.js';
import type { InspectedDocument } from '../../sandbox/inspector.js';

const BIZ = 'biz_demo_nairobi';
const OTHER = 'biz_kisumu';
const BRANCH = 'br_cbd';
const APPLICATIONS: CheckedApplication[] = [
  { applicationId: 'app_retail', name: 'retail-group', businesses: [BIZ], limit: 100 },
  { applicationId: 'app_lakeside', name: 'lakeside', businesses: [OTHER], limit: 100 },
];
const tracked = (_business: string, itemId: string) => itemId !== 'itm_voucher';

let ids = 0;
function doc(over: {
  type?: 'sale' | 'credit_note';
  tin: string;
  key: string;
  status?: 'completed' | 'failed';
  originalSaleId?: string;
  businessId?: string;
}): InspectedDocument {
  const status = over.status ?? 'completed';
  return {
    sale: {
      id: `${over.type === 'credit_note' ? 'crn' : 'sal'}_${++ids}`,
      type: over.type ?? 'sale',
      status,
      traderInvoiceNumber: over.tin,
      receipt:
        status === 'completed' ? ({ receiptNumber: ids } as unknown as InspectedDocument['sale']['receipt']) : null,
      originalSaleId: over.originalSaleId ?? null,
      businessId: over.businessId ?? BIZ,
    } as InspectedDocument['sale'],
    applicationId: 'app_retail',
    idempotencyKeys: [over.key],
    submissions: 1,
    causes: [],
    history: [],
    creditNoteId: null,
  };
}

/** A movement as the sandbox records it; only the fields the rule reads matter. */
function movement(
  referenceId: string | null,
  itemId: string,
  quantity: number,
  action: 'ADD' | 'DEDUCT' = 'DEDUCT',
  over: Partial<StockMovement> = {},
): StockMovement {
  return {
    movementId: `mov_${++ids}`,
    businessId: BIZ,
    branchId: BRANCH,
    itemId,
    action,
    quantity,
    unitPrice: 10,
    referenceId,
    quantityBefore: 1_000_000,
    quantityOnHand: 1_000_000,
    at: '',
    ...over,
  };
}

/** Sugar x2, a voucher (not stock tracked), milk x1. */
const sale = (tin: string, over: Partial<StartedSale> = {}): StartedSale => ({
  businessId: BIZ,
  branchId: BRANCH,
  traderInvoiceNumber: tin,
  lines: [
    { itemId: 'itm_sugar', quantity: 2 },
    { itemId: 'itm_voucher', quantity: 1 },
    { itemId: 'itm_milk', quantity: 1 },
  ],
  refund: null,
  stock: 'ledger',
  ...over,
});

function input(world: Pick<CheckInput, 'sales' | 'documents' | 'movements'>): CheckInput {
  return {
    stockTracked: tracked,
    applications: APPLICATIONS,
    requests: [],
    requestsMissed: 0,
    windowMs: 60_000,
    ...world,
  };
}

/**
 * Three signed sales A, B, C at one branch, C refunded with restock. Their branch's ledger sent A's milk alone
 * (referenceId its line id), merged the sugar of A, B and C into one movement and the milk of B and C into another,
 * sent C's restocks merged, and probed milk twice (the same probe referenceId: its first answer was lost).
 */
function ledgerWorld() {
  const a = doc({ tin: 'A', key: 'sale-v1:A' });
  const b = doc({ tin: 'B', key: 'sale-v1:B' });
  const c = doc({ tin: 'C', key: 'sale-v1:C' });
  const cn = doc({ type: 'credit_note', tin: 'CN-C', key: 'cn-v1:C', originalSaleId: c.sale.id });
  return {
    sales: [sale('A'), sale('B'), sale('C', { refund: { restocking: true } })],
    documents: [a, b, c, cn],
    movements: [
      movement('sale-v1:A:2:DEDUCT', 'itm_milk', 1),
      movement('stk:ledgerhash:1', 'itm_sugar', 6),
      movement('stk:ledgerhash:2', 'itm_milk', 2),
      movement('stk:ledgerhash:2:probe', 'itm_milk', 0, 'ADD'),
      movement('stk:ledgerhash:2:probe', 'itm_milk', 0, 'ADD'),
      movement('stk:ledgerhash:3', 'itm_sugar', 2, 'ADD'),
      movement('cn-v1:C:2:ADD', 'itm_milk', 1, 'ADD'),
    ],
  };
}

describe('the exactly-once rule of stock, in the chaos checker', () => {
  it('holds when every line is in exactly one recorded movement, merged or alone, and ignores probes', () => {
    const verdicts = check(input(ledgerWorld()));
    expect(verdicts.ok).toBe(true);
    expect(verdicts.totals.exactlyOnceViolations).toBe(0);
    expect(verdicts.totals.stockErrors).toBe(0);
    // Merged movements and probes are no stray movements; a ledger's sale misses no movement of its own.
    expect(verdicts.stray.movements).toEqual([]);
    expect(verdicts.sales.every((v) => v.problems.length === 0)).toBe(true);
    expect(verdicts.stock).toMatchObject({
      lines: 8,
      quantity: 12,
      movements: 5,
      merged: 3,
      probes: 2,
      duplicates: [],
      missingQuantity: 0,
      extraQuantity: 0,
      violations: 0,
      ok: true,
    });
    const sugar = verdicts.stock.items.find((i) => i.itemId === 'itm_sugar')!;
    expect(sugar).toMatchObject({
      businessId: BIZ,
      branchId: BRANCH,
      soldLines: 3,
      sold: 6,
      deducted: 6,
      deductMovements: 1,
      restockedLines: 1,
      restocked: 2,
      added: 2,
      addMovements: 1,
    });
    expect(verdicts.stock.items.find((i) => i.itemId === 'itm_milk')).toMatchObject({
      sold: 3,
      deducted: 3,
      deductMovements: 2,
      probes: 2,
    });
  });

  it('counts a referenceId recorded twice, and the quantity it moved twice', () => {
    const world = ledgerWorld();
    const verdicts = check(
      input({ ...world, movements: [...world.movements, movement('stk:ledgerhash:1', 'itm_sugar', 6)] }),
    );
    expect(verdicts.ok).toBe(false);
    expect(verdicts.stock.duplicates).toEqual([{ businessId: BIZ, referenceId: 'stk:ledgerhash:1', recorded: 2 }]);
    expect(verdicts.stock.extraQuantity).toBe(6);
    // The second record, and sugar's deductions off.
    expect(verdicts.totals.exactlyOnceViolations).toBe(2);
    expect(verdicts.applications.map((a) => a.exactlyOnceViolations)).toEqual([2, 0]);
    // A line's own movement recorded twice is also the sale's own extra movement.
    const twice = check(
      input({ ...world, movements: [...world.movements, movement('sale-v1:A:2:DEDUCT', 'itm_milk', 1)] }),
    );
    expect(twice.stock.duplicates).toHaveLength(1);
    expect(twice.sales[0]!.stockErrors).toBe(1);
  });

  it('counts a missing quantity per item, even when no sale can be blamed for it', () => {
    const world = ledgerWorld();
    // The merged sugar movement carried 4 of the 6 sold, and C's milk restock never came.
    const movements = world.movements
      .map((m) => (m.referenceId === 'stk:ledgerhash:1' ? { ...m, quantity: 4 } : m))
      .filter((m) => m.referenceId !== 'cn-v1:C:2:ADD');
    const verdicts = check(input({ ...world, movements }));
    expect(verdicts.ok).toBe(false);
    expect(verdicts.totals.stockErrors).toBe(0);
    expect(verdicts.totals.exactlyOnceViolations).toBe(2);
    expect(verdicts.stock.missingQuantity).toBe(3);
    expect(verdicts.stock.items.find((i) => i.itemId === 'itm_sugar')!.missing).toEqual({ deduct: 2, add: 0, net: 0 });
    expect(verdicts.stock.items.find((i) => i.itemId === 'itm_milk')!.missing).toEqual({ deduct: 0, add: 1, net: 0 });
  });

  it('keeps balances apart per branch and per business', () => {
    const world = ledgerWorld();
    // A's milk recorded at the other branch.
    const movements = world.movements.map((m) =>
      m.referenceId === 'sale-v1:A:2:DEDUCT' ? { ...m, branchId: 'br_westlands' } : m,
    );
    const verdicts = check(input({ ...world, movements }));
    expect(verdicts.totals.exactlyOnceViolations).toBe(2);
    expect(
      verdicts.stock.items
        .filter((i) => i.missing.deduct + i.extra.deduct > 0)
        .map((i) => [i.branchId, i.missing.deduct, i.extra.deduct]),
    ).toEqual([
      [BRANCH, 1, 0],
      ['br_westlands', 0, 1],
    ]);
    // The same item at another business is another balance: a sale of one is no movement of the other.
    const elsewhere = check(
      input({
        ...world,
        movements: [...world.movements, movement('stk:other:1', 'itm_sugar', 6, 'DEDUCT', { businessId: OTHER })],
      }),
    );
    expect(elsewhere.stock.items.filter((i) => i.extra.deduct > 0).map((i) => i.businessId)).toEqual([OTHER]);
    expect(elsewhere.applications.map((a) => a.exactlyOnceViolations)).toEqual([0, 1]);
    // A sale naming no branch is counted at its business's first branch, as the service records it.
    const unnamed = check({
      ...input(world),
      sales: world.sales.map(({ branchId: _omitted, ...s }) => s),
      firstBranchOf: () => BRANCH,
    });
    expect(unnamed.stock.ok).toBe(true);
  });

  it('expects nothing of a sale never signed nor of a refund that does not restock', () => {
    const unsigned = doc({ tin: 'U', key: 'sale-v1:U', status: 'failed' });
    const n = doc({ tin: 'N', key: 'sale-v1:N' });
    const cn = doc({ type: 'credit_note', tin: 'CN-N', key: 'cn-v1:N', originalSaleId: n.sale.id });
    const verdicts = check(
      input({
        sales: [sale('U'), sale('N', { refund: { restocking: false } })],
        documents: [unsigned, n, cn],
        movements: [movement('stk:h:1', 'itm_sugar', 2), movement('stk:h:2', 'itm_milk', 1)],
      }),
    );
    expect(verdicts.totals.lost).toBe(1);
    expect(verdicts.stock).toMatchObject({ lines: 2, ok: true });
    // A restock of a refund that does not restock is extra.
    const restocked = check(
      input({
        sales: [sale('N', { refund: { restocking: false } })],
        documents: [n, cn],
        movements: [
          movement('stk:h:1', 'itm_sugar', 2),
          movement('stk:h:2', 'itm_milk', 1),
          movement('stk:h:3', 'itm_sugar', 2, 'ADD'),
        ],
      }),
    );
    expect(restocked.stock.items.find((i) => i.itemId === 'itm_sugar')!.extra).toEqual({ deduct: 0, add: 2, net: 0 });
    expect(restocked.ok).toBe(false);
  });

  it("checks an old-path sale's own line movements one by one, and the same lines by the rule", () => {
    const a = doc({ tin: 'A', key: 'sale-v1:A' });
    const right = [movement('sale-v1:A:0:DEDUCT', 'itm_sugar', 2), movement('sale-v1:A:2:DEDUCT', 'itm_milk', 1)];
    const old = check(input({ sales: [sale('A', { stock: 'per-line' })], documents: [a], movements: right }));
    expect(old.ok).toBe(true);
    expect(old.sales[0]!.movements).toHaveLength(2);
    expect(old.stock).toMatchObject({ lines: 2, movements: 2, merged: 0, violations: 0 });

    // Milk's line movement missing: on the old path the sale itself says so; on the ledger's only the rule can.
    const missing = [right[0]!];
    const oldMissing = check(input({ sales: [sale('A', { stock: 'per-line' })], documents: [a], movements: missing }));
    expect(oldMissing.sales[0]!.stockErrors).toBe(1);
    expect(oldMissing.sales[0]!.problems.join('; ')).toMatch(/missing: DEDUCT itm_milk x1 \(sale\)/);
    expect(oldMissing.totals.exactlyOnceViolations).toBe(1);
    const ledgerMissing = check(input({ sales: [sale('A')], documents: [a], movements: missing }));
    expect(ledgerMissing.sales[0]!.stockErrors).toBe(0);
    expect(ledgerMissing.totals.exactlyOnceViolations).toBe(1);
    expect(ledgerMissing.ok).toBe(false);

    // A sale's own movement of the wrong quantity is its error on either path.
    const wrong = [right[0]!, movement('sale-v1:A:2:DEDUCT', 'itm_milk', 3)];
    expect(check(input({ sales: [sale('A')], documents: [a], movements: wrong })).sales[0]!.stockErrors).toBe(1);
    expect(
      check(input({ sales: [sale('A', { stock: 'per-line' })], documents: [a], movements: wrong })).sales[0]!
        .stockErrors,
    ).toBe(2);
  });

  it('counts a movement without a referenceId, which no check could tell from a second one', () => {
    const verdict = exactlyOnce(
      [{ businessId: BIZ, branchId: BRANCH, itemId: 'itm_sugar', action: 'DEDUCT', quantity: 2 }],
      [movement(null, 'itm_sugar', 2)],
    );
    expect(verdict).toMatchObject({
      withoutReference: 1,
      missingQuantity: 0,
      extraQuantity: 0,
      violations: 1,
      ok: false,
    });
  });

  it('adds the quantities of many lines against one movement, per action', () => {
    const lines: ExpectedStockLine[] = [1, 2, 3].map((quantity) => ({
      businessId: OTHER,
      branchId: BRANCH,
      itemId: 'itm_rice',
      action: 'DEDUCT',
      quantity,
    }));
    const recorded = [movement('stk:k:7', 'itm_rice', 6, 'DEDUCT', { businessId: OTHER })];
    expect(exactlyOnce(lines, recorded)).toMatchObject({ lines: 3, quantity: 6, movements: 1, ok: true });
    // The same quantity as an ADD is no deduction.
    const verdict = exactlyOnce(lines, [movement('stk:k:7', 'itm_rice', 6, 'ADD', { businessId: OTHER })]);
    expect(verdict.items[0]).toMatchObject({
      missing: { deduct: 6, add: 0, net: 0 },
      extra: { deduct: 0, add: 6, net: 0 },
    });
    expect(verdict.violations).toBe(2);
  });
});

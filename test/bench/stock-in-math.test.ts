/** The stock-in section's arithmetic held to its definitions (docs/benchmarks.md, "Stock-in"). */
import { describe, expect, it } from 'vitest';
import {
  addedLag,
  duplicatesOf,
  expectedOnHand,
  learnedMatches,
  quantityExact,
  seenTimes,
  stockInExactlyOnce,
  stockInRequests,
  type StockInMovement,
} from '../../tools/bench/stock-in-math.js';
import type { PlannedInvoice, Supplier } from '../../tools/bench/stock-in-world.js';

const supplier: Supplier = { index: 0, name: 'Mwangaza Wholesale 1 Ltd', pin: 'P051100000A', priceFactor: 0.6 };
const invoice = (
  id: string,
  half: 'first' | 'second',
  lines: Array<[itemId: string, quantity: number, unitPrice: number, wording?: string]>,
  takenBack = false,
): PlannedInvoice => ({
  index: 0,
  id,
  half,
  supplier,
  supplierInvoiceNumber: id,
  invoiceDate: '2026-11-20',
  takenBack,
  lines: lines.map(([itemId, quantity, unitPrice, wording], line) => ({
    line,
    description: wording ?? itemId,
    itemId,
    quantity,
    unitPrice,
    ...(wording ? { wording } : {}),
  })),
});
const moved = (
  itemId: string,
  action: 'ADD' | 'DEDUCT',
  quantity: number,
  unitPrice: number,
  at: number,
  referenceId: string | null = `ref-${itemId}-${action}-${at}`,
): StockInMovement => ({ itemId, action, quantity, unitPrice, referenceId, at });

const SALE_PRICES = new Map([
  ['itm_1', 50],
  ['itm_2', 60],
]);
const A = invoice('a', 'first', [
  ['itm_1', 5, 30],
  ['itm_2', 2, 36],
]);
const B = invoice('b', 'second', [['itm_1', 3, 30]], true);

describe('exactly once, from the sandbox’s records', () => {
  it('holds when every line is added once (merged or not) and an unconfirmed invoice is taken back once', () => {
    const movements = [
      moved('itm_1', 'ADD', 8, 30, 1), // a and b's lines of one item and price, merged
      moved('itm_2', 'ADD', 2, 36, 2),
      moved('itm_1', 'DEDUCT', 3, 30, 3), // b taken back: a supplier's price
      moved('itm_1', 'DEDUCT', 4, 50, 4), // a sale: a selling price, not the stock-in's
      moved('itm_2', 'ADD', 0, 0, 5, 'stk:x:probe:1'), // a probe: neither
    ];
    const e = stockInExactlyOnce([A, B], movements, SALE_PRICES);
    expect(e.over).toEqual([]);
    expect(e.under).toEqual([]);
    expect(duplicatesOf(e)).toBe(0);
  });

  it('counts a reference recorded twice and a group holding more than its lines', () => {
    const movements = [
      moved('itm_1', 'ADD', 5, 30, 1, 'sin-v1:x'),
      moved('itm_1', 'ADD', 5, 30, 2, 'sin-v1:x'),
      moved('itm_1', 'ADD', 3, 30, 3),
      moved('itm_2', 'ADD', 2, 36, 2),
      moved('itm_1', 'DEDUCT', 3, 30, 4),
    ];
    const e = stockInExactlyOnce([A, B], movements, SALE_PRICES);
    expect(e.duplicateReferenceIds).toEqual(['sin-v1:x']);
    expect(e.over.map((g) => [g.itemId, g.action, g.expected, g.recorded])).toEqual([['itm_1', 'ADD', 8, 13]]);
    expect(duplicatesOf(e)).toBe(2);
  });

  it('says which lines are missing, and an added line of a price no invoice has is over', () => {
    const e = stockInExactlyOnce([A], [moved('itm_1', 'ADD', 5, 31, 1)], SALE_PRICES);
    expect(e.under.map((g) => [g.itemId, g.unitPrice])).toEqual([
      ['itm_1', 30],
      ['itm_2', 36],
    ]);
    expect(e.over.map((g) => [g.itemId, g.unitPrice, g.expected])).toEqual([['itm_1', 31, 0]]);
  });
});

describe('the quantity on hand', () => {
  it('is opening + stocked purchases − sales + restocks, an invoice taken back not stocked', () => {
    const expected = expectedOnHand({
      items: ['itm_1', 'itm_2', 'itm_3'],
      opening: () => 100,
      invoices: [A, B],
      sold: [
        { itemId: 'itm_1', quantity: 2 },
        { itemId: 'itm_3', quantity: 1 },
      ],
      restocked: [{ itemId: 'itm_3', quantity: 1 }],
    });
    expect(Object.fromEntries(expected)).toEqual({ itm_1: 103, itm_2: 102, itm_3: 100 });
    const onHand = new Map([
      ['itm_1', 103],
      ['itm_2', 101],
    ]);
    const q = quantityExact(expected, onHand);
    expect(q.share).toBeCloseTo(1 / 3);
    expect(q.off.map((o) => o.itemId)).toEqual(['itm_2', 'itm_3']);
  });
});

describe('the lag of an added line', () => {
  const mappedLater = invoice('c', 'first', [
    ['itm_1', 4, 30],
    ['itm_2', 1, 36, 'MWANGAZA BALE NO.1'],
  ]);

  it('counts from the pass that told its invoice, or from the mapping of its wording', () => {
    const seen = seenTimes([mappedLater], () => 1_000, new Map([[`${supplier.pin}|MWANGAZA BALE NO.1`, 5_000]]));
    expect(seen.map((s) => s.seenAt)).toEqual([1_000, 5_000]);
  });

  it('carries lines per item and price, a merged movement carrying several, in scaled seconds', () => {
    const lines = [
      { line: { itemId: 'itm_1', quantity: 4, unitPrice: 30 }, seenAt: 1_000 },
      { line: { itemId: 'itm_1', quantity: 3, unitPrice: 30 }, seenAt: 2_000 },
      { line: { itemId: 'itm_1', quantity: 2, unitPrice: 33 }, seenAt: 2_000 },
    ];
    const movements = [
      moved('itm_1', 'ADD', 2, 33, 4_000),
      moved('itm_1', 'ADD', 7, 30, 11_000),
      moved('itm_1', 'DEDUCT', 7, 50, 3_000),
    ];
    // k = 4: 10 s, 9 s and 2 s real are 40, 36 and 8 scaled.
    expect(addedLag(lines, movements, 4)).toEqual({
      lines: 3,
      uncarried: 0,
      p50Seconds: 36,
      p99Seconds: 40,
      maxSeconds: 40,
    });
    expect(addedLag(lines, movements.slice(0, 1), 4).uncarried).toBe(2);
  });
});

describe('the stock-in’s requests', () => {
  it('are the adjustments that were not a sale’s recorded movement, plus the item lists', () => {
    const log = [
      ...Array.from({ length: 7 }, (_, i) => ({ method: 'POST', route: '/v1/stock/adjustments', at: i })),
      { method: 'GET', route: '/v1/items', at: 1 },
      { method: 'POST', route: '/v1/sales', at: 1 },
      { method: 'GET', route: '/v1/purchases', at: 1 },
    ];
    const movements = [
      moved('itm_1', 'ADD', 8, 30, 1),
      moved('itm_1', 'DEDUCT', 3, 30, 2),
      moved('itm_1', 'DEDUCT', 2, 50, 3),
      moved('itm_2', 'DEDUCT', 1, 60, 4),
      moved('itm_2', 'ADD', 0, 0, 5),
    ];
    expect(stockInRequests(log, movements, SALE_PRICES)).toEqual({
      attributed: 7 - 2 + 1,
      recorded: 2 + 1,
      adjustments: 7,
      saleMovements: 2,
      stockInMovements: 2,
      probes: 1,
      itemLists: 1,
    });
  });
});

describe('lines matched by what the stock-in learned', () => {
  it('counts every line in a mapped wording but the person’s own, matched by a learned or merchant mapping', () => {
    const first = invoice('f', 'first', [
      ['itm_1', 1, 30, 'W1'],
      ['itm_2', 1, 36],
    ]);
    const waiting = invoice('w', 'first', [['itm_1', 1, 30, 'W1']]);
    const later = invoice('l', 'second', [['itm_1', 2, 30, 'W1']]);
    const notYet = invoice('n', 'second', [['itm_1', 2, 30, 'W1']]);
    const state = [
      { purchaseId: 'f', lines: [{ match: { itemId: 'itm_1', factor: 1, by: 'operator' as const } }, {}] },
      { purchaseId: 'w', lines: [{ match: { itemId: 'itm_1', factor: 1, by: 'learned' as const } }] },
      { purchaseId: 'l', lines: [{ match: { itemId: 'itm_1', factor: 1, by: 'learned' as const } }] },
      { purchaseId: 'n', lines: [{}] },
    ] as never;
    expect(learnedMatches([first, waiting, later, notYet], [{ invoice: first, line: first.lines[0]! }], state)).toEqual(
      {
        lines: 3,
        matched: 2,
        waitingThen: 1,
        arrivedAfter: 1,
        mappedByPerson: 1,
      },
    );
  });
});

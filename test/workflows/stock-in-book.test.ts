import { describe, expect, it } from 'vitest';
import type { SeenPurchase } from '../../src/contracts/stock-in.js';
import { StockInBook } from '../../workflows/stock-in/book.js';
import { candidates } from '../../src/contracts/item-names.js';
import { normalise } from '../../workflows/stock-in/matching.js';
import { namesOf } from '../helpers/item-names.js';

const NOW = '2026-11-27T10:00:00.000Z';
const SUPPLIER = 'P051234567X';
const CATALOGUE = [
  { id: 'itm_milk', name: 'Fresh Milk 500ml' },
  { id: 'itm_sugar', name: 'Sugar 1kg' },
  { id: 'itm_bread', name: 'Bread 400g' },
  { id: 'itm_bread_white', name: 'White Bread 400g' },
];

function purchase(over: Partial<SeenPurchase> = {}): SeenPurchase {
  return {
    id: 'pur_1',
    status: 'confirmed',
    supplierPin: SUPPLIER,
    supplierName: 'Brookside Dairy',
    supplierInvoiceNumber: 'SUP-1',
    invoiceDate: '2026-11-20',
    branch: 'Nairobi CBD',
    lines: [
      { description: 'FRESH MILK  500ML.', code: null, hsCode: null, quantity: 10, unitPrice: 60 },
      { description: 'CTN 24x1KG SUGAR', code: 'SUG-24', hsCode: null, quantity: 2, unitPrice: 2400 },
      { description: 'Delivery charge', code: null, hsCode: null, quantity: 1, unitPrice: 300 },
    ],
    ...over,
  };
}

function book(allOrNothing = false): StockInBook {
  const b = new StockInBook('biz_1', 'stock-in:sales:biz_1');
  b.settings = { from: '2026-11-01', allOrNothing };
  return b;
}

const movesOf = (handovers: ReturnType<StockInBook['observe']>) =>
  handovers.flatMap((h) => h.lines.map((l) => `${l.action} ${l.quantity} ${l.itemId} @${l.unitPrice}`));

describe('the stock-in book', () => {
  it('normalises names and offers the items sharing most words with a line', () => {
    expect(normalise('  FRESH milk,  500ML. ')).toBe('fresh milk 500ml');
    expect(candidates(CATALOGUE, 'bread white sliced').map((c) => c.id)).toEqual(['itm_bread_white', 'itm_bread']);
  });

  it('adds the lines a unique name matches at once, and waits for a person on the rest, naming candidates', () => {
    const b = book();
    const handovers = b.observe(purchase(), namesOf(CATALOGUE), NOW);
    expect(movesOf(handovers)).toEqual(['ADD 10 itm_milk @60']);
    expect(handovers[0]!.branch).toBe('Nairobi CBD');
    const inv = b.invoice('pur_1')!;
    expect(inv.state).toBe('waiting');
    expect(inv.lines.map((l) => Boolean(l.match))).toEqual([true, false, false]);
    expect(inv.lines[1]!.candidates?.map((c) => c.itemId)).toEqual(['itm_sugar']);
    expect(b.state().totals).toMatchObject({ linesAdded: 1, linesWaiting: 2 });
  });

  it('the same confirmation told again adds nothing; a name matching two items is not guessed', () => {
    const b = book();
    b.observe(purchase(), namesOf(CATALOGUE), NOW);
    expect(b.observe(purchase(), namesOf(CATALOGUE), NOW)).toEqual([]);
    const two = [
      ...CATALOGUE,
      { id: 'itm_milk_2', name: 'fresh milk 500 ml' },
      { id: 'itm_milk_3', name: 'Fresh milk 500ML' },
    ];
    const other = book();
    expect(movesOf(other.observe(purchase(), namesOf(two), NOW))).toEqual([]);
  });

  it('a line mapped once by an operator is matched without a person on the next invoice of that supplier, by its code', () => {
    const b = book();
    b.observe(purchase(), namesOf(CATALOGUE), NOW);
    const mapped = b.mapLine(
      { purchaseId: 'pur_1', line: 1 },
      { itemId: 'itm_sugar', factor: 24 },
      namesOf(CATALOGUE),
      NOW,
    );
    expect(movesOf(mapped)).toEqual(['ADD 48 itm_sugar @100']);
    const fee = b.mapLine({ purchaseId: 'pur_1', line: 2 }, { notStock: true }, namesOf(CATALOGUE), NOW);
    expect(fee).toEqual([]);
    expect(b.invoice('pur_1')!.state).toBe('added');

    const next = purchase({
      id: 'pur_2',
      lines: [
        { description: 'sugar carton (new wording)', code: 'SUG-24', hsCode: null, quantity: 1, unitPrice: 2400 },
        { description: 'DELIVERY CHARGE', code: null, hsCode: null, quantity: 1, unitPrice: 300 },
      ],
    });
    expect(movesOf(b.observe(next, namesOf(CATALOGUE), NOW))).toEqual(['ADD 24 itm_sugar @100']);
    expect(b.invoice('pur_2')!.state).toBe('added');
    expect(b.mappings.list().map((m) => [m.by, m.key, m.source])).toEqual([
      ['code', 'SUG-24', 'learned'],
      ['description', 'Delivery charge', 'learned'],
    ]);
  });

  it('all or nothing: no line goes in until every line is settled, then all at once', () => {
    const b = book(true);
    expect(b.observe(purchase(), namesOf(CATALOGUE), NOW)).toEqual([]);
    expect(
      b.mapLine({ purchaseId: 'pur_1', line: 1 }, { itemId: 'itm_sugar', factor: 24 }, namesOf(CATALOGUE), NOW),
    ).toEqual([]);
    const last = b.mapLine({ purchaseId: 'pur_1', line: 2 }, { notStock: true }, namesOf(CATALOGUE), NOW);
    expect(movesOf(last)).toEqual(['ADD 10 itm_milk @60', 'ADD 48 itm_sugar @100']);
  });

  it('takes back once what an invoice added when it leaves confirmed, and adds again once under new references when confirmed again', () => {
    const b = book();
    const first = b.observe(purchase(), namesOf(CATALOGUE), NOW);
    b.mapLine({ purchaseId: 'pur_1', line: 1 }, { itemId: 'itm_sugar', factor: 24 }, namesOf(CATALOGUE), NOW);
    const back = b.observe(purchase({ status: 'pending_review' }), namesOf(CATALOGUE), NOW);
    expect(movesOf(back)).toEqual(['DEDUCT 10 itm_milk @60', 'DEDUCT 48 itm_sugar @100']);
    expect(b.invoice('pur_1')!.state).toBe('taken_back');
    expect(b.observe(purchase({ status: 'rejected' }), namesOf(CATALOGUE), NOW)).toEqual([]);
    const again = b.observe(purchase(), namesOf(CATALOGUE), NOW);
    // The learned mapping holds: the sugar line goes in without a person this time.
    expect(movesOf(again)).toEqual(['ADD 10 itm_milk @60', 'ADD 48 itm_sugar @100']);
    const refs = [...first, ...back, ...again].flatMap((h) => h.lines.map((l) => l.lineId));
    expect(new Set(refs).size).toBe(refs.length);
    expect(refs.every((r) => r.length <= 100)).toBe(true);
  });

  it('invoices dated before the start date are opening stock: never added, nor taken back', () => {
    const b = book();
    expect(b.observe(purchase({ invoiceDate: '2026-10-31' }), namesOf(CATALOGUE), NOW)).toEqual([]);
    expect(b.invoice('pur_1')!.state).toBe('before_start');
    expect(
      b.observe(purchase({ invoiceDate: '2026-10-31', status: 'pending_review' }), namesOf(CATALOGUE), NOW),
    ).toEqual([]);
    expect(b.invoice('pur_1')!.state).toBe('before_start');
  });

  it('an invoice never confirmed is not kept', () => {
    const b = book();
    expect(b.observe(purchase({ status: 'pending_review' }), namesOf(CATALOGUE), NOW)).toEqual([]);
    expect(b.invoice('pur_1')).toBeUndefined();
  });

  it('a correction moves what a line added onto the right item once; asked again, nothing moves', () => {
    const b = book();
    b.observe(purchase(), namesOf(CATALOGUE), NOW);
    const moved = b.correctLine({ purchaseId: 'pur_1', line: 0 }, 'itm_bread', 1, NOW);
    expect(movesOf(moved)).toEqual(['DEDUCT 10 itm_milk @60', 'ADD 10 itm_bread @60']);
    expect(b.correctLine({ purchaseId: 'pur_1', line: 0 }, 'itm_bread', 1, NOW)).toEqual([]);
    expect(b.stockedLine({ purchaseId: 'pur_1', line: 2 })).toMatch(/has added no stock/);
    // Taken back from the item it is on now.
    expect(movesOf(b.observe(purchase({ status: 'rejected' }), namesOf(CATALOGUE), NOW))).toEqual([
      'DEDUCT 10 itm_bread @60',
    ]);
  });

  it('a merchant mapping outranks a learned one, and is handed to the buckets, not carried', () => {
    const b = book();
    b.mappings.put({
      supplierPin: SUPPLIER,
      by: 'description',
      key: 'fresh milk 500ml',
      itemId: 'itm_bread',
      factor: 1,
      source: 'merchant',
    });
    b.mappings.put({
      supplierPin: SUPPLIER,
      by: 'description',
      key: 'FRESH MILK 500ML',
      itemId: 'itm_milk',
      factor: 1,
      source: 'learned',
    });
    // The carry holds no mapping: what changed goes to the buckets, and a later run reads it back from them.
    expect(b.carry().mappings).toEqual([]);
    const changes = b.mappings.takeChanges();
    expect(changes.put.map((m) => ['itemId' in m ? m.itemId : null, m.source])).toEqual([['itm_bread', 'merchant']]);
    expect(b.mappings.takeChanges()).toEqual({ put: [], remove: [] });
    const next = new StockInBook('biz_1', 'stock-in:sales:biz_1', { ...b.carry(), schema: 2 });
    next.mappings.load(changes.put);
    expect(next.mappings.takeChanges().put).toEqual([]);
    expect(movesOf(next.observe(purchase(), namesOf(CATALOGUE), NOW))).toEqual(['ADD 10 itm_bread @60']);
    expect(next.invoice('pur_1')!.lines[0]!.match).toMatchObject({ by: 'merchant' });
  });

  it('refuses to map a line that does not wait, naming why', () => {
    const b = book();
    expect(b.waitingLine({ purchaseId: 'pur_x', line: 0 })).toMatch(/no supplier invoice pur_x/);
    b.observe(purchase(), namesOf(CATALOGUE), NOW);
    expect(b.waitingLine({ purchaseId: 'pur_1', line: 0 })).toMatch(/not waiting/);
    expect(b.waitingLine({ purchaseId: 'pur_1', line: 7 })).toMatch(/has no line 7/);
    expect(b.waitingLine({ purchaseId: 'pur_1', line: 1 })).toMatchObject({ description: 'CTN 24x1KG SUGAR' });
  });
});

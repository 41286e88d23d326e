import { describe, expect, it } from 'vitest';
import { stockInWorkflowId } from '../../src/contracts/stock-in.js';
import { isIncomingStock, type StockLine } from '../../src/contracts/stock-ledger.js';
import { rememberedLineId } from '../../workflows/keys.js';
import { LedgerBook } from '../../workflows/stock-ledger/book.js';

const coalesced = { mode: 'coalesced' as const, maxDelaySeconds: 120 };
const line = (
  n: number,
  itemId = 'itm_a',
  quantity = 1,
  action: 'ADD' | 'DEDUCT' = 'DEDUCT',
  unitPrice = 10,
): StockLine => ({
  lineId: `doc-${n}:0:${action}`,
  saleWorkflowId: `sale:${n}`,
  itemId,
  action,
  quantity,
  unitPrice,
});

describe("the stock ledger's book", () => {
  it('merges waiting lines of one item, action and price, and keeps the others for their own movements', () => {
    const book = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    book.take(
      [line(1), line(2, 'itm_a', 2), line(3, 'itm_a', 1, 'ADD'), line(4, 'itm_a', 5, 'DEDUCT', 11), line(5, 'itm_b')],
      coalesced,
      0,
    );
    const first = book.nextMovement('itm_a')!;
    expect(first).toMatchObject({ action: 'DEDUCT', quantity: 3, unitPrice: 10, referenceId: 'stk:TAG:1' });
    expect(first.lines.map((l) => l.lineId)).toEqual(['doc-1:0:DEDUCT', 'doc-2:0:DEDUCT']);
    book.answered('itm_a', first, 'mov_1', 97);
    expect(book.nextMovement('itm_a')).toMatchObject({ action: 'ADD', quantity: 1, referenceId: 'doc-3:0:ADD' });
  });

  it('carries everything unsettled over continue-as-new: waiting lines, lost answers, what it knows, the lines it took', () => {
    const book = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    book.take([line(1), line(2, 'itm_b', 4)], coalesced, 0);
    book.answered('itm_a', undefined, undefined, 50);
    const lost = book.nextMovement('itm_a')!;
    book.sending(lost, 1000);
    book.uncertain(lost);
    book.take([line(3)], coalesced, 2000);

    const next = new LedgerBook('biz', 'first-branch', 'TAG', book.carry(), 5000);
    // A waiting line's max delay keeps counting from when it was taken, not from the new run.
    expect(next.oldestPendingAt('itm_b')).toBe(0);
    expect(next.oldestPendingAt('itm_a')).toBe(2000);
    expect(next.state()).toMatchObject({
      onHand: { itm_a: 50 },
      pending: { itm_a: 1, itm_b: 1 },
      open: [expect.objectContaining({ referenceId: 'doc-1:0:DEDUCT', status: 'uncertain', onHandBefore: 50 })],
    });
    // The same hand-over again after the new run started: taken once.
    expect(next.take([line(1), line(2, 'itm_b', 4), line(3)], coalesced, 6000)).toBe(0);
    // The lost answer is still settled by the next quantity: applied.
    const settled = next.answered('itm_a', undefined, undefined, 49);
    expect(settled.applied.map((m) => m.referenceId)).toEqual(['doc-1:0:DEDUCT']);
    expect(next.totals).toMatchObject({ linesTaken: 3, settledByEvidence: 1, probes: 2 });
  });

  it('remembers recorded lines past its recent list, so a late duplicate hand-over is still taken once', () => {
    const book = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    book.answered('itm_a', undefined, undefined, 1000);
    for (let n = 1; n <= 250; n++) {
      book.take([line(n)], { mode: 'per-sale' }, n);
      const m = book.nextMovement('itm_a')!;
      book.answered('itm_a', m, `mov_${n}`, 1000 - n);
    }
    const next = new LedgerBook('biz', 'first-branch', 'TAG', book.carry(), 0);
    expect(next.take([line(1), line(250)], coalesced, 0)).toBe(0);
    expect(next.state().recent).toHaveLength(0);
  });

  it('carries what it remembers in bounded size: line ids as digests, the quantities of the items moved last', () => {
    const book = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    for (let n = 1; n <= 3_500; n++) {
      const item = `itm_${n}`;
      book.answered(item, undefined, undefined, 100);
      book.take([line(n, item)], { mode: 'per-sale' }, n);
      book.answered(item, book.nextMovement(item)!, `mov_${n}`, 99);
    }
    const carry = book.carry();
    expect(carry.lineIds).toHaveLength(3_000);
    expect(carry.lineIds.every((id) => /^#[A-Za-z0-9_-]{16}$/.test(id))).toBe(true);
    expect(Object.keys(carry.onHand)).toHaveLength(2_000);
    expect(carry.onHand['itm_3500']).toBe(99);
    expect(carry.onHand['itm_1']).toBeUndefined();
    // About 2 × 60 KB, whatever a line's reference looks like or how many items the branch ever moved.
    expect(JSON.stringify(carry).length).toBeLessThan(150_000);
    const next = new LedgerBook('biz', 'first-branch', 'TAG', carry, 0);
    expect(next.take([line(3_500, 'itm_3500'), line(600, 'itm_600')], coalesced, 0)).toBe(0);
    expect(next.take([line(400, 'itm_400')], coalesced, 0)).toBe(1);
  });

  it('reads a carry of schema 1, whose remembered line ids are the ids themselves', () => {
    const old = { ...new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0).carry(), schema: 1 };
    old.lineIds = ['doc-7:0:DEDUCT', 'doc-8:0:DEDUCT'];
    const next = new LedgerBook('biz', 'first-branch', 'TAG', old, 0);
    expect(next.take([line(7), line(8), line(9)], coalesced, 0)).toBe(1);
    expect(next.carry().lineIds).toEqual([rememberedLineId('doc-7:0:DEDUCT'), rememberedLineId('doc-8:0:DEDUCT')]);
  });

  it('folds goods that came in of one item, action and price as they arrive: one waiting line, weighed by bytes', () => {
    const stockIn = stockInWorkflowId('sales', 'biz');
    const incoming = (n: number, itemId = 'itm_a', quantity = 1, unitPrice = 10): StockLine => ({
      ...line(n, itemId, quantity, 'ADD', unitPrice),
      lineId: `sin-${n}`,
      saleWorkflowId: stockIn,
    });
    const book = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    const delivered = Array.from({ length: 30 }, (_, n) => incoming(n, 'itm_a', 0.5));
    expect(book.take([...delivered, incoming(30, 'itm_a', 1, 11), incoming(31, 'itm_b'), line(32)], coalesced, 0)).toBe(
      33,
    );
    // 29 lines folded into the first weigh 2.9 lines, beside 3 waiting lines of incoming goods; a sale's is not counted.
    expect(book.backlog()).toBe(Math.ceil(3 + 29 * 0.1));
    expect(book.state().pending).toEqual({ itm_a: 32, itm_b: 1 });
    // The same hand-over again, in any order: taken once, folded or not.
    expect(book.take([...delivered].reverse(), coalesced, 1)).toBe(0);

    const next = new LedgerBook('biz', 'first-branch', 'TAG', book.carry(), 2);
    expect(next.take(delivered, coalesced, 3)).toBe(0);
    const m = next.nextMovement('itm_a')!;
    expect(m).toMatchObject({ action: 'ADD', quantity: 15, unitPrice: 10, referenceId: 'stk:TAG:1' });
    expect(next.state().open[0]!.lines).toEqual([
      { lineId: 'sin-0', saleWorkflowId: stockIn, quantity: 15, folded: 29 },
    ]);
    // Never sent: back as it was; then recorded, every folded line counts.
    next.unsend(m);
    const again = next.nextMovement('itm_a')!;
    expect(again.quantity).toBe(15);
    next.answered('itm_a', again, 'mov_1', 115);
    expect(next.totals.linesRecorded).toBe(30);
    // Past the recent list and over another run, the folded lines are still remembered.
    let last = next;
    for (let n = 0; n < 201; n++) {
      last.take([incoming(100 + n, `itm_${n}`)], coalesced, 10);
      last.answered(`itm_${n}`, last.nextMovement(`itm_${n}`)!, `mov_x${n}`, 1);
    }
    last = new LedgerBook('biz', 'first-branch', 'TAG', last.carry(), 20);
    expect(last.take(delivered, coalesced, 21)).toBe(0);
  });

  it('folds nothing when each sale goes on its own, nor the lines of sales', () => {
    const stockIn = stockInWorkflowId('sales', 'biz');
    const perSale = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    const a = { ...line(1, 'itm_a', 1, 'ADD'), lineId: 'sin-1', saleWorkflowId: stockIn };
    const b = { ...line(2, 'itm_a', 1, 'ADD'), lineId: 'sin-2', saleWorkflowId: stockIn };
    perSale.take([a, b], { mode: 'per-sale' }, 0);
    expect(perSale.backlog()).toBe(2);
    expect(perSale.nextMovement('itm_a')).toMatchObject({ referenceId: 'sin-1', quantity: 1 });
    const tills = new LedgerBook('biz', 'first-branch', 'TAG', undefined, 0);
    tills.take([line(3), line(4)], coalesced, 0);
    expect(tills.state().pending).toEqual({ itm_a: 2 });
    expect(tills.backlog()).toBe(0);
  });

  it('tells goods that came in (a stock-in’s lines) from a sale’s and a refund’s by the id they were handed over under', () => {
    expect(isIncomingStock({ saleWorkflowId: stockInWorkflowId('sales', 'biz_a') })).toBe(true);
    expect(isIncomingStock({ saleWorkflowId: 'sale:biz_a:INV-1' })).toBe(false);
    expect(isIncomingStock({ saleWorkflowId: 'refund:biz_a:INV-1' })).toBe(false);
  });
});

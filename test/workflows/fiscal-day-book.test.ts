/** The day book's counting, alone: once per receipt number, gaps as ranges, cents exact, amendments after the close. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FISCAL_DAY_SETTINGS, taxBandsOf, type DayEntry } from '../../src/contracts/fiscal-day.js';
import { DayBook } from '../../workflows/fiscal-day/book.js';

const key = { businessId: 'biz', scuId: 'KRACU0100000001', date: '2026-11-28' };

function book(numbering: 'control-unit' | 'label' = 'control-unit') {
  return new DayBook({ ...key, settings: { ...DEFAULT_FISCAL_DAY_SETTINGS, numbering } }, '2026-11-28T21:30:00.000Z');
}

function entry(receiptNumber: number | null, overrides: Partial<DayEntry> = {}): DayEntry {
  return {
    documentId: `doc_${receiptNumber ?? Math.random()}`,
    traderInvoiceNumber: `INV-${receiptNumber}`,
    label: 'NS',
    receiptNumber,
    cuInvoiceNo: `${key.scuId}/${receiptNumber}`,
    taxes: taxBandsOf([{ taxTypeCode: 'B', taxableAmount: 86.21, taxAmount: 13.79, total: 100 }]),
    ...overrides,
  };
}

describe('DayBook', () => {
  it('counts a receipt number once, whatever order or repeats, and names the numbers never seen as ranges', () => {
    const b = book();
    for (const n of [5, 1, 2, 2, 9, 3, 5, 10]) b.take(entry(n));
    expect(b.summary.receipts).toEqual({ NS: 6 });
    expect(b.summary.numbering.all).toEqual({
      first: 1,
      last: 10,
      gaps: [
        { from: 4, to: 4 },
        { from: 6, to: 8 },
      ],
      missing: 4,
    });
    expect(b.take(entry(9))).toBe(false);
    for (const n of [4, 6, 7, 8]) expect(b.take(entry(n))).toBe(true);
    expect(b.summary.numbering.all).toEqual({ first: 1, last: 10, gaps: [], missing: 0 });
    expect(b.carry().counted).toEqual({ all: '1.9' });
  });

  it('sums to the cent: 10,000 sales of 0.10 tax are 1,000.00, not a float off by a hair', () => {
    const b = book();
    const taxes = taxBandsOf([{ taxTypeCode: 'A', taxableAmount: 0.7, taxAmount: 0.1, total: 0.8 }]);
    for (let n = 1; n <= 10_000; n++) b.take(entry(n, { taxes }));
    expect(b.summary.taxes).toEqual({ A: { taxable: 700_000, tax: 100_000, total: 800_000 } });
    // Bounded: a day of 10,000 receipts in order carries one range.
    expect(JSON.stringify(b.carry()).length).toBeLessThan(2_000);
  });

  it('carries a day of 10,000 receipts each after a gap (another system signing between) in under 64 KB', () => {
    const b = book();
    for (let n = 1; n <= 10_000; n++) b.take(entry(100_000 + 2 * n));
    expect(b.summary.numbering.all).toMatchObject({ first: 100_002, last: 120_000, missing: 9_999 });
    expect(b.summary.numbering.all!.gaps).toHaveLength(500);
    const carry = JSON.stringify(b.carry());
    expect(carry.length).toBeLessThan(64 * 1024);
    // The next run reads the same numbers back: none of them counts twice, a gap's number once.
    const next = new DayBook({ ...key, settings: DEFAULT_FISCAL_DAY_SETTINGS, carried: JSON.parse(carry) }, 'ignored');
    expect(next.take(entry(100_002))).toBe(false);
    expect(next.take(entry(120_000))).toBe(false);
    expect(next.take(entry(100_003))).toBe(true);
    expect(next.summary.numbering.all!.missing).toBe(9_998);
  });

  it('counts a receipt without a number once by its document id', () => {
    const b = book();
    expect(b.take(entry(null, { documentId: 'doc_x' }))).toBe(true);
    expect(b.take(entry(null, { documentId: 'doc_x' }))).toBe(false);
    expect(b.summary.unnumbered).toBe(1);
    expect(b.summary.receipts).toEqual({ NS: 1 });
  });

  it('numbers each label apart when the service numbers them so', () => {
    const b = book('label');
    b.take(entry(1));
    b.take(entry(1, { label: 'NC', documentId: 'crn_1' }));
    expect(Object.keys(b.summary.numbering).sort()).toEqual(['NC', 'NS']);
    expect(b.missing()).toBe(0);
  });

  it('after the close, a late document is counted and gathered into the next amendment', () => {
    const b = book();
    b.take(entry(1));
    b.close('2026-11-28T21:30:00.000Z');
    expect(b.amendmentWaiting).toBe(false);
    b.take(entry(2));
    b.take(entry(2));
    b.take(entry(3, { label: 'NC' }));
    expect(b.amendmentWaiting).toBe(true);
    const amendment = b.takeAmendment();
    expect(amendment).toMatchObject({ number: 1, receipts: { NS: 1, NC: 1 } });
    expect(amendment!.taxes.B!.total).toBe(20_000);
    expect(b.summary.receipts).toEqual({ NS: 2, NC: 1 });
    expect(b.takeAmendment()).toBeUndefined();
  });

  it('a run picks up where the last left off from its carry', () => {
    const b = book();
    for (const n of [1, 2, 4]) b.take(entry(n));
    const next = new DayBook({ ...key, settings: DEFAULT_FISCAL_DAY_SETTINGS, carried: b.carry() }, 'ignored');
    expect(next.take(entry(2))).toBe(false);
    expect(next.take(entry(3))).toBe(true);
    expect(next.summary.numbering.all).toMatchObject({ first: 1, last: 4, missing: 0 });
  });
});

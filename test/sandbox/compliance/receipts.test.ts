import { describe, expect, it } from 'vitest';
import { buildReceipt, formatScuId, nairobiDateTime } from '../../../sandbox/compliance/receipts.js';

const BASE32 = /^[A-Z2-7]+$/;

function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
}

const sale = {
  documentType: 'sale' as const,
  businessPin: 'P051234567X',
  authorityBhfId: '00',
  scuId: 'KRACU0100000001',
  receiptNumber: 101,
  totalReceiptCounter: 3881,
  signedAt: new Date('2026-11-21T22:30:05Z'),
};

describe('formatScuId', () => {
  it('pads the serial to 10 digits after KRACU', () => {
    expect(formatScuId(100000001)).toBe('KRACU0100000001');
    expect(formatScuId(7)).toBe('KRACU0000000007');
    expect(formatScuId(9999999999)).toBe('KRACU9999999999');
  });

  it('rejects serials that do not fit', () => {
    expect(() => formatScuId(10 ** 10)).toThrow(/serial/);
    expect(() => formatScuId(-1)).toThrow(/serial/);
    expect(() => formatScuId(1.5)).toThrow(/serial/);
  });
});

describe('nairobiDateTime', () => {
  it('is UTC+3, crossing midnight, month and year ends', () => {
    expect(nairobiDateTime(new Date('2026-11-21T22:30:05Z'))).toEqual({ date: '22/11/2026', time: '01:30:05' });
    expect(nairobiDateTime(new Date('2026-12-31T21:00:00Z'))).toEqual({ date: '01/01/2027', time: '00:00:00' });
    expect(nairobiDateTime(new Date('2026-02-28T20:59:59.999Z'))).toEqual({ date: '28/02/2026', time: '23:59:59' });
    expect(nairobiDateTime(new Date('2026-07-01T09:05:00Z'))).toEqual({ date: '01/07/2026', time: '12:05:00' });
  });

  it('agrees with the Africa/Nairobi zone of the platform', () => {
    const at = new Date('2026-03-29T23:45:17Z');
    const parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Africa/Nairobi',
      day: '2-digit',
      month: '2-digit',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    }).format(at);
    const { date, time } = nairobiDateTime(at);
    expect(`${date}, ${time}`).toBe(parts);
  });
});

describe('buildReceipt', () => {
  it('fills every field in the documented format for a sale', () => {
    const receipt = buildReceipt(sale);
    expect(receipt.cuInvoiceNo).toBe('KRACU0100000001/101');
    expect(receipt.receiptNumber).toBe(101);
    expect(receipt.receiptLabel).toBe('NS');
    expect(receipt.scuId).toMatch(/^KRACU\d{10}$/);
    expect(receipt.scuDate).toBe('22/11/2026');
    expect(receipt.scuTime).toBe('01:30:05');
    expect(receipt.scuDate).toMatch(/^\d{2}\/\d{2}\/\d{4}$/);
    expect(receipt.scuTime).toMatch(/^\d{2}:\d{2}:\d{2}$/);
    expect(receipt.totalReceiptCounter).toBe('3881');
    expect(receipt.signature).toMatch(BASE32);
    expect(receipt.signature).toHaveLength(16);
    expect(receipt.internalData).toMatch(BASE32);
    expect(receipt.internalData).toHaveLength(26);
    expect(receipt.verificationUrl).toBe(
      `https://etims-sbx.kra.go.ke/common/link/etims/receipt/indexEtimsReceiptData?Data=P051234567X00${receipt.signature}`,
    );
    expect(receipt.originalCuInvoiceNo).toBeNull();
  });

  it('labels a credit note NC and carries the original CU invoice number', () => {
    const receipt = buildReceipt({ ...sale, documentType: 'credit_note', originalCuInvoiceNo: 'KRACU0100000001/100' });
    expect(receipt.receiptLabel).toBe('NC');
    expect(receipt.originalCuInvoiceNo).toBe('KRACU0100000001/100');
  });

  it('uses the given verification host', () => {
    const receipt = buildReceipt({ ...sale, verificationHost: 'etims.kra.go.ke' });
    expect(receipt.verificationUrl).toMatch(
      /^https:\/\/etims\.kra\.go\.ke\/common\/link\/etims\/receipt\/indexEtimsReceiptData\?Data=P051234567X00[A-Z2-7]{16}$/,
    );
  });

  it('draws signature characters from the injected random source', () => {
    // 0 → 'A', 0.99 → '7' (last of the 32 letters), 0.5 → index 16 'Q'
    const receipt = buildReceipt({ ...sale, random: sequence([0, 0.99, 0.5]) });
    expect(receipt.signature).toBe('A7QA7QA7QA7QA7QA');
    expect(receipt.internalData).toBe('7QA7QA7QA7QA7QA7QA7QA7QA7Q');
    const again = buildReceipt({ ...sale, random: sequence([0, 0.99, 0.5]) });
    expect(again).toEqual(receipt);
  });

  it('gives different signatures without an injected source', () => {
    const signatures = new Set(Array.from({ length: 20 }, () => buildReceipt(sale).signature));
    expect(signatures.size).toBe(20);
  });

  it('rejects bad counters, dates and random sources, naming the input', () => {
    expect(() => buildReceipt({ ...sale, receiptNumber: 0 })).toThrow(/receiptNumber/);
    expect(() => buildReceipt({ ...sale, totalReceiptCounter: 1.5 })).toThrow(/totalReceiptCounter/);
    expect(() => buildReceipt({ ...sale, signedAt: new Date('nope') })).toThrow(/signedAt/);
    expect(() => buildReceipt({ ...sale, random: () => 1 })).toThrow(/random/);
  });
});

import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { renderReceiptPdf, type ReceiptPdfInput } from '../../../sandbox/compliance/receipt-pdf.js';
import { buildReceipt } from '../../../sandbox/compliance/receipts.js';
import { lineAmounts, sumTotals } from '../../../sandbox/compliance/tax.js';

function saleInput(type: 'sale' | 'credit_note' = 'sale', random?: () => number): ReceiptPdfInput {
  const sign = type === 'credit_note' ? -1 : 1;
  const lines = [
    { name: 'Sugar 1kg', quantity: sign * 3, unitPrice: 33.335, taxTypeCode: 'B' },
    { name: 'Maize flour 2kg', quantity: sign * 1, unitPrice: 108, taxTypeCode: 'E' },
  ].map((line) => ({ ...line, ...lineAmounts(line.quantity, line.unitPrice, line.taxTypeCode) }));
  const receipt = buildReceipt({
    documentType: type,
    businessPin: 'P051234567X',
    authorityBhfId: '00',
    scuId: 'KRACU0100000001',
    receiptNumber: 42,
    totalReceiptCounter: 4242,
    signedAt: new Date('2026-11-21T22:30:05Z'),
    originalCuInvoiceNo: type === 'credit_note' ? 'KRACU0100000001/41' : null,
    ...(random ? { random } : {}),
  });
  return {
    businessName: 'Duka Bora Ltd',
    businessPin: 'P051234567X',
    branchName: 'Nairobi CBD',
    document: {
      type,
      traderInvoiceNumber: type === 'credit_note' ? 'CN-2026-0007' : 'INV-2026-0042',
      saleDate: '2026-11-22',
      customer: { name: 'Wanjiku Traders', pin: 'P000111222Z' },
      lines,
      totals: sumTotals(lines),
      receipt,
    },
  };
}

/** The text drawn on the page: pdfkit writes each run as hex strings inside TJ arrays. */
function drawnText(pdf: Buffer): string {
  const source = pdf.toString('latin1');
  const runs: string[] = [];
  for (const match of source.matchAll(/\[([^\]]*)\]\s*TJ/g)) {
    const hex = [...(match[1] ?? '').matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => m[1] ?? '').join('');
    runs.push(Buffer.from(hex, 'hex').toString('latin1'));
  }
  return runs.join('\n');
}

/** Rebuilds the QR module grid from the filled rectangles of the page. */
function drawnQrModules(pdf: Buffer, size: number): boolean[][] {
  const rects = [...pdf.toString('latin1').matchAll(/(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re/g)].map((m) =>
    m.slice(1, 5).map(Number),
  ) as [number, number, number, number][];
  const originX = Math.min(...rects.map((r) => r[0]));
  const originY = Math.min(...rects.map((r) => r[1]));
  const cell = Math.min(...rects.map((r) => r[3]));
  const grid = Array.from({ length: size }, () => Array.from({ length: size }, () => false));
  for (const [x, y, w] of rects) {
    const row = Math.round((y - originY) / cell);
    const first = Math.round((x - originX) / cell);
    const count = Math.round(w / cell);
    for (let col = first; col < first + count; col++) {
      const cells = grid[row];
      if (cells) cells[col] = true;
    }
  }
  return grid;
}

describe('renderReceiptPdf', () => {
  it('produces a complete PDF file', async () => {
    const pdf = await renderReceiptPdf(saleInput());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.toString('latin1').trimEnd().endsWith('%%EOF')).toBe(true);
    expect(pdf.length).toBeGreaterThan(1000);
    expect(pdf.toString('latin1').match(/\/Type \/Page\b(?!s)/g)).toHaveLength(1);
  });

  it('carries the CU and trader invoice numbers in the document information', async () => {
    const input = saleInput();
    const pdf = (await renderReceiptPdf(input)).toString('latin1');
    expect(pdf).toContain(input.document.receipt.cuInvoiceNo);
    expect(pdf).toContain('INV-2026-0042');
  });

  it('prints the business, lines, totals and every receipt value on the page', async () => {
    const input = saleInput();
    const { receipt } = input.document;
    const text = drawnText(await renderReceiptPdf(input));
    for (const expected of [
      'Duka Bora Ltd',
      'PIN: P051234567X',
      'Nairobi CBD',
      'TAX INVOICE',
      'INV-2026-0042',
      'Wanjiku Traders',
      'Sugar 1kg',
      '3 x 33.335', // a unit price finer than a cent is printed as is
      '1 x 108.00',
      '100.01 B',
      '108.00 E',
      '208.01', // 100.01 + 108.00
      '186.22', // 86.22 + 100.00
      '21.79', // 13.79 + 8.00
      'KRACU0100000001',
      '22/11/2026 01:30:05',
      'KRACU0100000001/42 NS',
      '42 / 4242 NS',
      receipt.internalData,
      receipt.signature,
    ]) {
      expect(text).toContain(expected);
    }
    // The URL is wrapped to the page width.
    expect(text.replaceAll('\n', '')).toContain(receipt.verificationUrl);
    expect(text).not.toContain('CREDIT NOTE');
  });

  it('labels a credit note and prints the original CU invoice number and negative amounts', async () => {
    const text = drawnText(await renderReceiptPdf(saleInput('credit_note')));
    expect(text).toContain('CREDIT NOTE');
    expect(text).toContain('Original CU invoice: KRACU0100000001/41');
    expect(text).toContain('KRACU0100000001/42 NC');
    expect(text).toContain('-208.01');
  });

  it('draws a QR code that encodes the verification URL', async () => {
    const input = saleInput();
    const expected = QRCode.create(input.document.receipt.verificationUrl, { errorCorrectionLevel: 'M' }).modules;
    const grid = drawnQrModules(await renderReceiptPdf(input), expected.size);
    const mismatches: string[] = [];
    for (let row = 0; row < expected.size; row++) {
      for (let col = 0; col < expected.size; col++) {
        if (Boolean(expected.get(row, col)) !== grid[row]?.[col]) mismatches.push(`${row},${col}`);
      }
    }
    expect(mismatches).toEqual([]);
    // A different URL gives a different grid, so the comparison above can fail.
    const other = QRCode.create(`${input.document.receipt.verificationUrl}X`, { errorCorrectionLevel: 'M' }).modules;
    let differing = 0;
    for (let row = 0; row < other.size; row++) {
      for (let col = 0; col < other.size; col++) if (Boolean(other.get(row, col)) !== grid[row]?.[col]) differing++;
    }
    expect(differing).toBeGreaterThan(0);
  });

  it('keeps the widest possible codes on one line each', async () => {
    const widest = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'.indexOf('W');
    const input = saleInput('sale', () => (widest + 0.5) / 32);
    expect(input.document.receipt.internalData).toBe('W'.repeat(26));
    const lines = drawnText(await renderReceiptPdf(input)).split('\n');
    expect(lines).toContain('W'.repeat(26));
    expect(lines).toContain('W'.repeat(16));
  });

  it('grows the page with the number of lines, so a long credit note stays on one page', async () => {
    const input = saleInput('credit_note');
    const lines = Array.from({ length: 40 }, (_, i) => ({
      name: `Item ${i + 1}`,
      quantity: -2,
      unitPrice: 12.5,
      taxTypeCode: 'B',
      ...lineAmounts(-2, 12.5, 'B'),
    }));
    const pdf = await renderReceiptPdf({ ...input, document: { ...input.document, lines, totals: sumTotals(lines) } });
    expect(pdf.toString('latin1').match(/\/Type \/Page\b(?!s)/g)).toHaveLength(1);
    expect(drawnText(pdf)).toContain('Item 40');
  });

  it('handles a sale without a customer or date', async () => {
    const input = saleInput();
    const pdf = await renderReceiptPdf({ ...input, document: { ...input.document, customer: null, saleDate: null } });
    const text = drawnText(pdf);
    expect(text).not.toContain('Customer');
    expect(text).toContain(input.document.receipt.cuInvoiceNo);
  });
});

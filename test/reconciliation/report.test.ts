import { describe, expect, it } from 'vitest';
import type { ReconcileBillPayment, ReconcilePurchase } from '../../src/contracts/reconciliation.js';
import { toCsv, type ReportInput } from '../../src/reconciliation/report.js';
import { reconcile } from '../../src/reconciliation/rules.js';

const AS_OF = '2025-07-31';
const HEADER =
  'kind,id,category,counterpart_ids,reference,supplier,date,amount,currency,paid,difference,age_days,review';

function invoice(id: string, number: string, total: number, supplier: string): ReconcilePurchase {
  return {
    id,
    status: 'confirmed',
    supplier: { name: supplier },
    supplierInvoiceNumber: number,
    invoiceDate: '2025-06-01',
    totals: { total },
  };
}

function payment(id: string, amount: number, billCode: string, supplier: string): ReconcileBillPayment {
  return {
    id,
    supplierRef: { name: supplier },
    billRef: { billCode },
    totalAmount: amount,
    currency: 'KES',
    date: '2025-06-05',
    lines: [],
  };
}

function input(purchases: ReconcilePurchase[], billPayments: ReconcileBillPayment[]): ReportInput {
  return {
    businessId: 'biz_1',
    companyId: 'cmp_1',
    result: reconcile(purchases, billPayments, AS_OF),
    purchases,
    billPayments,
  };
}

describe('toCsv', () => {
  it('writes a header and one CRLF-terminated record per invoice and per payment', () => {
    const csv = toCsv(input([invoice('pur_1', 'INV-1', 100, 'Kibo Ltd')], [payment('bp_1', 100, 'INV-1', 'Kibo Ltd')]));
    expect(csv).toBe(
      `${HEADER}\r\n` +
        'purchase,pur_1,matched,bp_1,INV-1,Kibo Ltd,2025-06-01,100,,100,0,,\r\n' +
        'billPayment,bp_1,matched,pur_1,INV-1,Kibo Ltd,2025-06-05,100,KES,,,,\r\n',
    );
  });

  it('writes only what is in the result, not what was read outside the period', () => {
    const old = { ...invoice('pur_old', 'INV-9', 100, 'Kibo Ltd'), invoiceDate: '2025-01-01' };
    const early = { ...payment('bp_early', 9, 'RENT', 'Kibo Ltd'), date: '2025-05-10' };
    const csv = toCsv(input([old, invoice('pur_1', 'INV-1', 100, 'Kibo Ltd')], [early]));
    expect(csv).toBe(`${HEADER}\r\n` + 'purchase,pur_1,unpaidPurchases,,INV-1,Kibo Ltd,2025-06-01,100,,,,60,\r\n');
  });

  it('writes only the header when there is nothing to report', () => {
    expect(toCsv(input([], []))).toBe(`${HEADER}\r\n`);
  });

  it('quotes fields with commas, quotes or line breaks (RFC 4180)', () => {
    const csv = toCsv(input([], [payment('bp_1', 5, 'A,B', 'Say "hi"\r\nLtd'), payment('bp_2', 6, 'x\ny', 'tail\r')]));
    expect(csv.split('\r\n').slice(1, -1).join('\r\n')).toBe(
      'billPayment,bp_1,unmatchedPayments,,"A,B","Say ""hi""\r\nLtd",2025-06-05,5,KES,,,,\r\n' +
        'billPayment,bp_2,unmatchedPayments,,"x\ny","tail\r",2025-06-05,6,KES,,,,',
    );
  });

  it('prefixes text a spreadsheet would run as a formula with an apostrophe, but not negative numbers', () => {
    const names = ['=HYPERLINK("x")', '+1', '-1', '@SUM(A1)', '\tTab', '\rCR'];
    const csv = toCsv(
      input(
        [],
        names.map((name, i) => payment(`bp_${i}`, -(i + 1), `ref ${i}`, name)),
      ),
    );
    const suppliers = csv
      .split('\r\nbillPayment,')
      .slice(1)
      .map((record) => record.split(',').slice(4, 6).join(','));
    expect(suppliers).toEqual([
      `"'=HYPERLINK(""x"")",2025-06-05`,
      `'+1,2025-06-05`,
      `'-1,2025-06-05`,
      `'@SUM(A1),2025-06-05`,
      `'\tTab,2025-06-05`,
      `"'\rCR",2025-06-05`,
    ]);
    // Amounts are numbers, not text: a negative amount stays a number.
    expect(csv).toContain(`,2025-06-05,-1,KES,`);
    expect(csv).toContain(`,2025-06-05,-6,KES,`);
  });

  it('also prefixes the full-width = + - @ that some spreadsheets read as their ASCII forms', () => {
    const csv = toCsv(input([], [payment('bp_1', 1, '\uFF1D1+1', '\uFF20cmd')]));
    expect(csv).toContain(`,'\uFF1D1+1,'\uFF20cmd,`);
  });
});

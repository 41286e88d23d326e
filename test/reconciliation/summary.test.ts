import { describe, expect, it } from 'vitest';
import type {
  ReconcileBillPayment,
  ReconcileBusinessResult,
  ReconcilePurchase,
  ReconciliationResult,
} from '../../src/contracts/reconciliation.js';
import { RESULT_IDS_PER_ENTRY, RESULT_LIST_LIMITS, RESULT_MAX_BYTES } from '../../src/reconciliation/limits.js';
import { dayNumber, dayString, reconcile, reconciliationPeriod } from '../../src/reconciliation/rules.js';
import { SUMMARY_LIMITS, summarize, utf8Length } from '../../src/reconciliation/summary.js';

const AS_OF = '2026-11-27';
const KB = 1024;

function invoice(id: string, number: string, total: number, date: string, supplier = 'Kibo Ltd'): ReconcilePurchase {
  return {
    id,
    status: 'confirmed',
    supplier: { name: supplier },
    supplierInvoiceNumber: number,
    invoiceDate: date,
    totals: { total },
  };
}

function payment(
  id: string,
  amount: number,
  date: string,
  billCode?: string,
  supplier = 'Kibo Ltd',
): ReconcileBillPayment {
  return {
    id,
    supplierRef: { name: supplier },
    billRef: billCode === undefined ? null : { billCode },
    totalAmount: amount,
    currency: 'KES',
    date,
    lines: [],
  };
}

const daysBefore = (n: number) => dayString(dayNumber(AS_OF)! - n);

describe('summarize', () => {
  it('keeps every count and lists what needs a person, capped, saying how many each list leaves out', () => {
    const purchases = Array.from({ length: 260 }, (_, i) =>
      invoice(`p${String(i).padStart(3, '0')}`, `INV-${1000 + i}`, 100 + i, daysBefore(i % 80)),
    );
    // The first 10 paid in full, the next 5 short; the rest unpaid. 230 payments of nothing.
    const payments = [
      ...purchases
        .slice(0, 10)
        .map((p, i) => payment(`b_paid_${i}`, p.totals.total, daysBefore(1), p.supplierInvoiceNumber)),
      ...purchases
        .slice(10, 15)
        .map((p, i) => payment(`b_short_${i}`, p.totals.total - 10 * (i + 1), daysBefore(1), p.supplierInvoiceNumber)),
      ...Array.from({ length: 230 }, (_, i) =>
        payment(`b_none_${String(i).padStart(3, '0')}`, 50 + i, daysBefore(i % 60), `RENT-${i}`),
      ),
    ];
    const result = reconcile(purchases, payments, AS_OF);
    const summary = summarize(result, payments);

    expect(summary.counts).toEqual(result.counts);
    expect(summary.counts).toMatchObject({
      matched: 10,
      amountMismatches: 5,
      unpaidPurchases: 245,
      unmatchedPayments: 230,
    });
    expect(summary.truncated).toEqual({ matched: 10, unpaidPurchases: 45, unmatchedPayments: 30 });
    expect(summary.matched).toEqual([]);
    expect(summary.unpaidPurchases).toHaveLength(RESULT_LIST_LIMITS.unpaidPurchases);
    expect(summary.unmatchedPayments).toHaveLength(RESULT_LIST_LIMITS.unmatchedPayments);
    // Complete lists are absent from `truncated`, and in full.
    expect(summary.amountMismatches).toHaveLength(5);
    // Mismatches by the money at stake, unpaid invoices oldest first, payments without an invoice newest first.
    expect(summary.amountMismatches.map((p) => p.difference)).toEqual([-50, -40, -30, -20, -10]);
    const ages = summary.unpaidPurchases.map((id) => summary.unpaidAgeDays[id]!);
    expect(ages).toEqual(ages.toSorted((a, b) => b - a));
    expect(ages[0]).toBe(79);
    expect(Object.keys(summary.unpaidAgeDays)).toHaveLength(summary.unpaidPurchases.length);
    const dates = summary.unmatchedPayments.map((id) => payments.find((b) => b.id === id)!.date);
    expect(dates).toEqual(dates.toSorted().reverse());
    expect(summary).toMatchObject({ asOf: AS_OF, period: result.period, outsidePeriod: result.outsidePeriod });
  });

  it('is the result itself, lists in full, when nothing is over its cap and nothing is matched or rejected', () => {
    const purchases = [invoice('p1', 'INV-1', 100, daysBefore(3))];
    const payments = [payment('b1', 90, daysBefore(2), 'INV-1'), payment('b2', 5, daysBefore(1), 'X')];
    const result = reconcile(purchases, payments, AS_OF);
    expect(summarize(result, payments)).toEqual({ ...result, truncated: {} });
  });

  it('keeps at most a few ids in one entry, saying how many it leaves out', () => {
    const purchases = [invoice('p1', 'INV-1', 50_000, daysBefore(10))];
    // Fifty equal payments, no reference: all fit, one tie. Thirty part payments by reference: one mismatch.
    const payments = [
      ...Array.from({ length: 50 }, (_, i) => payment(`b_tie_${String(i).padStart(2, '0')}`, 50_000, daysBefore(5))),
    ];
    const tied = summarize(reconcile(purchases, payments, AS_OF), payments);
    expect(tied.ties).toHaveLength(1);
    expect(tied.ties[0]!.billPaymentIds).toHaveLength(RESULT_IDS_PER_ENTRY);
    expect(tied.ties[0]!.omitted).toEqual({ purchaseIds: 0, billPaymentIds: 50 - RESULT_IDS_PER_ENTRY });
    expect(tied.truncated).toEqual({});

    const parts = Array.from({ length: 30 }, (_, i) => payment(`b_part_${i}`, 100, daysBefore(5), 'INV-1'));
    const short = summarize(reconcile(purchases, parts, AS_OF), parts);
    expect(short.amountMismatches[0]!.billPaymentIds).toHaveLength(RESULT_IDS_PER_ENTRY);
    expect(short.amountMismatches[0]!.omittedBillPaymentIds).toBe(30 - RESULT_IDS_PER_ENTRY);
  });

  it('halves the lists until the summary fits its bytes, whatever the ids', () => {
    const long = 'x'.repeat(2_000);
    const payments = Array.from({ length: 200 }, (_, i) => payment(`${long}${i}`, 10 + i, daysBefore(1), `R-${i}`));
    const result = reconcile([], payments, AS_OF);
    const summary = summarize(result, payments);
    expect(utf8Length(JSON.stringify(summary))).toBeLessThanOrEqual(SUMMARY_LIMITS.maxBytes);
    expect(summary.unmatchedPayments.length).toBeLessThan(200);
    expect(summary.unmatchedPayments.length).toBeGreaterThan(0);
    expect(summary.truncated.unmatchedPayments).toBe(200 - summary.unmatchedPayments.length);
    expect(utf8Length('é€😀')).toBe(2 + 3 + 4);
  });
});

/**
 * A chain receiving 300 supplier invoices a day from 400 suppliers, paying most by reference 20 to 60 days later (so
 * many payments of the period pay invoices older than it): the lists a run at the default period reads, and the
 * workflow's result for them.
 */
function chain() {
  const PER_DAY = 300;
  const period = reconciliationPeriod(AS_OF);
  const asOfDay = dayNumber(AS_OF)!;
  const fromDay = dayNumber(period.from)!;
  const paymentsFromDay = dayNumber(period.paymentsFrom)!;
  const purchases: ReconcilePurchase[] = [];
  const payments: ReconcileBillPayment[] = [];
  // Real services' ids are longer than the demo's: 24 characters after the prefix.
  const id = (prefix: string, n: number) => `${prefix}_${n.toString(36).padStart(24, '0')}`;
  let n = 0;
  // Invoices from 60 days before the period, so that payments of the period reach back past its start.
  for (let day = fromDay - 60; day <= asOfDay; day++) {
    for (let k = 0; k < PER_DAY; k++, n++) {
      const supplier = `Supplier ${n % 400} Ltd`;
      const total = 1_000 + ((n * 7_919) % 250_000) / 100;
      const number = `INV-${n}`;
      const p = invoice(id('pur', n), number, total, dayString(day), supplier);
      if (n % 37 === 0) p.status = 'rejected';
      if (day >= fromDay) purchases.push(p);
      const kind = n % 100;
      // By reference 20 to 60 days after the invoice; without one, within the suggestion window.
      const paidDay = kind < 84 || kind === 87 ? day + 20 + (n % 41) : day + (n % 25);
      // Not paid (yet); or before what a run reads (the payment list ends there).
      if (kind >= 90 || paidDay > asOfDay || paidDay < paymentsFromDay) continue;
      const paid = (amount: number, billCode?: string, suffix = '') =>
        payments.push(payment(id(`bp${suffix}`, n), amount, dayString(paidDay), billCode, supplier));
      if (kind < 80) paid(total, number);
      else if (kind < 84)
        paid(total - 150, number); // short
      else if (kind < 87)
        paid(total); // no reference: suggested
      else if (kind < 88)
        paid(total, `PAY-${n}`); // a reference to nothing
      else if (kind < 89) {
        paid(total); // two that fit: a tie
        paid(total, undefined, 'x');
      }
    }
  }
  return { purchases, payments, period };
}

describe('the workflow result of a busy chain at the default period', () => {
  it('stays far below 256 KB, and each page of history near 20 KB', () => {
    const { purchases, payments, period } = chain();
    const started = performance.now();
    const result = reconcile(purchases, payments, AS_OF);
    const summary = summarize(result, payments);
    const ms = performance.now() - started;
    const workflowResult: ReconcileBusinessResult = {
      businessId: 'biz_chain',
      companyId: 'cmp_chain',
      summary,
      counts: summary.counts,
    };
    const bytes = utf8Length(JSON.stringify(workflowResult));
    const fullBytes = utf8Length(JSON.stringify(result satisfies ReconciliationResult));
    const pageBytes = (records: readonly unknown[]) => utf8Length(JSON.stringify(records.slice(0, 100)));
    console.info(
      `chain, ${period.days}-day period: ${purchases.length} invoices, ${payments.length} bill payments read; ` +
        `workflow result ${(bytes / KB).toFixed(1)} KB (the full result ${(fullBytes / KB).toFixed(0)} KB); ` +
        `a page: invoices ${(pageBytes(purchases) / KB).toFixed(1)} KB, payments ` +
        `${(pageBytes(payments) / KB).toFixed(1)} KB; rules and summary ${ms.toFixed(0)} ms; ` +
        `counts ${JSON.stringify(summary.counts)}; truncated ${JSON.stringify(summary.truncated)}`,
    );
    expect(purchases.length).toBe(300 * 90);
    expect(result.counts.purchases).toBe(300 * 90);
    // Every category is there, and the lists that need a person are capped.
    for (const list of ['matched', 'suggested', 'amountMismatches', 'unpaidPurchases', 'unmatchedPayments'] as const)
      expect(summary.counts[list], list).toBeGreaterThan(RESULT_LIST_LIMITS.unpaidPurchases);
    expect(summary.counts.ties).toBeGreaterThan(0);
    expect(Object.keys(summary.truncated).sort()).toEqual(
      [
        'amountMismatches',
        'matched',
        'rejectedPurchases',
        'suggested',
        'unmatchedPayments',
        'unpaidPurchases',
        'ties',
      ].sort(),
    );
    expect(fullBytes).toBeGreaterThan(2 * KB * KB);
    expect(bytes).toBeLessThan(RESULT_MAX_BYTES + KB);
    expect(bytes).toBeLessThan(256 * KB);
    expect(pageBytes(purchases)).toBeLessThan(25 * KB);
    expect(pageBytes(payments)).toBeLessThan(25 * KB);
  });
});

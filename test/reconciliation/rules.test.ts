import { describe, expect, it } from 'vitest';
import {
  MATCH_RULES,
  RESIDUAL_RULES,
  billPaymentListEnd,
  calendarDay,
  dayNumber,
  dayString,
  reconcile,
  reconciliationPeriod,
  supplierKey,
} from '../../src/reconciliation/rules.js';
import {
  MAX_PERIOD_DAYS,
  type ReconcileBillPayment,
  type ReconcileOptions,
  type ReconcilePurchase,
  type ReconciliationResult,
} from '../../src/contracts/reconciliation.js';

const AS_OF = '2025-07-31';

function invoice(
  id: string,
  number: string,
  total: number,
  more: { supplier?: string; date?: string; status?: string } = {},
): ReconcilePurchase {
  return {
    id,
    status: more.status ?? 'confirmed',
    supplier: { name: more.supplier ?? 'Kibo Wholesalers Ltd' },
    supplierInvoiceNumber: number,
    invoiceDate: more.date ?? '2025-06-01',
    totals: { total },
  };
}

interface PaymentSpec {
  billCode?: string;
  /** Lines as [reference, amount]. */
  lines?: Array<[string | null, number | null]>;
  supplier?: string;
  date?: string;
  currency?: string;
}

function payment(id: string, amount: number, spec: PaymentSpec = {}): ReconcileBillPayment {
  return {
    id,
    supplierRef: { name: spec.supplier ?? 'Kibo Wholesalers Ltd' },
    billRef: spec.billCode === undefined ? null : { billCode: spec.billCode },
    totalAmount: amount,
    currency: spec.currency ?? 'KES',
    date: spec.date ?? '2025-06-05',
    lines: (spec.lines ?? []).map(([reference, lineAmount]) => ({ reference, amount: lineAmount })),
  };
}

/** The categories as short strings: a pairing is `purchase=payment+payment`. */
function sorted(result: ReconciliationResult) {
  const pairs = (list: ReconciliationResult['matched']) =>
    list.map((p) => `${p.purchaseId}=${p.billPaymentIds.join('+')}`);
  return {
    matched: pairs(result.matched),
    suggested: pairs(result.suggested),
    amountMismatches: pairs(result.amountMismatches),
    unpaid: result.unpaidPurchases,
    unmatched: result.unmatchedPayments,
    rejected: result.rejectedPurchases,
    ties: result.ties.map((t) => `${t.reason}:${t.purchaseIds.join('+')}|${t.billPaymentIds.join('+')}`),
  };
}

type Expected = Partial<ReturnType<typeof sorted>>;

const NOTHING = { matched: [], suggested: [], amountMismatches: [], unpaid: [], unmatched: [], rejected: [], ties: [] };

function expectSorted(
  purchases: ReconcilePurchase[],
  payments: ReconcileBillPayment[],
  expected: Expected,
  options: Partial<ReconcileOptions> = {},
): ReconciliationResult {
  const result = reconcile(purchases, payments, AS_OF, options);
  expect(sorted(result)).toEqual({ ...NOTHING, ...expected });
  // Every invoice in exactly one category; every payment either paired or unmatched.
  const purchaseIds = [...result.matched, ...result.suggested, ...result.amountMismatches].map((p) => p.purchaseId);
  expect([...purchaseIds, ...result.unpaidPurchases, ...result.rejectedPurchases].sort()).toEqual(
    purchases.map((p) => p.id).sort(),
  );
  const paired = new Set(
    [...result.matched, ...result.suggested, ...result.amountMismatches].flatMap((p) => p.billPaymentIds),
  );
  expect([...paired, ...result.unmatchedPayments].sort()).toEqual(payments.map((b) => b.id).sort());
  return result;
}

describe('the rule table', () => {
  it('lists the match rules in the order they apply, each with a category', () => {
    expect(MATCH_RULES.map((r) => [r.id, r.category])).toEqual([
      ['reference-amount-agrees', 'matched'],
      ['reference-amount-differs', 'amountMismatches'],
      ['supplier-amount-date', 'suggested'],
    ]);
    expect(RESIDUAL_RULES.map((r) => [r.id, r.category])).toEqual([
      ['rejected', 'rejectedPurchases'],
      ['unpaid', 'unpaidPurchases'],
    ]);
  });
});

describe('rule reference-amount-agrees → matched', () => {
  const p = invoice('p1', 'INV-2403', 12_400);
  it.each<[string, ReconcilePurchase[], ReconcileBillPayment[], Expected]>([
    ['bill code is the invoice number', [p], [payment('b1', 12_400, { billCode: 'INV-2403' })], { matched: ['p1=b1'] }],
    [
      'bill code in another case and spacing',
      [p],
      [payment('b1', 12_400, { billCode: ' inv 2403 ' })],
      { matched: ['p1=b1'] },
    ],
    ['bill code without punctuation', [p], [payment('b1', 12_400, { billCode: 'INV2403' })], { matched: ['p1=b1'] }],
    ['leading zeros in the number', [p], [payment('b1', 12_400, { billCode: 'INV-002403' })], { matched: ['p1=b1'] }],
    [
      'a line reference names it among other words',
      [p],
      [payment('b1', 12_400, { billCode: 'LD-BILL-0093', lines: [['Lakeside inv. 2403 (June)', 12_400]] })],
      { matched: ['p1=b1'] },
    ],
    [
      'part payments add up: a deposit by bill code, the balance by line reference',
      [p],
      [
        payment('b1', 10_000, { billCode: 'INV-2403' }),
        payment('b2', 2_400, { billCode: 'X-1', lines: [['INV 2403 balance', 2_400]] }),
      ],
      { matched: ['p1=b1+b2'] },
    ],
    [
      'within the tolerance (0.99 short)',
      [p],
      [payment('b1', 12_399.01, { billCode: 'INV-2403' })],
      { matched: ['p1=b1'] },
    ],
    [
      'exactly at the tolerance (1.00 over)',
      [p],
      [payment('b1', 12_401, { billCode: 'INV-2403' })],
      { matched: ['p1=b1'] },
    ],
    [
      'one payment whose lines pay two invoices, each its line amount',
      [p, invoice('p2', 'INV-2404', 600)],
      [
        payment('b1', 13_000, {
          lines: [
            ['INV-2403', 12_400],
            ['INV-2404', 600],
          ],
        }),
      ],
      { matched: ['p1=b1', 'p2=b1'] },
    ],
    [
      'bill code names the main invoice; a line naming another takes its amount out',
      [p, invoice('p2', 'INV-2404', 600)],
      [
        payment('b1', 13_000, {
          billCode: 'INV-2403',
          lines: [
            ['INV-2403', 12_400],
            ['INV-2404', 600],
          ],
        }),
      ],
      { matched: ['p1=b1', 'p2=b1'] },
    ],
    [
      'two suppliers share the number: the payee tells them apart',
      [
        invoice('p1', '27', 500, { supplier: 'Kibo Wholesalers Ltd' }),
        invoice('p2', '27', 500, { supplier: 'Lakeside Dairies' }),
      ],
      [payment('b1', 500, { billCode: '27', supplier: 'LAKESIDE DAIRIES LIMITED' })],
      { matched: ['p2=b1'], unpaid: ['p1'] },
    ],
    [
      'two invoices share the number: the amount tells them apart',
      [invoice('p1', '27', 500, { supplier: 'A Ltd' }), invoice('p2', '27', 800, { supplier: 'B Ltd' })],
      [payment('b1', 800, { billCode: '27', supplier: 'C Ltd' })],
      { matched: ['p2=b1'], unpaid: ['p1'] },
    ],
    [
      'a reference to a rejected invoice still matches it: the money went out',
      [invoice('p1', 'INV-2403', 12_400, { status: 'rejected' })],
      [payment('b1', 12_400, { billCode: 'INV-2403' })],
      { matched: ['p1=b1'] },
    ],
  ])('%s', (_name, purchases, payments, expected) => {
    expectSorted(purchases, payments, expected);
  });

  it.each<[string, string, string, boolean]>([
    ['a longer number is another invoice', 'INV-2403', 'INV-24031', false],
    ['another prefix is another invoice', 'INV-2403', 'CN-2403', false],
    ['a short number matches only as the whole reference', '27', '27', true],
    ['a short number is not found inside a text', '27', 'Paid 27 crates', false],
    ['a number of four or more characters is found inside a text', '2403', 'Paid 2403 in full', true],
    ['separators do not matter', 'KRA/2025/0042', 'kra-2025-42', true],
  ])('reference matching: %s', (_name, number, reference, matches) => {
    const result = reconcile(
      [invoice('p1', number, 100)],
      [payment('b1', 100, { billCode: reference, supplier: 'Someone else' })],
      AS_OF,
    );
    expect(result.matched.map((m) => m.purchaseId)).toEqual(matches ? ['p1'] : []);
  });

  it('reports what was paid against the total', () => {
    const result = reconcile([invoice('p1', 'INV-1', 100)], [payment('b1', 99.5, { billCode: 'INV-1' })], AS_OF);
    expect(result.matched).toEqual([
      {
        purchaseId: 'p1',
        billPaymentIds: ['b1'],
        rule: 'reference-amount-agrees',
        invoiceTotal: 100,
        paid: 99.5,
        difference: -0.5,
      },
    ]);
  });
});

describe('rule reference-amount-differs → amountMismatches', () => {
  const p = invoice('p1', 'INV-2406', 16_200);
  it.each<[string, ReconcilePurchase[], ReconcileBillPayment[], Expected, Partial<ReconcileOptions>?]>([
    [
      'underpaid (digits swapped)',
      [p],
      [payment('b1', 16_020, { billCode: 'INV2406' })],
      { amountMismatches: ['p1=b1'] },
    ],
    ['overpaid', [p], [payment('b1', 17_000, { billCode: 'INV-2406' })], { amountMismatches: ['p1=b1'] }],
    [
      'one part payment of two made so far',
      [p],
      [payment('b1', 10_000, { billCode: 'INV-2406' })],
      { amountMismatches: ['p1=b1'] },
    ],
    [
      'just outside the tolerance (1.01)',
      [p],
      [payment('b1', 16_198.99, { billCode: 'INV-2406' })],
      { amountMismatches: ['p1=b1'] },
    ],
    [
      'outside a tolerance of 0',
      [p],
      [payment('b1', 16_199.99, { billCode: 'INV-2406' })],
      { amountMismatches: ['p1=b1'] },
      { amountTolerance: 0 },
    ],
    [
      'inside a wider tolerance',
      [p],
      [payment('b1', 16_020, { billCode: 'INV-2406' })],
      { matched: ['p1=b1'] },
      { amountTolerance: 200 },
    ],
    [
      'a payment in another currency is never called equal',
      [p],
      [payment('b1', 16_200, { billCode: 'INV-2406', currency: 'USD' })],
      { amountMismatches: ['p1=b1'] },
    ],
    [
      'a line without an amount among several counts nothing',
      [p],
      [
        payment('b1', 16_200, {
          lines: [
            ['INV-2406', null],
            ['fees', 100],
          ],
        }),
      ],
      { amountMismatches: ['p1=b1'] },
    ],
  ])('%s', (_name, purchases, payments, expected, options = {}) => {
    expectSorted(purchases, payments, expected, options);
  });

  it('says how much differs, and why when it cannot compare', () => {
    const result = reconcile(
      [invoice('p1', 'INV-1', 100)],
      [payment('b1', 100, { billCode: 'INV-1', currency: 'USD' })],
      AS_OF,
    );
    expect(result.amountMismatches[0]).toMatchObject({
      paid: 100,
      difference: 0,
      note: 'b1 is in USD',
      rule: 'reference-amount-differs',
    });
    const short = reconcile([invoice('p1', 'INV-1', 100)], [payment('b1', 60, { billCode: 'INV-1' })], AS_OF);
    expect(short.amountMismatches[0]).toMatchObject({ invoiceTotal: 100, paid: 60, difference: -40 });
  });
});

describe('rule supplier-amount-date → suggested', () => {
  const p = invoice('p1', 'INV-2415', 24_800, { date: '2025-06-09' });
  it.each<[string, ReconcilePurchase[], ReconcileBillPayment[], Expected, Partial<ReconcileOptions>?]>([
    [
      'the supplier spelled another way',
      [p],
      [payment('b1', 24_800, { supplier: 'KIBO WHOLESALERS LIMITED', date: '2025-06-19', billCode: 'KW-JUNE-B' })],
      { suggested: ['p1=b1'] },
    ],
    [
      'a reference to an invoice that does not exist does not stop it',
      [p],
      [payment('b1', 24_800, { billCode: 'INV-9999', date: '2025-06-19' })],
      { suggested: ['p1=b1'] },
    ],
    ['amount within the tolerance', [p], [payment('b1', 24_799.5, { date: '2025-06-19' })], { suggested: ['p1=b1'] }],
    [
      'paid before the invoice date, inside the window',
      [p],
      [payment('b1', 24_800, { date: '2025-05-20' })],
      { suggested: ['p1=b1'] },
    ],
    ['on the last day of the window', [p], [payment('b1', 24_800, { date: '2025-07-09' })], { suggested: ['p1=b1'] }],
    [
      'a day past the window',
      [p],
      [payment('b1', 24_800, { date: '2025-07-10' })],
      { unpaid: ['p1'], unmatched: ['b1'] },
    ],
    [
      'past a narrower window',
      [p],
      [payment('b1', 24_800, { date: '2025-06-19' })],
      { unpaid: ['p1'], unmatched: ['b1'] },
      { dateWindowDays: 5 },
    ],
    ['another amount', [p], [payment('b1', 24_000, { date: '2025-06-19' })], { unpaid: ['p1'], unmatched: ['b1'] }],
    [
      'another supplier',
      [p],
      [payment('b1', 24_800, { supplier: 'Kibo Office Supplies', date: '2025-06-19' })],
      { unpaid: ['p1'], unmatched: ['b1'] },
    ],
    [
      'no supplier name on the payment',
      [p],
      [{ ...payment('b1', 24_800, { date: '2025-06-19' }), supplierRef: null }],
      { unpaid: ['p1'], unmatched: ['b1'] },
    ],
    [
      'a payment in another currency',
      [p],
      [payment('b1', 24_800, { currency: 'USD', date: '2025-06-19' })],
      { unpaid: ['p1'], unmatched: ['b1'] },
    ],
    [
      'a rejected invoice is never suggested',
      [invoice('p1', 'INV-2415', 24_800, { date: '2025-06-09', status: 'rejected' })],
      [payment('b1', 24_800, { date: '2025-06-19' })],
      { rejected: ['p1'], unmatched: ['b1'] },
    ],
    [
      'a tie: two payments fit one invoice, neither is suggested',
      [p],
      [payment('b1', 24_800, { date: '2025-06-10' }), payment('b2', 24_800, { date: '2025-06-20' })],
      { unpaid: ['p1'], unmatched: ['b1', 'b2'], ties: ['several_candidates:p1|b1+b2'] },
    ],
    [
      'a tie: one payment fits two invoices',
      [p, invoice('p2', 'INV-2416', 24_800, { date: '2025-06-12' })],
      [payment('b1', 24_800, { date: '2025-06-19' })],
      { unpaid: ['p1', 'p2'], unmatched: ['b1'], ties: ['several_candidates:p1+p2|b1'] },
    ],
    [
      'a chain is one tie: p2 has one candidate, but that payment has two invoices',
      [p, invoice('p2', 'INV-2416', 24_800, { date: '2025-07-05' })],
      [payment('b1', 24_800, { date: '2025-06-01' }), payment('b2', 24_800, { date: '2025-06-25' })],
      { unpaid: ['p1', 'p2'], unmatched: ['b1', 'b2'], ties: ['several_candidates:p1+p2|b1+b2'] },
    ],
    [
      'a payment matched by reference is no longer a candidate',
      [p, invoice('p2', 'INV-2416', 24_800, { date: '2025-06-12' })],
      [
        payment('b1', 24_800, { billCode: 'INV-2416', date: '2025-06-19' }),
        payment('b2', 24_800, { date: '2025-06-20' }),
      ],
      { matched: ['p2=b1'], suggested: ['p1=b2'] },
    ],
  ])('%s', (_name, purchases, payments, expected, options = {}) => {
    expectSorted(purchases, payments, expected, options);
  });

  it.each<[string, string, boolean]>([
    ['Kibo Wholesalers Ltd', 'KIBO WHOLESALERS LIMITED', true],
    ['Kibo Wholesalers (K) Ltd.', 'Kibo  Wholesalers', true],
    ['Coast Packaging Co', 'Coast Packaging Company Ltd', true],
    ['A & B Traders', 'A and B Traders', true],
    ['Rift-Valley Millers', 'Rift Valley Millers', true],
    ['Café Nairobi', 'CAFE NAIROBI', true],
    ['Kibo Wholesalers Ltd', 'Kibo Office Supplies', false],
    ['Lakeside Dairies', 'Lakeside Power Ltd', false],
  ])('supplier names: "%s" and "%s" same: %s', (a, b, same) => {
    expect(supplierKey(a) === supplierKey(b)).toBe(same);
  });

  it('never takes an empty name for a supplier', () => {
    expect(supplierKey('')).toBe('');
    expect(supplierKey(null)).toBe('');
    // A name made only of a legal word is kept, not emptied.
    expect(supplierKey('Limited')).toBe('LIMITED');
  });
});

describe('residual rules', () => {
  it.each<[string, ReconcilePurchase[], ReconcileBillPayment[], Expected]>([
    ['an invoice nobody paid is unpaid', [invoice('p1', 'INV-1', 100)], [], { unpaid: ['p1'] }],
    [
      'a rejected invoice nobody paid is not owed',
      [invoice('p1', 'INV-1', 100, { status: 'rejected' })],
      [],
      { rejected: ['p1'] },
    ],
    [
      'a payment of an invoice that does not exist',
      [],
      [payment('b1', 7_350, { billCode: 'INV-2499' })],
      { unmatched: ['b1'] },
    ],
    [
      'a payment whose reference fits two invoices equally is a tie, not a match',
      [invoice('p1', '27', 500, { supplier: 'A Ltd' }), invoice('p2', '27', 500, { supplier: 'B Ltd' })],
      [payment('b1', 500, { billCode: '27', supplier: 'C Ltd' })],
      { unpaid: ['p1', 'p2'], unmatched: ['b1'], ties: ['same_reference:p1+p2|b1'] },
    ],
  ])('%s', (_name, purchases, payments, expected) => {
    expectSorted(purchases, payments, expected);
  });

  it.each<[string, string, number | null]>([
    ['a month old', '2025-07-01', 30],
    ['dated on the day', AS_OF, 0],
    ['on the first day of the period', '2025-05-03', 89],
    ['an unreadable date', '01/07/2025', null],
  ])('unpaid age: %s', (_name, date, age) => {
    const result = reconcile([invoice('p1', 'INV-1', 100, { date })], [], AS_OF);
    expect(result.unpaidAgeDays).toEqual({ p1: age });
  });
});

describe('reconcile', () => {
  it('counts every category', () => {
    const result = reconcile(
      [invoice('p1', 'INV-1', 100), invoice('p2', 'INV-2', 200), invoice('p3', 'INV-3', 300, { status: 'rejected' })],
      [payment('b1', 100, { billCode: 'INV-1' }), payment('b2', 150, { billCode: 'INV-2' }), payment('b3', 999)],
      AS_OF,
    );
    expect(result.counts).toEqual({
      purchases: 3,
      billPayments: 3,
      matched: 1,
      suggested: 0,
      amountMismatches: 1,
      unpaidPurchases: 0,
      unmatchedPayments: 1,
      rejectedPurchases: 1,
      ties: 0,
    });
  });

  it('reads a record listed twice once', () => {
    const p = invoice('p1', 'INV-1', 100);
    const b = payment('b1', 100, { billCode: 'INV-1' });
    expect(sorted(reconcile([p, p], [b, b], AS_OF)).matched).toEqual(['p1=b1']);
  });

  it.each([['2025-13-01'], ['2025-02-30'], ['yesterday']])('refuses asOf %s', (asOf) => {
    expect(() => reconcile([], [], asOf)).toThrow(/asOf/);
  });

  it('refuses a negative tolerance or window', () => {
    expect(() => reconcile([], [], AS_OF, { amountTolerance: -1 })).toThrow(RangeError);
    expect(() => reconcile([], [], AS_OF, { dateWindowDays: Number.NaN })).toThrow(RangeError);
  });

  it('reads dates and days', () => {
    expect(dayNumber('2025-07-31T10:00:00Z')).toBe(dayNumber('2025-07-31'));
    expect(calendarDay(Date.UTC(2025, 6, 31, 22, 30))).toBe('2025-08-01');
  });
});

describe('the period', () => {
  it('is periodDays days ending at asOf; payments count from a suggestion window before it', () => {
    expect(reconciliationPeriod(AS_OF)).toEqual({
      from: '2025-05-03',
      to: AS_OF,
      days: 90,
      paymentsFrom: '2025-04-03',
      unmatchedPaymentsFrom: '2025-06-02',
    });
    expect(reconciliationPeriod(AS_OF, { periodDays: 1, dateWindowDays: 0 })).toEqual({
      from: AS_OF,
      to: AS_OF,
      days: 1,
      paymentsFrom: AS_OF,
      unmatchedPaymentsFrom: AS_OF,
    });
    // A window of part of a day still reaches the whole day.
    expect(reconciliationPeriod('2024-03-01', { periodDays: 30, dateWindowDays: 10.5 })).toMatchObject({
      from: '2024-02-01',
      paymentsFrom: '2024-01-21',
      unmatchedPaymentsFrom: '2024-02-12',
    });
    expect(dayString(dayNumber('2024-02-29')!)).toBe('2024-02-29');
  });

  it.each([[0], [1.5], [-3], [MAX_PERIOD_DAYS + 1], [Number.NaN]])('refuses periodDays %s', (periodDays) => {
    expect(() => reconcile([], [], AS_OF, { periodDays })).toThrow(RangeError);
    expect(() => reconciliationPeriod(AS_OF, { periodDays })).toThrow(/periodDays/);
  });

  it('reconciles the invoices dated in the period and only counts the others', () => {
    const result = reconcile(
      [
        invoice('p_before', 'INV-1', 100, { date: '2025-05-02' }),
        invoice('p_first', 'INV-2', 100, { date: '2025-05-03' }),
        invoice('p_last', 'INV-3', 100, { date: AS_OF }),
        invoice('p_after', 'INV-4', 100, { date: '2025-08-01' }),
        invoice('p_unreadable', 'INV-5', 100, { date: '31/07/2025' }),
      ],
      [],
      AS_OF,
    );
    expect(result.unpaidPurchases).toEqual(['p_first', 'p_last', 'p_unreadable']);
    expect(result.counts.purchases).toBe(3);
    expect(result.outsidePeriod).toEqual({ purchases: 2, billPayments: 0 });
    expect(result.period.from).toBe('2025-05-03');
  });

  it('keeps a payment that pairs with an invoice of the period; one that pairs with none once the period holds its window', () => {
    const inPeriod = invoice('p1', 'INV-2403', 500, { date: '2025-05-10' });
    const suggestedFor = invoice('p2', 'INV-2404', 777, { date: '2025-05-05', supplier: 'Rift Valley Millers' });
    const tiedFor = invoice('p3', 'INV-2405', 333, { date: '2025-05-04', supplier: 'Lakeside Dairies' });
    const result = reconcile(
      [inPeriod, suggestedFor, tiedFor],
      [
        // Before the period, named by reference: matched.
        payment('b_early_match', 500, { billCode: 'INV-2403', date: '2025-04-20' }),
        // Before the period, no reference, within the window of an invoice of it: suggested.
        payment('b_early_suggested', 777, { supplier: 'Rift Valley Millers', date: '2025-04-10' }),
        // Before the period, one of two that fit an invoice of it: a tie, listed as the rules list ties.
        payment('b_early_tie', 333, { supplier: 'Lakeside Dairies', date: '2025-04-25' }),
        payment('b_tie', 333, { supplier: 'Lakeside Dairies', date: '2025-05-20' }),
        // Before the period and pairing with nothing of it: an earlier period's, left out.
        payment('b_early_other', 900, { billCode: 'INV-1999', date: '2025-04-30' }),
        // In the period's first 30 days, pairing with nothing of it: most likely its invoice is older, left out.
        payment('b_older_invoice', 650, { billCode: 'INV-2100', date: '2025-06-01' }),
        // Later: every invoice it could be for by date was read. Named or not, it is without an invoice of the period.
        payment('b_no_invoice', 650, { billCode: 'INV-2499', date: '2025-06-02' }),
        payment('b_no_reference', 120, { supplier: 'Coast Packaging', date: '2025-07-31' }),
        // Older than any payment that can pair with the period, even one naming an invoice of it: left out.
        payment('b_too_early', 500, { billCode: 'INV-2403', date: '2025-04-02' }),
        // After asOf: not made yet as of that day.
        payment('b_after', 500, { billCode: 'INV-2403', date: '2025-08-01' }),
      ],
      AS_OF,
    );
    expect(sorted(result)).toEqual({
      ...NOTHING,
      matched: ['p1=b_early_match'],
      suggested: ['p2=b_early_suggested'],
      unpaid: ['p3'],
      unmatched: ['b_early_tie', 'b_no_invoice', 'b_no_reference', 'b_tie'],
      ties: ['several_candidates:p3|b_early_tie+b_tie'],
    });
    expect(result.counts).toMatchObject({ purchases: 3, billPayments: 6 });
    expect(result.outsidePeriod).toEqual({ purchases: 0, billPayments: 4 });
  });
});

describe('billPaymentListEnd', () => {
  const period = reconciliationPeriod(AS_OF); // payments wanted from 2025-04-03
  const page = (...dates: string[]) => dates.map((date, i) => payment(`b${i}`, 1, { date }));

  it('ends the list at the first page whose payments are all older than the period needs', () => {
    const ends = billPaymentListEnd(period);
    expect(ends(page('2025-08-02', '2025-07-31'))).toBe(false);
    expect(ends(page('2025-05-01', '2025-04-03'))).toBe(false);
    expect(ends(page('2025-04-03', '2025-04-02'))).toBe(false);
    expect(ends(page('2025-04-02', '2025-03-01T09:00:00Z'))).toBe(true);
  });

  it('never ends at an empty page or one with an unreadable date', () => {
    expect(billPaymentListEnd(period)(page())).toBe(false);
    expect(billPaymentListEnd(period)(page('2025-01-01', 'yesterday'))).toBe(false);
  });

  it('reads to the end once a page is not newest first: the service did not sort', () => {
    const withinPage = billPaymentListEnd(period);
    expect(withinPage(page('2025-03-01', '2025-03-05'))).toBe(false);
    expect(withinPage(page('2025-02-01'))).toBe(false);
    const acrossPages = billPaymentListEnd(period);
    expect(acrossPages(page('2025-07-01', '2025-03-01'))).toBe(false);
    expect(acrossPages(page('2025-03-02'))).toBe(false);
  });
});

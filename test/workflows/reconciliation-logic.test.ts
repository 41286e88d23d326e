/**
 * The reconciliation workflow's logic against stub activities on the time-skipping test server: the link check,
 * the paging of both lists, the bounds that stop a list that never ends, and the counts. What only the real
 * services (the sandbox), the schedules and the CLI can show stays in test/reconciliation/workflow.test.ts.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { ReconciliationBillPaymentsPage } from '../../activities/accounting.js';
import type { ReconciliationPurchasesPage } from '../../activities/reconciliation.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  RECONCILIATION_WORKFLOW_TYPE,
  type ReconcileBillPayment,
  type ReconcilePurchase,
  type ReconciliationCounts,
  type ReconciliationInput,
} from '../../src/contracts/reconciliation.js';
import { accountingTaskQueue, complianceTaskQueue } from '../../src/contracts/task-queues.js';
import { DEFAULT_MAX_PAGES, RESULT_LIST_LIMITS, tooManyPagesMessage } from '../../src/reconciliation/limits.js';
import { calendarDay, reconcile, reconciliationPeriod } from '../../src/reconciliation/rules.js';
import { summarize, utf8Length } from '../../src/reconciliation/summary.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { reconciliationWorkflow } from '../../workflows/reconciliation.js';
import { useProcessHarness, type ProcessScenario, type Stubs } from './process-logic-harness.js';

const h = useProcessHarness();

const BUSINESS = 'biz_reconcile';
const COMPANY = 'cmp_reconcile';

const DAY_MS = 86_400_000;
/**
 * The test server's clock, not this process's: time an earlier test skipped (a retry's backoff) has moved it on, and
 * a run's default period ends on the day the run started. A test that counts on the period sets it with `today`.
 */
let serverNowMs = Date.now();
async function today(s: ProcessScenario): Promise<string> {
  serverNowMs = await s.env.currentTimeMs();
  return calendarDay(serverNowMs);
}
/** A day this many days before the server's today, in Nairobi. */
const daysAgo = (days: number) => calendarDay(serverNowMs - days * DAY_MS);

function purchase(id: string, supplierInvoiceNumber: string, total: number, status = 'accepted'): ReconcilePurchase {
  return {
    id,
    status,
    supplier: { name: 'Acme Supplies Ltd' },
    supplierInvoiceNumber,
    invoiceDate: daysAgo(40),
    totals: { total },
  };
}

function payment(id: string, billCode: string, totalAmount: number): ReconcileBillPayment {
  return {
    id,
    supplierRef: { name: 'Acme Supplies' },
    billRef: { billCode },
    totalAmount,
    currency: 'KES',
    date: daysAgo(36),
    lines: [],
  };
}

/**
 * Two pages of each list, dated a month or so before the server's today: one invoice paid in full, one paid short,
 * one rejected, one unpaid, a payment of nothing listed.
 */
function purchasePages(): Record<string, ReconciliationPurchasesPage> {
  return {
    first: {
      purchases: [purchase('pur_1', 'INV-1001', 1000), purchase('pur_2', 'INV-2002', 500)],
      nextCursor: 'cur_2',
    },
    cur_2: {
      purchases: [purchase('pur_3', 'INV-3003', 700, 'rejected'), purchase('pur_4', 'INV-4004', 250)],
      nextCursor: null,
    },
  };
}
function paymentPages(): ReconciliationBillPaymentsPage[] {
  return [
    {
      billPayments: [payment('bp_1', 'INV-1001', 1000), payment('bp_2', 'INV-2002', 450)],
      hasNextPage: true,
    },
    { billPayments: [payment('bp_3', 'RENT-OCT', 9000)], hasNextPage: false },
  ];
}
const allPurchases = () => Object.values(purchasePages()).flatMap((p) => p.purchases);
const allPayments = () => paymentPages().flatMap((p) => p.billPayments);

/** A linked business and company, both lists as above; the company is on the second page of companies. */
function linkedStubs(): Stubs {
  return {
    checkReconciliationBusiness: async () => {},
    checkReconciliationCompany: async ({ page }) => ({ found: page === 2 }),
    listReconciliationPurchases: async ({ cursor }) => purchasePages()[cursor ?? 'first']!,
    listReconciliationBillPayments: async ({ page }) => paymentPages()[page - 1]!,
  };
}

function start(s: ProcessScenario, input: Partial<ReconciliationInput> = {}) {
  return s.start<typeof reconciliationWorkflow>(RECONCILIATION_WORKFLOW_TYPE, `reconciliation:${s.id}`, [
    { businessId: BUSINESS, companyId: COMPANY, ...input },
  ]);
}

/** The failure a run ended with: WorkflowFailedError, its cause unwrapped from the activity's failure if any. */
async function failureOf(result: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await result.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  const failure = cause instanceof ActivityFailure ? cause.cause : cause;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  return failure as ApplicationFailure;
}

/** What the test's reconciliations recorded: outcomes summed, gauges at their last values, findings by kind. */
function reconciliationMetrics(s: ProcessScenario) {
  const business = { business_id: BUSINESS };
  const findings = s.metrics.gauges.filter((m) => m.name === 'etims_reconciliation_findings');
  expect(findings.every((m) => m.labels.business_id === BUSINESS)).toBe(true);
  return {
    succeeded: s.metrics.total('etims_reconciliations', { ...business, outcome: 'succeeded' }),
    failed: s.metrics.total('etims_reconciliations', { ...business, outcome: 'failed' }),
    lastSuccessSeconds: s.metrics.last('etims_reconciliation_last_success_timestamp_seconds', business),
    findings: Object.fromEntries(findings.map((m) => [m.labels.kind, m.value])),
  };
}

/** The counts of a result as the findings gauge's kinds (the catalogue's snake_case). */
function findingsOf(c: ReconciliationCounts): Record<string, number> {
  return {
    purchases: c.purchases,
    bill_payments: c.billPayments,
    matched: c.matched,
    suggested: c.suggested,
    amount_mismatches: c.amountMismatches,
    unpaid_purchases: c.unpaidPurchases,
    unmatched_payments: c.unmatchedPayments,
    rejected_purchases: c.rejectedPurchases,
    ties: c.ties,
  };
}

describe('reconciliationWorkflow', () => {
  it('checks the link, reads both lists page by page on their services’ queues and reconciles what they listed', async () => {
    await h.run(linkedStubs(), async (s) => {
      await today(s);
      const fromMs = await s.env.currentTimeMs();
      const handle = await start(s);
      const result = await handle.result();
      const toMs = await s.env.currentTimeMs();

      expect(s.calls.map((c) => c.name)).toEqual([
        'checkReconciliationBusiness',
        'checkReconciliationCompany',
        'checkReconciliationCompany',
        'listReconciliationPurchases',
        'listReconciliationPurchases',
        'listReconciliationBillPayments',
        'listReconciliationBillPayments',
      ]);
      expect(s.inputs('checkReconciliationBusiness')).toEqual([{ businessId: BUSINESS }]);
      expect(s.inputs('checkReconciliationCompany')).toEqual([
        { companyId: COMPANY, page: 1 },
        { companyId: COMPANY, page: 2 },
      ]);
      // Each page asks for the invoices of the period (90 days to the day the run started), with the cursor the
      // page before handed out.
      const { startTime } = await handle.describe();
      const asOf = calendarDay(startTime.getTime());
      const period = reconciliationPeriod(asOf);
      expect(s.inputs('listReconciliationPurchases')).toEqual([
        { businessId: BUSINESS, cursor: null, fromDate: period.from, toDate: asOf },
        { businessId: BUSINESS, cursor: 'cur_2', fromDate: period.from, toDate: asOf },
      ]);
      expect(s.inputs('listReconciliationBillPayments')).toEqual([
        { companyId: COMPANY, page: 1 },
        { companyId: COMPANY, page: 2 },
      ]);
      const compliance = new Set(['checkReconciliationBusiness', 'listReconciliationPurchases']);
      for (const call of s.calls) {
        expect(call.taskQueue, call.name).toBe(
          compliance.has(call.name) ? complianceTaskQueue(s.taskQueue) : accountingTaskQueue(s.taskQueue),
        );
      }
      expect(await s.activitySummaries(handle)).toEqual([
        `can the compliance key act for ${BUSINESS}?`,
        `is ${COMPANY} on companies page 1?`,
        `is ${COMPANY} on companies page 2?`,
        `purchases of ${BUSINESS} from ${period.from} to ${asOf}, page 1`,
        `purchases of ${BUSINESS} from ${period.from} to ${asOf}, page 2`,
        `bill payments of ${COMPANY}, page 1`,
        `bill payments of ${COMPANY}, page 2`,
      ]);

      // Ages count to the day the run started (in Nairobi), not to the day the result is read.
      const payments = allPayments();
      expect(result.summary).toEqual(summarize(reconcile(allPurchases(), payments, asOf), payments));
      expect(result.summary.asOf).toBe(asOf);
      expect(result.summary.unpaidAgeDays).toEqual({ pur_4: 40 });
      // Matched and rejected invoices are counted, not listed; the lists that need a person are complete.
      expect(result.summary.truncated).toEqual({ matched: 1, rejectedPurchases: 1 });
      expect(result.counts).toMatchObject({
        purchases: 4,
        billPayments: 3,
        matched: 1,
        amountMismatches: 1,
        suggested: 0,
        rejectedPurchases: 1,
        unpaidPurchases: 1,
        unmatchedPayments: 1,
      });
      expect(result).toMatchObject({ businessId: BUSINESS, companyId: COMPANY });

      const details = await s.currentDetails(handle);
      expect(details).toContain(`as of ${asOf}`);
      expect(details).toContain('| Matched | 1 |');
      expect(details).toContain('| Amount mismatches | 1 |');
      expect(details).toContain(`4 invoices dated ${period.from} to ${asOf} (90 days), 3 bill payments.`);

      // Succeeded once, at the workflow's clock, and each count of the result as a finding of its kind.
      const metrics = reconciliationMetrics(s);
      expect(metrics).toEqual({
        succeeded: 1,
        failed: 0,
        lastSuccessSeconds: expect.any(Number),
        findings: findingsOf(result.counts),
      });
      expect(metrics.findings).toMatchObject({
        purchases: 4,
        bill_payments: 3,
        matched: 1,
        amount_mismatches: 1,
        unmatched_payments: 1,
      });
      expect(metrics.lastSuccessSeconds! * 1000).toBeGreaterThanOrEqual(fromMs);
      expect(metrics.lastSuccessSeconds! * 1000).toBeLessThanOrEqual(toMs);
    });
  });

  it('passes asOf and the options on to the rules', async () => {
    await h.run(linkedStubs(), async (s) => {
      await today(s);
      const asOf = daysAgo(-10);
      const options = { amountTolerance: 60, dateWindowDays: 10, currency: 'KES', periodDays: 60 };
      const result = await (await start(s, { asOf, options })).result();
      // Paid 50 short, within a tolerance of 60: matched now, not a mismatch.
      expect(result.summary.asOf).toBe(asOf);
      expect(result.summary.period).toEqual(reconciliationPeriod(asOf, options));
      expect(result.counts).toMatchObject({ matched: 2, amountMismatches: 0 });
      const payments = allPayments();
      expect(result.summary).toEqual(summarize(reconcile(allPurchases(), payments, asOf, options), payments));
      const fromDate = reconciliationPeriod(asOf, options).from;
      expect(s.inputs('listReconciliationPurchases')[0]).toEqual({
        businessId: BUSINESS,
        cursor: null,
        fromDate,
        toDate: asOf,
      });
    });
  });

  it('reads the invoices of the period, and the payments newest first until a whole page is older than it needs', async () => {
    // 60 days to 2026-06-30: invoices from 2026-05-02, payments from 2026-04-02 (the 30-day suggestion window).
    const asOf = '2026-06-30';
    const at = (date: string, id: string, billCode: string, amount: number) => ({
      ...payment(id, billCode, amount),
      date,
    });
    const pages: ReconciliationBillPaymentsPage[] = [
      {
        billPayments: [at('2026-07-02', 'bp_after', 'INV-1001', 1), at('2026-06-20', 'bp_1', 'INV-1001', 1000)],
        hasNextPage: true,
      },
      // Reaches back into the window: the next page may still hold a payment of the period's invoices.
      {
        billPayments: [at('2026-04-10', 'bp_2', 'INV-2002', 500), at('2026-03-30', 'bp_old', 'X-1', 9)],
        hasNextPage: true,
      },
      // Wholly older than 2026-04-02: the list ends here, though the service says there is more.
      {
        // bp_older names an invoice of the period, but is older than any payment the rules pair with it: left out.
        billPayments: [at('2026-03-29', 'bp_older', 'INV-2002', 500), at('2026-01-05', 'bp_oldest', 'X-2', 9)],
        hasNextPage: true,
      },
      { billPayments: [at('2025-12-01', 'bp_never', 'X-3', 9)], hasNextPage: false },
    ];
    const dated = (p: ReconcilePurchase, invoiceDate: string) => ({ ...p, invoiceDate });
    const stubs: Stubs = {
      ...linkedStubs(),
      listReconciliationPurchases: async () => ({
        purchases: [
          dated(purchase('pur_1', 'INV-1001', 1000), '2026-06-01'),
          dated(purchase('pur_2', 'INV-2002', 500), '2026-05-02'),
          // As from a service that ignored the filter: the rules leave it out all the same.
          dated(purchase('pur_old', 'INV-4004', 250), '2026-04-01'),
        ],
        nextCursor: null,
      }),
      listReconciliationBillPayments: async ({ page }) => pages[page - 1]!,
    };
    await h.run(stubs, async (s) => {
      const result = await (await start(s, { asOf, options: { periodDays: 60 } })).result();
      expect(s.inputs('listReconciliationPurchases')).toEqual([
        { businessId: BUSINESS, cursor: null, fromDate: '2026-05-02', toDate: asOf },
      ]);
      expect(s.inputs('listReconciliationBillPayments').map((i) => i.page)).toEqual([1, 2, 3]);
      expect(result.summary.period).toEqual({
        from: '2026-05-02',
        to: asOf,
        days: 60,
        paymentsFrom: '2026-04-02',
        unmatchedPaymentsFrom: '2026-06-01',
      });
      expect(result.counts).toMatchObject({ purchases: 2, billPayments: 2, matched: 2, unmatchedPayments: 0 });
      // pur_old; bp_after (after asOf), bp_old, bp_older, bp_oldest (older than the period needs).
      expect(result.summary.outsidePeriod).toEqual({ purchases: 1, billPayments: 4 });
    });
  });

  it('returns every count but lists at most the cap of each category, saying how many it leaves out', async () => {
    // Made once the server's today is known: 250 unpaid invoices and 230 payments of nothing, all of the period.
    let invoices: ReconcilePurchase[] = [];
    let payments: ReconcileBillPayment[] = [];
    const stubs: Stubs = {
      ...linkedStubs(),
      listReconciliationPurchases: async ({ cursor }) => {
        const first = cursor === null ? 0 : Number(cursor);
        const next = first + 100;
        return { purchases: invoices.slice(first, next), nextCursor: next < invoices.length ? String(next) : null };
      },
      listReconciliationBillPayments: async ({ page }) => ({
        billPayments: payments.slice((page - 1) * 100, page * 100),
        hasNextPage: page * 100 < payments.length,
      }),
    };
    await h.run(stubs, async (s) => {
      await today(s);
      invoices = Array.from({ length: 250 }, (_, i) => ({
        ...purchase(`pur_${String(i).padStart(3, '0')}`, `INV-${5000 + i}`, 100 + i),
        invoiceDate: daysAgo(i % 50),
      }));
      // Amounts no invoice has: not suggested for any.
      payments = Array.from({ length: 230 }, (_, i) => ({
        ...payment(`bp_${String(i).padStart(3, '0')}`, `RENT-${i}`, 100_000 + i),
        date: daysAgo(i % 20),
      }));
      const handle = await start(s);
      const result = await handle.result();
      expect(s.inputs('listReconciliationPurchases')).toHaveLength(3);
      expect(s.inputs('listReconciliationBillPayments')).toHaveLength(3);
      expect(result.counts).toMatchObject({
        purchases: 250,
        billPayments: 230,
        unpaidPurchases: 250,
        unmatchedPayments: 230,
      });
      expect(result.summary.unpaidPurchases).toHaveLength(RESULT_LIST_LIMITS.unpaidPurchases);
      expect(result.summary.unmatchedPayments).toHaveLength(RESULT_LIST_LIMITS.unmatchedPayments);
      expect(result.summary.truncated).toEqual({ unpaidPurchases: 50, unmatchedPayments: 30 });
      // The oldest unpaid invoices are the ones listed.
      expect(Math.min(...result.summary.unpaidPurchases.map((id) => result.summary.unpaidAgeDays[id]!))).toBe(10);
      expect(utf8Length(JSON.stringify(result))).toBeLessThan(16 * 1024);
      expect(await s.currentDetails(handle)).toContain('`npm run reconcile` lists all');
    });
  });

  it('stops at a business the compliance key cannot act for, before any list is read', async () => {
    const stubs: Stubs = {
      ...linkedStubs(),
      checkReconciliationBusiness: async () => {
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.notConfigured,
          message: `the key may not act for ${BUSINESS}`,
          nonRetryable: true,
        });
      },
    };
    await h.run(stubs, async (s) => {
      const failure = await failureOf((await start(s)).result());
      expect(failure.type).toBe(FAILURE_TYPES.notConfigured);
      expect(failure.message).toContain(BUSINESS);
      expect(s.calls.map((c) => c.name)).toEqual(['checkReconciliationBusiness']);
      // Failed once; neither a success nor findings (the last run's stay as they were).
      expect(reconciliationMetrics(s)).toEqual({
        succeeded: 0,
        failed: 1,
        lastSuccessSeconds: undefined,
        findings: {},
      });
    });
  });

  it('stops at a company the accounting key does not see (none on the last page of companies), before any list is read', async () => {
    const stubs: Stubs = {
      ...linkedStubs(),
      checkReconciliationCompany: async ({ page }) => {
        if (page < 3) return { found: false };
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.notConfigured,
          message: `the key does not see company ${COMPANY}`,
          nonRetryable: true,
        });
      },
    };
    await h.run(stubs, async (s) => {
      const failure = await failureOf((await start(s)).result());
      expect(failure.type).toBe(FAILURE_TYPES.notConfigured);
      expect(s.inputs('checkReconciliationCompany').map((i) => i.page)).toEqual([1, 2, 3]);
      expect(s.calls.filter((c) => c.name.startsWith('list'))).toEqual([]);
    });
  });

  it('fails at once, without retrying, when the purchases list hands out a cursor it handed out before', async () => {
    const next: Record<string, string> = { first: 'cur_a', cur_a: 'cur_b', cur_b: 'cur_a' };
    const stubs: Stubs = {
      ...linkedStubs(),
      listReconciliationPurchases: async ({ cursor }) => ({
        purchases: [],
        nextCursor: next[cursor ?? 'first']!,
      }),
    };
    await h.run(stubs, async (s) => {
      const failure = await failureOf((await start(s)).result());
      expect(failure.type).toBe(FAILURE_TYPES.unexpectedResponse);
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toBe('listPurchases: the compliance service returned cursor "cur_a" twice');
      // The repeated cursor is never read with.
      expect(s.inputs('listReconciliationPurchases').map((i) => i.cursor)).toEqual([null, 'cur_a', 'cur_b']);
      expect(s.inputs('listReconciliationBillPayments')).toEqual([]);
      expect(reconciliationMetrics(s)).toMatchObject({ succeeded: 0, failed: 1 });
    });
  });

  it(
    `fails not_configured once a list goes on past ${DEFAULT_MAX_PAGES} pages, having read exactly that many`,
    { timeout: 60_000 },
    async () => {
      const stubs: Stubs = {
        ...linkedStubs(),
        listReconciliationBillPayments: async () => ({ billPayments: [], hasNextPage: true }),
      };
      await h.run(stubs, async (s) => {
        const failure = await failureOf((await start(s)).result());
        expect(failure.type).toBe(FAILURE_TYPES.notConfigured);
        expect(failure.nonRetryable).toBe(true);
        expect(failure.message).toBe(tooManyPagesMessage(`company ${COMPANY}'s bill payment list`, DEFAULT_MAX_PAGES));
        expect(s.inputs('listReconciliationBillPayments').map((i) => i.page)).toEqual(
          Array.from({ length: DEFAULT_MAX_PAGES }, (_, i) => i + 1),
        );
      });
    },
  );

  it('runs at the lowest priority on both queues: nobody waits for a reconciliation', async () => {
    await h.run(linkedStubs(), async (s) => {
      await today(s);
      const handle = await start(s);
      await handle.result();
      const { events } = await handle.fetchHistory();
      const priorities = (events ?? []).flatMap((e) =>
        e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.priority?.priorityKey] : [],
      );
      expect(priorities).toEqual(Array(7).fill(PRIORITY.background));
    });
  });

  it.each([
    [{ businessId: '' }, 'businessId must be a non-empty string'],
    [{ companyId: '  ' }, 'companyId must be a non-empty string'],
    [{ asOf: '2026-02-30' }, 'asOf must be a date YYYY-MM-DD'],
    [{ options: { amountTolerance: -1 } }, 'options.amountTolerance must be a number of at least 0'],
    [{ options: { currency: ' ' } }, 'options.currency must be a currency code such as KES'],
    [{ options: { periodDays: 0 } }, 'options.periodDays must be a whole number of days from 1 to 3660'],
    [{ options: { periodDays: 7.5 } }, 'options.periodDays must be a whole number of days from 1 to 3660'],
  ] as Array<[Partial<ReconciliationInput>, string]>)('refuses %j before any request: %s', async (input, message) => {
    await h.run(linkedStubs(), async (s) => {
      const failure = await failureOf((await start(s, input)).result());
      expect(failure.type).toBe(FAILURE_TYPES.invalidInput);
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toBe(message);
      expect(s.calls).toEqual([]);
      expect(s.metrics.total('etims_reconciliations', { outcome: 'failed' })).toBe(1);
      expect(s.metrics.total('etims_reconciliations', { outcome: 'succeeded' })).toBe(0);
    });
  });
});

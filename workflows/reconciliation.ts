import { ApplicationFailure, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  MAX_PERIOD_DAYS,
  type ReconcileBillPayment,
  type ReconcileBusinessResult,
  type ReconcilePurchase,
  type ReconciliationCounts,
  type ReconciliationInput,
  type ReconciliationPeriod,
  type ReconciliationSummary,
} from '../src/contracts/reconciliation.js';
import type { METRICS } from '../src/metrics/catalogue.js';
import { pageReader } from '../src/reconciliation/limits.js';
import {
  billPaymentListEnd,
  calendarDay,
  dayNumber,
  isPeriodDays,
  reconcile,
  reconciliationPeriod,
} from '../src/reconciliation/rules.js';
import { summarize } from '../src/reconciliation/summary.js';
import { API_RETRY, accountingQueue, type ActivitiesOn } from './activity-options.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { count, failsTheWorkflow, setGauge } from './metrics.js';
import { placeOnBudget, type CallRoute } from './placement.js';

/**
 * A business's supplier invoices against its company's bill payments, a page per activity at the lowest priority
 * (docs/reconciliation.md). Its end is counted once: succeeded in `finished`, or failed here.
 */
export async function reconciliationWorkflow(input: ReconciliationInput): Promise<ReconcileBusinessResult> {
  try {
    const problem = invalidInput(input);
    if (problem) throw ApplicationFailure.nonRetryable(problem, FAILURE_TYPES.invalidInput);
    const route = await placeOnBudget(input.businessId, false);
    const api = reconciliationActivities(route);
    setCurrentDetails(`Reconciling \`${input.businessId}\` with \`${input.companyId}\`…`);
    await checkLink(input, api);
    // The day the run started, not the clock: a replay reads the same period and counts ages to the same day.
    const asOf = input.asOf ?? calendarDay(workflowInfo().startTime.getTime());
    const period = reconciliationPeriod(asOf, input.options);
    // Never continued as new: the rules need every record of the period at once, and carrying them would put them
    // all in one payload. The period keeps the pages, and so the history, to the business's rate instead.
    const purchases = await listPurchases(input.businessId, period, api);
    const billPayments = await listBillPayments(input.companyId, period, api);
    // The full lists stay in this run's memory; the result carries counts and capped lists only.
    const result = reconcile(purchases, billPayments, asOf, input.options);
    return finished(input, summarize(result, billPayments));
  } catch (err) {
    // The input may be what it refused: the business is read with care.
    const businessId = typeof input?.businessId === 'string' ? input.businessId : '';
    if (failsTheWorkflow(err)) count('etims_reconciliations', { business_id: businessId, outcome: 'failed' });
    throw err;
  }
}

/** Plain-JSON starts (CLI, schedules edited by hand) skip every client-side check: the workflow checks again. */
function invalidInput(input: ReconciliationInput): string | undefined {
  if (typeof input !== 'object' || input === null) return 'the input must be an object {businessId, companyId}';
  for (const key of ['businessId', 'companyId'] as const)
    if (typeof input[key] !== 'string' || input[key].trim() === '') return `${key} must be a non-empty string`;
  // The rules run in this workflow: what they would refuse is refused here, before any request.
  if (
    input.asOf !== undefined &&
    !(typeof input.asOf === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(input.asOf) && dayNumber(input.asOf) !== undefined)
  )
    return 'asOf must be a date YYYY-MM-DD';
  for (const key of ['amountTolerance', 'dateWindowDays'] as const) {
    const value = input.options?.[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0))
      return `options.${key} must be a number of at least 0`;
  }
  const currency = input.options?.currency;
  if (currency !== undefined && !(typeof currency === 'string' && currency.trim() !== ''))
    return 'options.currency must be a currency code such as KES';
  const periodDays = input.options?.periodDays;
  if (periodDays !== undefined && !isPeriodDays(periodDays))
    return `options.periodDays must be a whole number of days from 1 to ${MAX_PERIOD_DAYS}`;
  return undefined;
}

/** Behind every sale and sync batch: nobody waits for a reconciliation, so a page waits out tills and outages. */
function reconciliationActivities({ complianceQueue, fairnessKey }: CallRoute) {
  const options = {
    startToCloseTimeout: '60 seconds',
    retry: API_RETRY,
    priority: { priorityKey: PRIORITY.background, fairnessKey },
  } as const;
  const compliance = proxyActivities<ActivitiesOn<'compliance'>>({ ...options, taskQueue: complianceQueue });
  const accounting = proxyActivities<ActivitiesOn<'accounting'>>({ ...options, taskQueue: accountingQueue() });
  return {
    checkBusiness: (businessId: string) =>
      compliance.checkReconciliationBusiness.executeWithOptions(
        { summary: `can the compliance key act for ${businessId}?` },
        [{ businessId }],
      ),
    checkCompanyPage: (companyId: string, page: number) =>
      accounting.checkReconciliationCompany.executeWithOptions(
        { summary: `is ${companyId} on companies page ${page}?` },
        [{ companyId, page }],
      ),
    purchasesPage: (businessId: string, period: ReconciliationPeriod, cursor: string | null, page: number) =>
      compliance.listReconciliationPurchases.executeWithOptions(
        { summary: `purchases of ${businessId} from ${period.from} to ${period.to}, page ${page}` },
        [{ businessId, cursor, fromDate: period.from, toDate: period.to }],
      ),
    billPaymentsPage: (companyId: string, page: number) =>
      accounting.listReconciliationBillPayments.executeWithOptions(
        { summary: `bill payments of ${companyId}, page ${page}` },
        [{ companyId, page }],
      ),
  };
}

type ReconciliationApi = ReturnType<typeof reconciliationActivities>;

/** More than DEFAULT_MAX_PAGES fails the run: the period is configuration, which no retry fixes. */
const readPages = pageReader((message) => ApplicationFailure.nonRetryable(message, FAILURE_TYPES.notConfigured));

/** A business or company the keys cannot see fails `not_configured` in its activity, named, not as a later 403. */
async function checkLink({ businessId, companyId }: ReconciliationInput, api: ReconciliationApi): Promise<void> {
  await api.checkBusiness(businessId);
  await readPages('the accounting company list', async (page) => ({
    more: !(await api.checkCompanyPage(companyId, page)).found,
  }));
}

// Both lists may list a record twice (a record added while paging); reconcile() keeps each id once.

/** The invoices dated in the period: the service filters them (C72), so the pages follow the period, not the age. */
async function listPurchases(
  businessId: string,
  period: ReconciliationPeriod,
  api: ReconciliationApi,
): Promise<ReconcilePurchase[]> {
  const purchases: ReconcilePurchase[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  await readPages(`business ${businessId}'s purchase list`, async (page) => {
    if (cursor !== null) {
      // A cursor handed out twice would read the same pages until the bound: stop at once instead.
      if (cursors.has(cursor))
        throw ApplicationFailure.nonRetryable(
          `listPurchases: the compliance service returned cursor ${JSON.stringify(cursor)} twice`,
          FAILURE_TYPES.unexpectedResponse,
        );
      cursors.add(cursor);
    }
    const listed = await api.purchasesPage(businessId, period, cursor, page);
    purchases.push(...listed.purchases);
    cursor = listed.nextCursor;
    return { more: cursor !== null };
  });
  return purchases;
}

/**
 * Newest first, until a whole page is older than any payment that can pair with an invoice of the period: the
 * accounting list has no date filter (R9).
 */
async function listBillPayments(
  companyId: string,
  period: ReconciliationPeriod,
  api: ReconciliationApi,
): Promise<ReconcileBillPayment[]> {
  const billPayments: ReconcileBillPayment[] = [];
  const ends = billPaymentListEnd(period);
  await readPages(`company ${companyId}'s bill payment list`, async (page) => {
    const listed = await api.billPaymentsPage(companyId, page);
    billPayments.push(...listed.billPayments);
    return { more: listed.hasNextPage && !ends(listed.billPayments) };
  });
  return billPayments;
}

type FindingKind = (typeof METRICS)['etims_reconciliation_findings']['labels']['kind'][number];

/** Each count as the findings gauge's kind, and its row in the UI (none: only in the footer). */
const FINDINGS: Record<keyof ReconciliationCounts, [FindingKind, string?]> = {
  purchases: ['purchases'],
  billPayments: ['bill_payments'],
  matched: ['matched', 'Matched'],
  suggested: ['suggested', 'Suggested (confirm by hand)'],
  amountMismatches: ['amount_mismatches', 'Amount mismatches'],
  unpaidPurchases: ['unpaid_purchases', 'Unpaid invoices'],
  unmatchedPayments: ['unmatched_payments', 'Payments without an invoice'],
  rejectedPurchases: ['rejected_purchases', 'Rejected invoices (not owed)'],
  ties: ['ties', 'Ties to review'],
};

/** The result, shown in the UI as counts per category (nothing about any supplier), counted once with its gauges. */
function finished(input: ReconciliationInput, summary: ReconciliationSummary): ReconcileBusinessResult {
  const { businessId, companyId } = input;
  const c = summary.counts;
  const { period } = summary;
  const findings = Object.entries(FINDINGS) as Array<[keyof ReconciliationCounts, [FindingKind, string?]]>;
  const capped = Object.keys(summary.truncated).length > 0;
  setCurrentDetails(
    [
      `**Reconciliation** of \`${businessId}\` with \`${companyId}\` as of ${summary.asOf}`,
      '',
      '| Category | Count |',
      '|---|---:|',
      ...findings.flatMap(([name, [, row]]) => (row ? [`| ${row} | ${c[name]} |`] : [])),
      '',
      `${c.purchases} invoices dated ${period.from} to ${period.to} (${period.days} days), ` +
        `${c.billPayments} bill payments.`,
      ...(capped ? ['', 'The result lists part of each category; `npm run reconcile` lists all.'] : []),
    ].join('\n'),
  );
  // The findings gauges hold these counts until the business's next reconciliation succeeds.
  const business = { business_id: businessId };
  count('etims_reconciliations', { ...business, outcome: 'succeeded' });
  // The workflow's clock: the same on a replay.
  setGauge('etims_reconciliation_last_success_timestamp_seconds', Date.now() / 1000, business);
  for (const [name, [kind]] of findings) setGauge('etims_reconciliation_findings', c[name], { ...business, kind });
  return { businessId, companyId, summary, counts: c };
}

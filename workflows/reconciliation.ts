/**
 * One reconciliation of a business's supplier invoices with its accounting company's bill payments, started
 * by its Temporal Schedule (src/reconciliation/schedule.ts) or on demand. The workflow checks the link and
 * pages through both lists itself, one activity per API request, because a queue's server-side rate limit
 * counts activity starts: compliance requests on the compliance queue (the fleet's 120 requests a minute),
 * accounting requests on the accounting queue, both at the lowest priority. Then it applies the rules
 * (src/reconciliation/rules.ts, the same code as `npm run reconcile`) here, and shows the counts per category
 * as the execution's current details in the Temporal UI.
 *
 * Why no continue-as-new: the pages carry compact records (about 170 bytes an invoice, 220 a payment, so
 * ~20 KB a page), and each list is bounded by DEFAULT_MAX_PAGES (500). At that bound, both lists together are
 * ~1,000 activities, ~6,000 events and ~20 MB of history: inside Temporal's limits (51,200 events, 50 MB), with
 * no page near the 2 MB payload limit. Continuing as new would have to carry the records read so far in the
 * new run's input, one payload that passes 2 MB at about 10,000 records: worse, not better. The same reason
 * puts the rules here rather than in an activity, whose input would be all the records in one payload. What
 * binds first is the result (per-invoice lists), which passes 2 MB at roughly 15,000 invoices, as the former
 * single activity's result did; the rules take under a second at that size, inside a workflow task's budget.
 */
import type { ReconcileBusinessResult, ReconciliationInput } from '../src/contracts/reconciliation.js';
import { ApplicationFailure, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationCalls } from '../src/contracts/reconciliation.js';
import { DEFAULT_MAX_PAGES, tooManyPagesMessage } from '../src/reconciliation/limits.js';
import { calendarDay, dayNumber, reconcile } from '../src/reconciliation/rules.js';
import type { ReconcileBillPayment, ReconcilePurchase } from '../src/contracts/reconciliation.js';
import { API_RETRY, PRIORITY, routedActivities, type RoutedActivityOptions } from './activity-options.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';

/**
 * Every request waits behind every sale for its slot of the budget. A page that finds none in 6 hours (the
 * tills took all of it) fails the run; the next scheduled run reads again.
 */
const PAGE_OPTIONS: RoutedActivityOptions = {
  startToCloseTimeout: '60 seconds',
  scheduleToCloseTimeout: '6 hours',
  retry: API_RETRY,
  priority: { priorityKey: PRIORITY.background },
};

/** Plain-JSON starts (CLI, schedules edited by hand) skip every client-side check: the workflow checks again. */
function invalidInput(input: ReconciliationInput): string | undefined {
  if (typeof input !== 'object' || input === null) return 'the input must be an object {businessId, companyId}';
  for (const key of ['businessId', 'companyId'] as const) {
    if (typeof input[key] !== 'string' || input[key].trim() === '') return `${key} must be a non-empty string`;
  }
  // The rules run in this workflow: what they would refuse is refused here, before any request.
  if (input.asOf !== undefined && !(typeof input.asOf === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(input.asOf) && dayNumber(input.asOf) !== undefined)) {
    return 'asOf must be a date YYYY-MM-DD';
  }
  for (const key of ['amountTolerance', 'dateWindowDays'] as const) {
    const value = input.options?.[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0)) return `options.${key} must be a number of at least 0`;
  }
  const currency = input.options?.currency;
  if (currency !== undefined && !(typeof currency === 'string' && currency.trim() !== '')) return 'options.currency must be a currency code such as KES';
  return undefined;
}

/** A list longer than the bound: configuration (the bound), which no retry fixes. */
function tooManyPages(what: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(tooManyPagesMessage(what, DEFAULT_MAX_PAGES), FAILURE_TYPES.notConfigured);
}

/** Markdown for the Temporal UI's "current details": counts per category, nothing about any supplier. */
function summaryMarkdown(result: ReconcileBusinessResult): string {
  const c = result.counts;
  const rows: Array<[string, number]> = [
    ['Matched', c.matched],
    ['Suggested (confirm by hand)', c.suggested],
    ['Amount mismatches', c.amountMismatches],
    ['Unpaid invoices', c.unpaidPurchases],
    ['Payments without an invoice', c.unmatchedPayments],
    ['Rejected invoices (not owed)', c.rejectedPurchases],
    ['Ties to review', c.ties],
  ];
  return [
    `**Reconciliation** of \`${result.businessId}\` with \`${result.companyId}\` as of ${result.summary.asOf}`,
    '',
    '| Category | Count |',
    '|---|---:|',
    ...rows.map(([name, count]) => `| ${name} | ${count} |`),
    '',
    `${c.purchases} invoices, ${c.billPayments} bill payments, ${result.calls.total} API calls.`,
  ].join('\n');
}

export async function reconciliationWorkflow(input: ReconciliationInput): Promise<ReconcileBusinessResult> {
  const problem = invalidInput(input);
  if (problem) throw ApplicationFailure.nonRetryable(problem, FAILURE_TYPES.invalidInput);
  const { businessId, companyId } = input;
  const { startTime } = workflowInfo();
  // Behind every sale on the compliance queue, and behind the sync batches on the accounting queue: nobody waits
  // for a reconciliation.
  const api = routedActivities(PAGE_OPTIONS);
  const calls: ReconciliationCalls = { compliance: { listBusinesses: 0, listPurchases: 0 }, accounting: { listCompanies: 0, listBillPayments: 0 }, total: 0 };
  /** Adds an activity's calls to the total and returns them, for its operation's count. */
  const counted = (apiCalls: number) => {
    calls.total += apiCalls;
    return apiCalls;
  };
  setCurrentDetails(`Reconciling \`${businessId}\` with \`${companyId}\`…`);

  // The link first: a business or company the keys cannot see fails `not_configured` (non-retryable) in its
  // activity, named, rather than as a 403 halfway through.
  const business = await api.checkReconciliationBusiness.executeWithOptions({ summary: `can the compliance key act for ${businessId}?` }, [{ businessId }]);
  calls.compliance.listBusinesses += counted(business.apiCalls);
  for (let page = 1; ; page++) {
    if (page > DEFAULT_MAX_PAGES) throw tooManyPages('the accounting company list');
    const found = await api.checkReconciliationCompany.executeWithOptions({ summary: `is ${companyId} on companies page ${page}?` }, [{ companyId, page }]);
    calls.accounting.listCompanies += counted(found.apiCalls);
    if (found.found) break;
  }

  // Both lists may list a record twice (a record added while paging); reconcile() keeps each id once.
  const purchases: ReconcilePurchase[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  for (let page = 1; ; page++) {
    const listed = await api.listReconciliationPurchases.executeWithOptions({ summary: `purchases of ${businessId}, page ${page}` }, [{ businessId, cursor }]);
    calls.compliance.listPurchases += counted(listed.apiCalls);
    purchases.push(...listed.purchases);
    if (listed.nextCursor === null) break;
    if (page >= DEFAULT_MAX_PAGES) throw tooManyPages(`business ${businessId}'s purchase list`);
    // A cursor handed out twice would read the same pages until the bound: stop at once instead.
    if (cursors.has(listed.nextCursor)) {
      throw ApplicationFailure.nonRetryable(`listPurchases: the compliance service returned cursor ${JSON.stringify(listed.nextCursor)} twice`, FAILURE_TYPES.unexpectedResponse);
    }
    cursors.add(listed.nextCursor);
    cursor = listed.nextCursor;
  }

  const billPayments: ReconcileBillPayment[] = [];
  for (let page = 1; ; page++) {
    const listed = await api.listReconciliationBillPayments.executeWithOptions({ summary: `bill payments of ${companyId}, page ${page}` }, [{ companyId, page }]);
    calls.accounting.listBillPayments += counted(listed.apiCalls);
    billPayments.push(...listed.billPayments);
    if (!listed.hasNextPage) break;
    if (page >= DEFAULT_MAX_PAGES) throw tooManyPages(`company ${companyId}'s bill payment list`);
  }

  // The day the run started, not the clock: a replay counts ages to the same day.
  const asOf = input.asOf ?? calendarDay(startTime.getTime());
  const summary = reconcile(purchases, billPayments, asOf, input.options);
  const result: ReconcileBusinessResult = { businessId, companyId, summary, counts: summary.counts, calls };
  setCurrentDetails(summaryMarkdown(result));
  return result;
}

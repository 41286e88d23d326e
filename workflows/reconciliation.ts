/**
 * One reconciliation of a business's supplier invoices with its accounting company's bill payments, started
 * by its Temporal Schedule (src/reconciliation/schedule.ts) or on demand. The work is one activity; the
 * workflow adds what the Temporal UI shows: a summary of the counts as the execution's current details.
 */
import { ApplicationFailure, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ReconcileBusinessInput, ReconcileBusinessResult, ReconciliationActivities } from '../activities/reconciliation.js';
import { API_RETRY, PRIORITY } from './activity-options.js';
import { FAILURE_TYPES, complianceTaskQueue } from './definitions.js';

/** The input: `{businessId, companyId, asOf?, options?}`, as the activity takes it. */
export type ReconciliationInput = ReconcileBusinessInput;

/** Plain-JSON starts (CLI, schedules edited by hand) skip every client-side check: the workflow checks again. */
function invalidInput(input: ReconciliationInput): string | undefined {
  if (typeof input !== 'object' || input === null) return 'the input must be an object {businessId, companyId}';
  for (const key of ['businessId', 'companyId'] as const) {
    if (typeof input[key] !== 'string' || input[key].trim() === '') return `${key} must be a non-empty string`;
  }
  if (input.asOf !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(input.asOf)) return 'asOf must be a date YYYY-MM-DD';
  for (const key of ['amountTolerance', 'dateWindowDays'] as const) {
    const value = input.options?.[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0)) return `options.${key} must be a number of at least 0`;
  }
  return undefined;
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
  // Its purchases listing is compliance traffic: on the rate-limited compliance queue, behind every sale.
  // Longer than a single API call's timeouts: one attempt pages through both lists, heartbeating each page.
  const { reconcileBusiness } = proxyActivities<ReconciliationActivities>({
    taskQueue: complianceTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: '1 minute',
    scheduleToCloseTimeout: '6 hours',
    retry: API_RETRY,
    priority: { priorityKey: PRIORITY.background },
  });
  setCurrentDetails(`Reconciling \`${input.businessId}\` with \`${input.companyId}\`…`);
  const result = await reconcileBusiness.executeWithOptions({ summary: `reconcile ${input.businessId} with ${input.companyId}` }, [input]);
  setCurrentDetails(summaryMarkdown(result));
  return result;
}

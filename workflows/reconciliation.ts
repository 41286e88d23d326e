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
import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { failsTheWorkflow } from './metrics.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import type {
  ReconcileBillPayment,
  ReconcileBusinessResult,
  ReconcilePurchase,
  ReconciliationInput,
} from '../src/contracts/reconciliation.js';
import { calendarDay, reconcile } from '../src/reconciliation/rules.js';
import { placeOnBudget } from './placement.js';
import { reconciliationActivities } from './reconciliation/activities.js';
import type { Reconciliation } from './reconciliation/context.js';
import { invalidInput } from './reconciliation/input.js';
import { checkLink, listBillPayments, listPurchases } from './reconciliation/lists.js';
import { ReconciliationRecord, countFailedReconciliation } from './reconciliation/record.js';

/** Its end is counted once: succeeded with the findings (record.finished) or failed here, a refused input included. */
export async function reconciliationWorkflow(input: ReconciliationInput): Promise<ReconcileBusinessResult> {
  try {
    return await reconcileOnce(input);
  } catch (err) {
    if (failsTheWorkflow(err)) countFailedReconciliation(input);
    throw err;
  }
}

async function reconcileOnce(input: ReconciliationInput): Promise<ReconcileBusinessResult> {
  const problem = invalidInput(input);
  if (problem) throw ApplicationFailure.nonRetryable(problem, FAILURE_TYPES.invalidInput);
  const route = await placeOnBudget(input.businessId, false);
  const run: Reconciliation = { input, api: reconciliationActivities(route), record: new ReconciliationRecord(input) };
  await checkLink(run);
  const purchases = await listPurchases(run);
  const billPayments = await listBillPayments(run);
  return reconcileLists(run, purchases, billPayments);
}

function reconcileLists(
  { input, record }: Reconciliation,
  purchases: ReconcilePurchase[],
  billPayments: ReconcileBillPayment[],
): ReconcileBusinessResult {
  // The day the run started, not the clock: a replay counts ages to the same day.
  const asOf = input.asOf ?? calendarDay(workflowInfo().startTime.getTime());
  return record.finished(reconcile(purchases, billPayments, asOf, input.options));
}

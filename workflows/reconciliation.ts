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

/**
 * One reconciliation of a business's supplier invoices with its accounting company's bill payments, one activity
 * per page at the lowest priority, the rules applied here (docs/reconciliation.md says why it never continues as new).
 * Its end is counted once: succeeded with the findings (record.finished) or failed here, a refused input included.
 */
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

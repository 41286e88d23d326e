import { ApplicationFailure } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { ReconcileBillPayment, ReconcilePurchase } from '../../src/contracts/reconciliation.js';
import type { Reconciliation } from './context.js';
import { readPages } from './paging.js';

/**
 * The link first: a business or company the keys cannot see fails `not_configured` (non-retryable) in its
 * activity, named, rather than as a 403 halfway through.
 */
export async function checkLink({ input, api }: Reconciliation): Promise<void> {
  const { businessId, companyId } = input;
  await api.checkBusiness(businessId);
  await readPages('the accounting company list', async (page) => ({
    more: !(await api.checkCompanyPage(companyId, page)).found,
  }));
}

// Both lists may list a record twice (a record added while paging); reconcile() keeps each id once.

/** The business's supplier invoices, page after page by the cursor each page hands out. */
export async function listPurchases({ input, api }: Reconciliation): Promise<ReconcilePurchase[]> {
  const { businessId } = input;
  const purchases: ReconcilePurchase[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  await readPages(`business ${businessId}'s purchase list`, async (page) => {
    if (cursor !== null) {
      // A cursor handed out twice would read the same pages until the bound: stop at once instead.
      if (cursors.has(cursor)) {
        throw ApplicationFailure.nonRetryable(
          `listPurchases: the compliance service returned cursor ${JSON.stringify(cursor)} twice`,
          FAILURE_TYPES.unexpectedResponse,
        );
      }
      cursors.add(cursor);
    }
    const listed = await api.purchasesPage({ businessId, cursor }, page);
    purchases.push(...listed.purchases);
    cursor = listed.nextCursor;
    return { more: cursor !== null };
  });
  return purchases;
}

/** The company's bill payments, page after page. */
export async function listBillPayments({ input, api }: Reconciliation): Promise<ReconcileBillPayment[]> {
  const { companyId } = input;
  const billPayments: ReconcileBillPayment[] = [];
  await readPages(`company ${companyId}'s bill payment list`, async (page) => {
    const listed = await api.billPaymentsPage(companyId, page);
    billPayments.push(...listed.billPayments);
    return { more: listed.hasNextPage };
  });
  return billPayments;
}

import { condition } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { placeOnBudget, type CallRoute } from '../placement.js';
import { OperatorCancelled, applicationFailure, type DocumentProcess } from '../document/process.js';

// A worker tells waiting sales when a reload serves more businesses (businessServed); the timer is for a telling that
// visibility's lag or another worker's older tenants made come to nothing.
const FIRST_RETRY_MS = 5_000;
const LONGEST_RETRY_MS = 5 * 60_000;

/**
 * Places the sale on the budget of the application serving its business. A business none serves yet (its tenants
 * entry not reloaded on this worker) is waited for, sending nothing, until a reload serves it or the sale is cancelled.
 */
export async function placeWhenServed(sale: DocumentProcess): Promise<CallRoute> {
  const { record, inbox, businessId } = sale;
  for (;;) {
    try {
      const route = await placeOnBudget(businessId, true);
      record.businessServed();
      return route;
    } catch (err) {
      const failure = applicationFailure(err);
      if (failure?.type !== FAILURE_TYPES.businessNotServed) throw err;
      const { attempts } = record.awaitingBusiness(failure.message);
      const told = inbox.businessServed;
      const retryMs = Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), LONGEST_RETRY_MS);
      await condition(() => inbox.businessServed !== told || inbox.operatorCancel !== undefined, retryMs);
      if (inbox.operatorCancel !== undefined) throw new OperatorCancelled(inbox.operatorCancel);
    }
  }
}

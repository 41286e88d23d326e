/** One request per activity (the queue's rate limit counts activity starts), returning the rules' compact records. */
import { ApplicationFailure } from '@temporalio/common';
import { ReconciliationInputError, checkBusinessAccess, readPurchasesPage } from '../src/reconciliation/load.js';
import { callApi } from './api-call.js';
import type { ActivityDeps } from './deps.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';

/** A business or company the keys cannot see: configuration, which no retry fixes. Others are left to callApi. */
export async function failingNotConfigured<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ReconciliationInputError) {
      throw ApplicationFailure.create({ type: FAILURE_TYPES.notConfigured, message: err.message, nonRetryable: true });
    }
    throw err;
  }
}

export function createReconciliationActivities(deps: Pick<ActivityDeps, 'services' | 'logger' | 'metrics'>) {
  const { services } = deps;
  return {
    /** `GET /v1/businesses`: the link check, failing `not_configured` when the key may not act for the business. */
    async checkReconciliationBusiness({ businessId }: { businessId: string }): Promise<void> {
      await callApi(deps, true, (signal) =>
        failingNotConfigured(() => checkBusinessAccess(services.compliance(businessId), businessId, signal)),
      );
    },

    /**
     * One page (100) of `GET /v1/purchases`, as the reconciliation rules read them; `cursor` null for the first.
     * `fromDate`, `toDate`: the run's period (both days included); absent, every stored invoice.
     */
    async listReconciliationPurchases({ businessId, cursor, fromDate, toDate }: ReconciliationPurchasesQuery) {
      return callApi(deps, true, (signal) =>
        readPurchasesPage(services.compliance(businessId), businessId, cursor, { fromDate, toDate }, signal),
      );
    },
  };
}

export interface ReconciliationPurchasesQuery {
  businessId: string;
  cursor: string | null;
  fromDate?: string;
  toDate?: string;
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
export type ReconciliationPurchasesPage = Awaited<ReturnType<ReconciliationActivities['listReconciliationPurchases']>>;

/**
 * The scheduled reconciliation's compliance calls, one request per activity: this queue's server-side rate
 * limit is the fleet's compliance budget, and it counts activity starts. They return the rules' compact
 * records (src/reconciliation/load.ts maps them, as for `npm run reconcile`), so the workflow's history holds
 * what the rules read and nothing more. The accounting calls are in accounting.ts, on the accounting queue.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../src/logger.js';
import type { ServiceAccess } from '../src/services/access.js';
import { ReconciliationInputError, checkBusinessAccess, readPurchasesPage } from '../src/reconciliation/load.js';
import type { ReconcilePurchase } from '../src/contracts/reconciliation.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import { callApi } from './api-call.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';

export interface ReconciliationActivityDeps {
  services: ServiceAccess;
  logger: Logger;
  /** The worker's metrics (absent: nothing recorded). */
  metrics?: MetricsRecorder;
}

export interface CheckReconciliationBusinessInput {
  businessId: string;
}

export interface ListReconciliationPurchasesInput {
  businessId: string;
  /** null for the first page. */
  cursor: string | null;
}

export interface ReconciliationPurchasesPage {
  purchases: ReconcilePurchase[];
  /** null on the last page. */
  nextCursor: string | null;
}

/**
 * A business or company the keys cannot see: configuration, which no retry fixes, so `not_configured` and
 * non-retryable, with the message that names it. Other errors are left to callApi.
 */
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

export function createReconciliationActivities({ services, logger, metrics }: ReconciliationActivityDeps) {
  return {
    /** `GET /v1/businesses`: the link check, failing `not_configured` when the key may not act for the business. */
    async checkReconciliationBusiness({ businessId }: CheckReconciliationBusinessInput): Promise<void> {
      await callApi({ idempotent: true, logger, metrics }, (signal) =>
        failingNotConfigured(() => checkBusinessAccess(services.compliance(businessId), businessId, signal)),
      );
    },

    /** One page (100) of `GET /v1/purchases`, as the reconciliation rules read them. */
    async listReconciliationPurchases({
      businessId,
      cursor,
    }: ListReconciliationPurchasesInput): Promise<ReconciliationPurchasesPage> {
      return callApi({ idempotent: true, logger, metrics }, (signal) =>
        readPurchasesPage(services.compliance(businessId), businessId, cursor, signal),
      );
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;

/**
 * One activity per accounting API call, thin typed wrappers over the AccountingClient. They return plain
 * data only, and only what the calling workflow needs of a bill payment (the sync batch its sync status, the
 * reconciliation what its rules read), so histories stay small.
 * Errors become Temporal failures the way the compliance activities' do (failures.ts via callApi): 429 waits
 * `Retry-After`, 5xx and timeouts are retried (every call is safe to repeat, A10), 401/403/404 end the
 * activity with a message that says what to check.
 */
import type { KnownPaymentMethod, KnownSyncStatus, SortDirection, SortField } from '../src/accounting/schemas.js';
import { ApiError } from '../src/http/errors.js';
import type { Logger } from '../src/logger.js';
import type { ServiceAccess } from '../src/services/access.js';
import { findCompanyOnPage, readBillPaymentsPage } from '../src/reconciliation/load.js';
import type { ReconcileBillPayment } from '../src/contracts/reconciliation.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import { callApi } from './api-call.js';
import { failingNotConfigured } from './reconciliation.js';

export interface AccountingActivityDeps {
  services: ServiceAccess;
  logger: Logger;
  /** The worker's metrics (absent: nothing recorded). */
  metrics?: MetricsRecorder;
}

export interface ProcessSyncBatchInput {
  syncBatchId: string;
  /**
   * The company the batch belongs to (the sync batch's `companyId`): with several accounting applications it says
   * whose key processes the batch. Absent: the one accounting application.
   */
  companyId?: string;
}

export interface ProcessSyncBatchResult {
  /** The service's own words (A10: started, already processing, already processed, started again). */
  message: string;
  httpStatus: number;
}

export interface ListBillPaymentsPageInput {
  companyId?: string;
  syncBatchId?: string;
  status?: KnownSyncStatus;
  paymentMethod?: KnownPaymentMethod;
  sortBy?: SortField;
  sortOrder?: SortDirection;
  /** 1-based. */
  page: number;
  /** 1..100. */
  limit: number;
}

/** What the workflow follows of a bill payment: its sync status, batch (A18) and failure reason (A19). */
export interface BillPaymentSyncRecord {
  id: string;
  status: string | null;
  syncBatchId: string | null;
  syncError: string | null;
  updatedAt: string | null;
}

export interface BillPaymentsPage {
  items: BillPaymentSyncRecord[];
  page: number;
  total: number;
  hasNextPage: boolean;
}

/** One page of the reconciliation's access check: the companies the key sees. */
export interface CheckReconciliationCompanyInput {
  companyId: string;
  /** 1-based. */
  page: number;
}

export interface ListReconciliationBillPaymentsInput {
  companyId: string;
  /** 1-based; 100 a page, oldest first by creation. */
  page: number;
}

export interface ReconciliationBillPaymentsPage {
  /** As the reconciliation rules read them (src/reconciliation/load.ts), nothing more. */
  billPayments: ReconcileBillPayment[];
  hasNextPage: boolean;
}

/** What to check when the service refuses: the status alone says which setting is wrong. */
const REFUSAL_HINTS: Partial<Record<number, string>> = {
  401:
    'the accounting service refused the credentials ' +
    '(check ACCOUNTING_API_KEY, and ACCOUNTING_CLIENT_SECRET and the clock when requests are signed)',
  403:
    "the API key's application may not act for this company or sync batch " +
    '(check the company id and ACCOUNTING_API_KEY)',
  404: 'the accounting service does not know it (check the sync batch id and ACCOUNTING_BASE_URL)',
};

/** The same error with a message that says what to check; everything else (status, code, retry) unchanged. */
function withHint(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.status === undefined) return err;
  const hint = REFUSAL_HINTS[err.status];
  if (hint === undefined) return err;
  return new ApiError({
    service: err.service,
    operation: err.operation,
    method: err.method,
    path: err.path,
    status: err.status,
    code: err.code,
    message: `${hint}: ${err.message}`,
    details: err.details,
    retryAfterSeconds: err.retryAfterSeconds,
    rateLimit: err.rateLimit,
    retry: err.retry,
    requestSent: err.requestSent,
    cause: err,
  });
}

function text(value: string | null | undefined): string | null {
  return typeof value === 'string' ? value : null;
}

export function createAccountingActivities({ services, logger, metrics }: AccountingActivityDeps) {
  const call = <T>(run: (signal: AbortSignal) => Promise<T>) =>
    callApi({ idempotent: true, logger, metrics }, async (signal) => {
      try {
        return await run(signal);
      } catch (err) {
        throw withHint(err);
      }
    });

  return {
    /** `POST /sync/batches/{id}/process`: safe to repeat (A10), so retried like a read. */
    async processSyncBatch({ syncBatchId, companyId }: ProcessSyncBatchInput): Promise<ProcessSyncBatchResult> {
      const { data, meta } = await call((signal) =>
        services.accounting(companyId).processSyncBatch(syncBatchId, { signal }),
      );
      return { message: data.message, httpStatus: meta.status };
    },

    /** One page of `GET /bill-payments` with the given filters and sorting. */
    async listBillPaymentsPage(input: ListBillPaymentsPageInput): Promise<BillPaymentsPage> {
      const { data } = await call((signal) => services.accounting(input.companyId).listBillPayments(input, { signal }));
      return {
        items: data.data.map((b) => ({
          id: b.id,
          status: text(b.status),
          syncBatchId: text(b.syncBatchId),
          syncError: text(b.syncError),
          updatedAt: text(b.updatedAt),
        })),
        page: data.page,
        total: data.total,
        hasNextPage: data.hasNextPage,
      };
    },

    /**
     * One page of `GET /companies` for the reconciliation's link check: whether the company is on it. On none
     * (this was the last page) the key cannot see it: `not_configured`, non-retryable, naming the company.
     */
    async checkReconciliationCompany({
      companyId,
      page,
    }: CheckReconciliationCompanyInput): Promise<{ found: boolean }> {
      const { found } = await call((signal) =>
        failingNotConfigured(() => findCompanyOnPage(services.accounting(companyId), companyId, page, signal)),
      );
      return { found };
    },

    /** One page of the company's `GET /bill-payments`, as the reconciliation rules read them. */
    async listReconciliationBillPayments({
      companyId,
      page,
    }: ListReconciliationBillPaymentsInput): Promise<ReconciliationBillPaymentsPage> {
      return call((signal) => readBillPaymentsPage(services.accounting(companyId), companyId, page, signal));
    },
  };
}

export type AccountingActivities = ReturnType<typeof createAccountingActivities>;

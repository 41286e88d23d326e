/** One activity per accounting API call, returning only what the workflow needs; every call is safe to repeat (A10). */
import type { BillPaymentFilters } from '../src/accounting/client.js';
import { ApiError } from '../src/http/errors.js';
import { findCompanyOnPage, readBillPaymentsPage } from '../src/reconciliation/load.js';
import { callApi } from './api-call.js';
import type { ActivityDeps } from './deps.js';
import { failingNotConfigured } from './reconciliation.js';

export type ListBillPaymentsPageInput = BillPaymentFilters & Required<Pick<BillPaymentFilters, 'page' | 'limit'>>;

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

/** Everything else of the error (status, code, retry) unchanged. */
function withHint(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.status === undefined) return err;
  const hint = REFUSAL_HINTS[err.status];
  if (hint === undefined) return err;
  return new ApiError({ ...err, message: `${hint}: ${err.message}`, cause: err });
}

export function createAccountingActivities(deps: Pick<ActivityDeps, 'services' | 'logger' | 'metrics'>) {
  const { services } = deps;
  const call = <T>(run: (signal: AbortSignal) => Promise<T>) =>
    callApi(deps, true, async (signal) => {
      try {
        return await run(signal);
      } catch (err) {
        throw withHint(err);
      }
    });

  return {
    /** `companyId`: with several accounting applications, whose key processes the batch; absent: the one. */
    async processSyncBatch(input: { syncBatchId: string; companyId?: string }) {
      const { data, meta } = await call((signal) =>
        services.accounting(input.companyId).processSyncBatch(input.syncBatchId, { signal }),
      );
      // The service's own words (A10: started, already processing, already processed, started again).
      return { message: data.message, httpStatus: meta.status };
    },

    /** What the workflow follows of a bill payment: its sync status, batch (A18) and failure reason (A19). */
    async listBillPaymentsPage(input: ListBillPaymentsPageInput) {
      const { data } = await call((signal) => services.accounting(input.companyId).listBillPayments(input, { signal }));
      return {
        items: data.data.map((b) => ({
          id: b.id,
          status: b.status ?? null,
          syncBatchId: b.syncBatchId ?? null,
          syncError: b.syncError ?? null,
          updatedAt: b.updatedAt ?? null,
        })),
        page: data.page,
        total: data.total,
        hasNextPage: data.hasNextPage,
      };
    },

    /** One page of `GET /companies`: is the company on it? Past the last page: `not_configured`, naming it. */
    async checkReconciliationCompany({ companyId, page }: { companyId: string; page: number }) {
      const { found } = await call((signal) =>
        failingNotConfigured(() => findCompanyOnPage(services.accounting(companyId), companyId, page, signal)),
      );
      return { found };
    },

    /** One page (100, oldest first) of the company's `GET /bill-payments`, as the reconciliation rules read them. */
    async listReconciliationBillPayments({ companyId, page }: { companyId: string; page: number }) {
      return call((signal) => readBillPaymentsPage(services.accounting(companyId), companyId, page, signal));
    },
  };
}

export type AccountingActivities = ReturnType<typeof createAccountingActivities>;
type Answer<K extends keyof AccountingActivities> = Awaited<ReturnType<AccountingActivities[K]>>;
export type ProcessSyncBatchResult = Answer<'processSyncBatch'>;
export type BillPaymentSyncRecord = Answer<'listBillPaymentsPage'>['items'][number];
export type ReconciliationBillPaymentsPage = Answer<'listReconciliationBillPayments'>;

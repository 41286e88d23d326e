import type { FastifyInstance } from 'fastify';
import { applicationOf } from '../auth.js';
import { forbidden } from '../errors.js';
import { paginate, parseBillPaymentQuery, type SortField } from '../list-query.js';
import type { AccountingState, BillPaymentRecord } from '../state.js';

type Comparable = string | number;

const SORT_KEYS: Record<SortField, (b: BillPaymentRecord) => Comparable> = {
  // A7: the resource has no paymentDate field; its `date` is the payment date.
  paymentDate: (b) => b.date,
  totalAmount: (b) => b.totalAmount,
  createdAt: (b) => Date.parse(b.createdAt),
  updatedAt: (b) => Date.parse(b.updatedAt),
};

function compare(a: Comparable, b: Comparable): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The resource as the API shows it: the company link is internal; A6 adds paymentMethod and status, A18
 * `syncBatchId` and A19 `syncError` (each only when set).
 */
function toResource({ companyId: _companyId, ...payment }: BillPaymentRecord) {
  return payment;
}

export function billPaymentRoutes(app: FastifyInstance, state: AccountingState): void {
  app.get('/bill-payments', async (request) => {
    const query = parseBillPaymentQuery(request.query as Record<string, unknown>);
    const application = applicationOf(request);
    if (query.companyId !== undefined && !state.ownsCompany(application.id, query.companyId)) {
      // Same answer whether the company exists elsewhere or not at all (A9).
      throw forbidden(`Not authorized for company ${query.companyId}`);
    }
    const key = SORT_KEYS[query.sortBy];
    const direction = query.sortOrder === 'asc' ? 1 : -1;
    const matching = state
      .billPaymentsOf(application.id)
      .filter(
        (b) =>
          (query.companyId === undefined || b.companyId === query.companyId) &&
          (query.paymentMethod === undefined || b.paymentMethod === query.paymentMethod) &&
          (query.status === undefined || b.status === query.status) &&
          (query.syncBatchId === undefined || b.syncBatchId === query.syncBatchId),
      )
      // Ties are broken by id so pages never overlap or skip records.
      .sort((a, b) => direction * compare(key(a), key(b)) || compare(a.id, b.id));
    return paginate(matching.map(toResource), query);
  });
}

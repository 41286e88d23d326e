/**
 * Reads what a reconciliation needs through the two clients: the business's stored purchases (cursor paging,
 * 100 a page) and the company's bill payments (offset paging, 100 a page). Bounded by a page limit per list,
 * and every call counted, so a run reports what it cost.
 */
import type { AccountingClient } from '../accounting/client.js';
import type { BillPayment } from '../accounting/schemas.js';
import type { ComplianceClient } from '../compliance/client.js';
import type { Purchase } from '../compliance/schemas.js';

export const PAGE_SIZE = 100;
/** 500 pages of 100: far beyond one business's invoices, near enough to stop a service that never ends a list. */
export const DEFAULT_MAX_PAGES = 500;

/** A business or company the keys cannot see, or a list longer than allowed: retrying will not help. */
export class ReconciliationInputError extends Error {
  override readonly name = 'ReconciliationInputError';
}

/** API calls made, per service and operation. */
export interface ReconciliationCalls {
  compliance: { listBusinesses: number; listPurchases: number };
  accounting: { listCompanies: number; listBillPayments: number };
  total: number;
}

export interface LoadedReconciliation {
  purchases: Purchase[];
  billPayments: BillPayment[];
  calls: ReconciliationCalls;
}

export interface LoadOptions {
  businessId: string;
  companyId: string;
  /** Largest number of pages read from each list (default 500). */
  maxPages?: number;
  /** Check first that the key sees the business and the company (default true; two or more calls). */
  checkAccess?: boolean;
  signal?: AbortSignal;
  /** Called after every page, e.g. to heartbeat a Temporal activity. */
  onPage?: (progress: { list: 'purchases' | 'billPayments'; pages: number; records: number }) => void;
}

function newCalls(): ReconciliationCalls {
  return { compliance: { listBusinesses: 0, listPurchases: 0 }, accounting: { listCompanies: 0, listBillPayments: 0 }, total: 0 };
}

function tooLong(what: string, maxPages: number): ReconciliationInputError {
  return new ReconciliationInputError(`${what} has more than ${maxPages} pages of ${PAGE_SIZE}; raise maxPages to reconcile it`);
}

/**
 * The business must be one the compliance key may act for and the company one the accounting key may see:
 * a link to anything else is a configuration mistake, reported as such rather than as a 403 halfway through.
 */
export async function checkLinkAccess(
  clients: { compliance: ComplianceClient; accounting: AccountingClient },
  link: { businessId: string; companyId: string },
  options: { maxPages?: number; signal?: AbortSignal; calls?: ReconciliationCalls } = {},
): Promise<void> {
  const calls = options.calls ?? newCalls();
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const signal = options.signal ? { signal: options.signal } : {};
  calls.compliance.listBusinesses += 1;
  calls.total += 1;
  const { data: businesses } = await clients.compliance.listBusinesses(signal);
  if (!businesses.some((b) => b.id === link.businessId)) {
    throw new ReconciliationInputError(
      `business ${link.businessId} is not one the compliance API key may act for (it sees: ${businesses.map((b) => b.id).join(', ') || 'none'})`,
    );
  }
  for (let page = 1; ; page++) {
    if (page > maxPages) throw tooLong('the accounting company list', maxPages);
    calls.accounting.listCompanies += 1;
    calls.total += 1;
    const { data } = await clients.accounting.listCompanies({ page, limit: PAGE_SIZE }, signal);
    if (data.data.some((c) => c.id === link.companyId)) return;
    if (!data.hasNextPage || data.data.length === 0) break;
  }
  throw new ReconciliationInputError(`accounting company ${link.companyId} is not visible to the accounting API key`);
}

/** Every stored purchase of the business and every bill payment of the company, each once. */
export async function loadReconciliationData(
  clients: { compliance: ComplianceClient; accounting: AccountingClient },
  options: LoadOptions,
): Promise<LoadedReconciliation> {
  const calls = newCalls();
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const signal = options.signal ? { signal: options.signal } : {};
  if (options.checkAccess !== false) await checkLinkAccess(clients, options, { maxPages, calls, ...signal });

  // Keyed by the service's document id (never the supplier's invoice number, which suppliers share).
  const purchases = new Map<string, Purchase>();
  let pages = 0;
  for await (const page of clients.compliance.iteratePurchasePages({ pageSize: PAGE_SIZE }, { businessId: options.businessId, ...signal })) {
    pages += 1;
    calls.compliance.listPurchases += 1;
    calls.total += 1;
    for (const purchase of page.data.purchases) purchases.set(purchase.id, purchase);
    options.onPage?.({ list: 'purchases', pages, records: purchases.size });
    if (pages >= maxPages && page.data.pagination.nextCursor) throw tooLong(`business ${options.businessId}'s purchase list`, maxPages);
  }

  // Oldest first by creation: payments recorded while paging land on later pages instead of shifting earlier
  // ones, so offset paging neither skips nor (with the id map) repeats a payment.
  const billPayments = new Map<string, BillPayment>();
  pages = 0;
  const filters = { companyId: options.companyId, limit: PAGE_SIZE, sortBy: 'createdAt', sortOrder: 'asc' } as const;
  for await (const page of clients.accounting.iterateBillPaymentPages(filters, signal)) {
    pages += 1;
    calls.accounting.listBillPayments += 1;
    calls.total += 1;
    for (const payment of page.data) billPayments.set(payment.id, payment);
    options.onPage?.({ list: 'billPayments', pages, records: billPayments.size });
    if (pages >= maxPages && page.hasNextPage) throw tooLong(`company ${options.companyId}'s bill payment list`, maxPages);
  }
  return { purchases: [...purchases.values()], billPayments: [...billPayments.values()], calls };
}

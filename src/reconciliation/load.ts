// The single-request steps are exported for the scheduled workflow's activities, which make one request each.
import type { AccountingClient } from '../accounting/client.js';
import type { BillPayment } from '../accounting/schemas.js';
import type { ComplianceClient } from '../compliance/client.js';
import type { Purchase } from '../compliance/schemas.js';
import { PAGE_SIZE, pageReader } from './limits.js';
import { billPaymentListEnd } from './rules.js';
import type { ReconcileBillPayment, ReconcilePurchase, ReconciliationPeriod } from '../contracts/reconciliation.js';

/** A business or company the keys cannot see, or a list longer than allowed: retrying will not help. */
export class ReconciliationInputError extends Error {
  override readonly name = 'ReconciliationInputError';
}

/** Exactly the fields the rules and the report read: also what a workflow's history holds. */
function toReconcilePurchase(purchase: Purchase): ReconcilePurchase {
  return {
    id: purchase.id,
    status: purchase.status,
    supplier: { name: purchase.supplier.name ?? null },
    supplierInvoiceNumber: purchase.supplierInvoiceNumber,
    invoiceDate: purchase.invoiceDate,
    totals: { total: purchase.totals.total },
  };
}

function toReconcileBillPayment(payment: BillPayment): ReconcileBillPayment {
  return {
    id: payment.id,
    supplierRef: payment.supplierRef ? { name: payment.supplierRef.name ?? null } : null,
    billRef: payment.billRef ? { billCode: payment.billRef.billCode ?? null } : null,
    totalAmount: payment.totalAmount,
    currency: payment.currency,
    date: payment.date,
    lines: payment.lines?.map((line) => ({ amount: line.amount ?? null, reference: line.reference ?? null })) ?? null,
  };
}

export async function checkBusinessAccess(compliance: ComplianceClient, businessId: string, signal?: AbortSignal) {
  const { data: businesses } = await compliance.listBusinesses({ signal });
  if (!businesses.some((b) => b.id === businessId))
    throw new ReconciliationInputError(
      `business ${businessId} is not one the compliance API key may act for ` +
        `(it sees: ${businesses.map((b) => b.id).join(', ') || 'none'})`,
    );
}

/** Whether the company is on page `page` of those the accounting key sees; past the last page, an error. */
export async function findCompanyOnPage(
  accounting: AccountingClient,
  companyId: string,
  page: number,
  signal?: AbortSignal,
): Promise<{ found: boolean }> {
  const { data } = await accounting.listCompanies({ page, limit: PAGE_SIZE }, { signal });
  if (data.data.some((c) => c.id === companyId)) return { found: true };
  if (!data.hasNextPage || data.data.length === 0)
    throw new ReconciliationInputError(`accounting company ${companyId} is not visible to the accounting API key`);
  return { found: false };
}

/** The invoice dates a page is asked for (C27, C72), both days included; absent, every stored invoice. */
export interface PurchasesPageDates {
  fromDate?: string;
  toDate?: string;
}

export async function readPurchasesPage(
  compliance: ComplianceClient,
  businessId: string,
  cursor: string | null,
  dates: PurchasesPageDates = {},
  signal?: AbortSignal,
): Promise<{ purchases: ReconcilePurchase[]; nextCursor: string | null }> {
  const query = { pageSize: PAGE_SIZE, cursor: cursor ?? undefined, fromDate: dates.fromDate, toDate: dates.toDate };
  const { data } = await compliance.listPurchases(query, { businessId, signal });
  return { purchases: data.purchases.map(toReconcilePurchase), nextCursor: data.pagination.nextCursor || null };
}

/** The only place the bill payment list's query is written: docs/contract-assumptions.md, R9. */
export async function readBillPaymentsPage(
  accounting: AccountingClient,
  companyId: string,
  page: number,
  signal?: AbortSignal,
): Promise<{ billPayments: ReconcileBillPayment[]; hasNextPage: boolean }> {
  // Newest payment date first: a run reads back only as far as its period needs (billPaymentListEnd).
  const { data } = await accounting.listBillPayments(
    { companyId, page, limit: PAGE_SIZE, sortBy: 'paymentDate', sortOrder: 'desc' },
    { signal },
  );
  // An empty page that claims a successor would loop forever; it ends the list.
  return { billPayments: data.data.map(toReconcileBillPayment), hasNextPage: data.hasNextPage && data.data.length > 0 };
}

export async function loadReconciliationData(
  clients: { compliance: ComplianceClient; accounting: AccountingClient },
  options: {
    businessId: string;
    companyId: string;
    /** The period to read (`reconciliationPeriod`); absent, every invoice and payment. */
    period?: ReconciliationPeriod;
    maxPages?: number;
    /** Check first that the keys see the business and the company (default true). */
    checkAccess?: boolean;
  },
): Promise<{ purchases: ReconcilePurchase[]; billPayments: ReconcileBillPayment[] }> {
  const { period } = options;
  const { businessId, companyId } = options;
  const readPages = pageReader((message) => new ReconciliationInputError(message), options.maxPages);
  if (options.checkAccess !== false) {
    // A link the keys cannot see is a configuration mistake, reported as such rather than as a 403 halfway through.
    await checkBusinessAccess(clients.compliance, businessId);
    await readPages('the accounting company list', async (page) => ({
      more: !(await findCompanyOnPage(clients.accounting, companyId, page)).found,
    }));
  }
  // Keyed by the service's document id (never the supplier's invoice number, which suppliers share).
  const purchases = new Map<string, ReconcilePurchase>();
  let cursor: string | null = null;
  await readPages(`business ${businessId}'s purchase list`, async () => {
    const dates = period ? { fromDate: period.from, toDate: period.to } : {};
    const page = await readPurchasesPage(clients.compliance, businessId, cursor, dates);
    for (const purchase of page.purchases) purchases.set(purchase.id, purchase);
    cursor = page.nextCursor;
    return { more: cursor !== null };
  });
  const billPayments = new Map<string, ReconcileBillPayment>();
  const ends = period ? billPaymentListEnd(period) : () => false;
  await readPages(`company ${companyId}'s bill payment list`, async (number) => {
    const page = await readBillPaymentsPage(clients.accounting, companyId, number);
    for (const payment of page.billPayments) billPayments.set(payment.id, payment);
    return { more: page.hasNextPage && !ends(page.billPayments) };
  });
  return { purchases: [...purchases.values()], billPayments: [...billPayments.values()] };
}

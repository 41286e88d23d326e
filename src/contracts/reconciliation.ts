/** The reconciliation process's contract, and the compact records the rules (src/reconciliation/rules.ts) read. */

export const RECONCILIATION_WORKFLOW_TYPE = 'reconciliationWorkflow';

/** Its runs' workflow ids start with the schedule id. */
export function reconciliationScheduleId(businessId: string, idPrefix = 'reconciliation'): string {
  return `${idPrefix}:${businessId}`;
}

/** Longest period a run may reconcile: ten years, far past any payment terms. */
export const MAX_PERIOD_DAYS = 3660;

export type MatchRuleId = 'reference-amount-agrees' | 'reference-amount-differs' | 'supplier-amount-date';

/** The compliance client's `Purchase` fits. */
export interface ReconcilePurchase {
  id: string;
  status: string;
  supplier: { name?: string | null };
  supplierInvoiceNumber: string;
  invoiceDate: string;
  totals: { total: number };
}

/** The accounting client's `BillPayment` fits. */
export interface ReconcileBillPayment {
  id: string;
  supplierRef?: { name?: string | null } | null;
  billRef?: { billCode?: string | null } | null;
  totalAmount: number;
  currency: string;
  /** YYYY-MM-DD or a date-time starting with it (A7). */
  date: string;
  lines?: ReadonlyArray<{ amount?: number | null; reference?: string | null }> | null;
}

export interface ReconcileOptions {
  /** Largest difference between an invoice's total and what was paid for it that still agrees (default 1.00). */
  amountTolerance: number;
  /** A payment dated this many days before or after an invoice may be suggested for it (default 30). */
  dateWindowDays: number;
  /** Currency of the invoices; a payment in another currency is never compared on amount (default KES). */
  currency: string;
  /** A run reconciles the invoices dated in this many days, the last being `asOf` (default 90). */
  periodDays: number;
}

/** What a run reads and reports: docs/reconciliation.md, "The period". All days YYYY-MM-DD, inclusive. */
export interface ReconciliationPeriod {
  /** The first day of the period: invoices dated from it on. */
  from: string;
  /** The last day, `asOf`: nothing dated after it is in the result. */
  to: string;
  days: number;
  /** `from` less the suggestion window: a payment dated from this day on can pair with an invoice of the period. */
  paymentsFrom: string;
  /**
   * `from` plus the suggestion window: a payment dated from this day on that pairs with no invoice of the period is
   * listed without an invoice; an earlier one is left out, as its invoice may be older than the period (R11).
   */
  unmatchedPaymentsFrom: string;
}

export interface Pairing {
  purchaseId: string;
  billPaymentIds: string[];
  rule: MatchRuleId;
  invoiceTotal: number;
  /** What the payments allocate to this invoice, in their currency. */
  paid: number;
  /** paid − invoiceTotal. */
  difference: number;
  /** Why the amounts cannot be compared (a payment in another currency). */
  note?: string;
  /** Only in the workflow's result: payments left out of `billPaymentIds` to keep the result small. */
  omittedBillPaymentIds?: number;
}

/** Invoices and payments the rules could pair in more than one way: for a person to decide. */
export interface Tie {
  reason: 'same_reference' | 'several_candidates';
  purchaseIds: string[];
  billPaymentIds: string[];
  /** Only in the workflow's result: ids left out of the two lists to keep the result small. */
  omitted?: { purchaseIds: number; billPaymentIds: number };
}

/** The result's lists, one per category. */
export type ReconciliationList = keyof Omit<
  ReconciliationResult,
  'asOf' | 'period' | 'outsidePeriod' | 'unpaidAgeDays' | 'counts'
>;

/** The length of each list of the result, and the invoices and payments in it (those of the period). */
export type ReconciliationCounts = Record<'purchases' | 'billPayments' | ReconciliationList, number>;

export interface ReconciliationResult {
  asOf: string;
  period: ReconciliationPeriod;
  /**
   * Records read but not in the result: invoices dated outside the period, payments dated after `asOf` or before
   * `period.paymentsFrom`, and payments dated before `period.unmatchedPaymentsFrom` that pair with no invoice of it.
   */
  outsidePeriod: { purchases: number; billPayments: number };
  matched: Pairing[];
  suggested: Pairing[];
  amountMismatches: Pairing[];
  /** Not rejected and no payment found; also the invoices of ties. */
  unpaidPurchases: string[];
  /** No invoice found; also the payments of ties. */
  unmatchedPayments: string[];
  /** Rejected by the business in eTIMS and not paid: nothing is owed, so not "unpaid". */
  rejectedPurchases: string[];
  ties: Tie[];
  /** Days from invoice date to `asOf` (null when the invoice date is unreadable). */
  unpaidAgeDays: Record<string, number | null>;
  counts: ReconciliationCounts;
}

export interface ReconciliationInput {
  businessId: string;
  companyId: string;
  /** Default: the day the workflow started, in Nairobi. */
  asOf?: string;
  options?: Partial<ReconcileOptions>;
}

/**
 * The workflow's summary: the fields of `npm run reconcile -- --json`, every count, and each list capped
 * (src/reconciliation/summary.ts). `unpaidAgeDays` holds the listed unpaid invoices only.
 */
export interface ReconciliationSummary extends ReconciliationResult {
  /** How many entries each capped list leaves out; a list whose category is absent is complete. */
  truncated: Partial<Record<ReconciliationList, number>>;
}

export interface ReconcileBusinessResult {
  businessId: string;
  companyId: string;
  summary: ReconciliationSummary;
  counts: ReconciliationCounts;
}

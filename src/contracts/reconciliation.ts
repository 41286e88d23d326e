/** The reconciliation process's contract, and the compact records the rules (src/reconciliation/rules.ts) read. */

export const RECONCILIATION_WORKFLOW_TYPE = 'reconciliationWorkflow';

/** Its runs' workflow ids start with the schedule id. */
export function reconciliationScheduleId(businessId: string, idPrefix = 'reconciliation'): string {
  return `${idPrefix}:${businessId}`;
}

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
}

/** Invoices and payments the rules could pair in more than one way: for a person to decide. */
export interface Tie {
  reason: 'same_reference' | 'several_candidates';
  purchaseIds: string[];
  billPaymentIds: string[];
}

/** The length of each list of the result, and the invoices and payments read. */
export type ReconciliationCounts = Record<
  'purchases' | 'billPayments' | keyof Omit<ReconciliationResult, 'asOf' | 'unpaidAgeDays' | 'counts'>,
  number
>;

export interface ReconciliationResult {
  asOf: string;
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

export interface ReconcileBusinessResult {
  businessId: string;
  companyId: string;
  /** The JSON of `npm run reconcile -- --json`. */
  summary: ReconciliationResult;
  counts: ReconciliationCounts;
}

/**
 * The compliance contract's domain rules, each stated once: the client's schemas and request checks, the
 * activities, the sale workflow and the client API import them from here (the sandbox reads the contract
 * for itself: sandbox/compliance/contract.ts). Plain values and
 * predicates only (no zod, no Node APIs), because workflow code imports this file.
 */

/** Documents the tax authority has not decided on yet (C4). */
export const IN_FLIGHT_STATUSES = ['pending', 'ready_to_submit', 'retrying'] as const;
export type InFlightStatus = (typeof IN_FLIGHT_STATUSES)[number];

/** Pending, ready to submit or retrying. An unknown status is not in flight (and never signed). */
export function isInFlight(status: string): status is InFlightStatus {
  return (IN_FLIGHT_STATUSES as readonly string[]).includes(status);
}

/**
 * Accepted by the tax authority, with the signed receipt values to prove it: `completed` alone is never taken
 * as signed (C4), because a sale without its receipt values cannot be printed or verified.
 */
export function isSigned<D extends { status: string; receipt?: object | null }>(
  document: D,
): document is D & { receipt: NonNullable<D['receipt']> } {
  return document.status === 'completed' && document.receipt !== null && document.receipt !== undefined;
}

/**
 * Credit note reasons: 01 missing quantity, 02 missing data, 03 damaged, 04 wasted, 05 raw material shortage, 06
 * refund.
 */
export const CREDIT_NOTE_REASONS = ['01', '02', '03', '04', '05', '06'] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

export function isCreditNoteReason(value: unknown): value is CreditNoteReason {
  return (CREDIT_NOTE_REASONS as readonly unknown[]).includes(value);
}

/** Goods returned for these reasons (damaged, wasted) are not put back on the shelf. */
export const NON_RESTOCKING_REASONS: readonly CreditNoteReason[] = ['03', '04'];

/** The caller's own number of a sale or credit note: at most 50 characters. */
export const TRADER_INVOICE_NUMBER_MAX = 50;

/**
 * A business id, so that the sale's workflow id `sale:<businessId>:<traderInvoiceNumber>` fits the 255 characters
 * Temporal's SQL stores keep a workflow id in (`workflow_id VARCHAR(255)`; PostgreSQL refuses a longer one).
 */
export const BUSINESS_ID_MAX = 255 - 'sale:'.length - ':'.length - TRADER_INVOICE_NUMBER_MAX;

/** Lines of one sale: not shown by the contract; 1 to 500 assumed (C10). */
export const SALE_LINES_MIN = 1;
export const SALE_LINES_MAX = 500;

/** Error codes the compliance service's contract lists (C49); a real service may send others, kept verbatim. */
export const COMPLIANCE_ERROR_CODES = [
  'invalid_request',
  'invalid_api_key',
  'forbidden',
  'not_found',
  'authority_rejected',
  'already_credited',
  'sale_not_completed',
  'rate_limited',
  'idempotency_key_reused',
  'idempotency_in_progress',
  'already_exists',
  'not_retryable',
  'item_not_stock_tracked',
  'receipt_not_available',
  'payload_too_large',
  'internal_error',
] as const;

/** Causes the tax authority gives in `error.errors[].code` of a rejection (C33, C37). */
export const AUTHORITY_CAUSES = {
  itemNotRegistered: 'item_not_registered',
  /** The only cause known to pass by itself; an unknown cause is "not known to be transient". */
  authorityUnavailable: 'authority_unavailable',
  invalidCustomerPin: 'invalid_customer_pin',
  authorityRejected: 'authority_rejected',
} as const;

export function isTransientCause(code: string): boolean {
  return code === AUTHORITY_CAUSES.authorityUnavailable;
}

/*
 * Bounds of a sale line's numbers (C30). The contract shows none; these keep every amount finite and exact in a
 * double (quantity × unitPrice cannot overflow, a sale total stays far below 2^53 cents), far above any real till.
 * eTIMS stores quantities and prices with up to 4 decimals (etims-domain.md: precision raised to 4 for stock and
 * items) and rounds amounts to 2; more decimals than 4 are refused rather than silently rounded.
 */
/** A line's quantity: more than 0, at most this. */
export const SALE_QUANTITY_MAX = 1_000_000;
/** A line's tax-inclusive unit price: 0 or more, at most this. */
export const SALE_UNIT_PRICE_MAX = 1_000_000_000;
/** A line's amount, quantity × unitPrice: at most this. */
export const LINE_AMOUNT_MAX = 1e12;
/** A sale's total, the sum of its line amounts: at most this. */
export const SALE_TOTAL_MAX = 1e13;
/** Decimal places of a quantity or unit price, as written in JSON: at most this. */
export const SALE_AMOUNT_DECIMALS_MAX = 4;

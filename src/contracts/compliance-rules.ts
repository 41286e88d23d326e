/** The compliance contract's domain rules, each stated once; no zod or Node APIs: workflow code imports this file. */

/** Documents the tax authority has not decided on yet (C4). */
export const IN_FLIGHT_STATUSES = ['pending', 'ready_to_submit', 'retrying'] as const;

/** An unknown status is not in flight (and never signed). */
export function isInFlight(status: string): status is (typeof IN_FLIGHT_STATUSES)[number] {
  return (IN_FLIGHT_STATUSES as readonly string[]).includes(status);
}

/** `completed` alone is not signed (C4): a sale without its receipt values cannot be printed or verified. */
export function isSigned<D extends { status: string; receipt?: object | null }>(
  document: D,
): document is D & { receipt: NonNullable<D['receipt']> } {
  return document.status === 'completed' && document.receipt !== null && document.receipt !== undefined;
}

/** 01 missing quantity, 02 missing data, 03 damaged, 04 wasted, 05 raw material shortage, 06 refund. */
export const CREDIT_NOTE_REASONS = ['01', '02', '03', '04', '05', '06'] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

/** Goods returned for these reasons (damaged, wasted) are not put back on the shelf. */
export const NON_RESTOCKING_REASONS: readonly CreditNoteReason[] = ['03', '04'];

export const TRADER_INVOICE_NUMBER_MAX = 50;

/** So that the workflow id `sale:<businessId>:<traderInvoiceNumber>` fits Temporal's SQL `VARCHAR(255)`. */
export const BUSINESS_ID_MAX = 255 - 'sale:'.length - ':'.length - TRADER_INVOICE_NUMBER_MAX;

/** Not shown by the contract; assumed (C10). */
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

// Bounds of a sale line's numbers (C30), assumed: amounts stay exact in a double; eTIMS keeps 4 decimals, more refused.
export const SALE_QUANTITY_MAX = 1_000_000;
export const SALE_UNIT_PRICE_MAX = 1_000_000_000;
/** quantity × unitPrice. */
export const LINE_AMOUNT_MAX = 1e12;
export const SALE_TOTAL_MAX = 1e13;
export const SALE_AMOUNT_DECIMALS_MAX = 4;

/**
 * Longest text of each item field the project assumes the service takes on creation (C66): not shown by the contract,
 * which says no more than "string"; the sandbox refuses longer with 400. `npm run catalogue -- check` and the import's
 * own checks refuse a longer cell by these before anything is sent; a service found to take other lengths is this
 * table changed, nothing else. Lengths are UTF-16 code units, as JavaScript and the sandbox count them.
 */
export const ITEM_FIELD_MAX_LENGTH = {
  externalId: 100,
  name: 200,
  sku: 100,
  taxCategory: 50,
  productTypeCode: 5,
  classificationCode: 20,
  unitCode: 10,
  packagingUnitCode: 10,
} as const;

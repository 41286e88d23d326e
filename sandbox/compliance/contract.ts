/**
 * The compliance contract's values the emulator enforces, read from the contract by the sandbox itself
 * (shared/api/compliance-api.md): an emulator that imported the worker's reading would agree with any misreading
 * of the worker's. test/sandbox/compliance/contract.test.ts holds the two readings against each other.
 */

/** `status` of a document the tax authority has not decided on yet (Sale / Document status). */
export const IN_FLIGHT_STATUSES: readonly string[] = ['pending', 'ready_to_submit', 'retrying'];

export function isInFlight(status: string): boolean {
  return IN_FLIGHT_STATUSES.includes(status);
}

/** POST /v1/credit-notes `reason`: 01 to 06. */
export const CREDIT_NOTE_REASONS = ['01', '02', '03', '04', '05', '06'] as const;

/** `traderInvoiceNumber`: at most 50 characters. */
export const TRADER_INVOICE_NUMBER_MAX = 50;

/** Lines of one sale: not shown by the contract; the sandbox refuses more than 500, as the worker assumes (C10). */
export const SALE_LINES_MAX = 500;

/*
 * Bounds of a sale line's numbers: not shown by the contract. A real service refuses numbers no till could
 * produce with 400 rather than failing on them; the sandbox's bounds are set as the worker assumes (C30):
 * quantity more than 0 up to a million, unit price 0 up to a billion, a line's quantity × unitPrice up to 1e12,
 * the sale's sum up to 1e13, at most 4 decimal places (eTIMS keeps 4 for quantities and prices).
 */
export const SALE_QUANTITY_MAX = 1_000_000;
export const SALE_UNIT_PRICE_MAX = 1_000_000_000;
export const SALE_LINE_AMOUNT_MAX = 1e12;
export const SALE_TOTAL_MAX = 1e13;
export const SALE_AMOUNT_DECIMALS_MAX = 4;

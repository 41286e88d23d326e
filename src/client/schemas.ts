/**
 * Validation of what other services hand to the sales client, at the edge, before anything reaches Temporal. The
 * schemas are the sale's own (src/contracts/sale-input.ts), the same the workflow checks its input with and the
 * docs publish as JSON Schema; here they only become a `SaleInputError` naming the first wrong field.
 */
import type { z } from 'zod';
import type { AwaitReceiptRequest, RefundRequest, SaleInput } from '../contracts/sale.js';
import { checkInput, saleSchemas } from '../contracts/sale-input.js';
import { SaleInputError } from './errors.js';

/** The sale input's and the refund's schemas, for callers that check or describe them themselves. */
export const { saleInput: saleInputSchema, refundRequest: refundRequestSchema } = saleSchemas();

/** `input` parsed, or a `SaleInputError` naming the first wrong field (an unknown field first). */
export function parseInput<T>(subject: string, schema: z.ZodType<T>, input: unknown): T {
  const checked = checkInput(schema, input);
  if (checked.ok) return checked.value;
  throw new SaleInputError(subject, checked.problems);
}

export function parseSaleInput(input: unknown): SaleInput {
  return parseInput('sale input', saleSchemas().saleInput, input);
}

export function parseRefundRequest(input: unknown): RefundRequest {
  return parseInput('refund request', saleSchemas().refundRequest, input);
}

export function parseSaleReference(
  businessId: unknown,
  traderInvoiceNumber: unknown,
): { businessId: string; traderInvoiceNumber: string } {
  return parseInput('sale reference', saleSchemas().saleReference, { businessId, traderInvoiceNumber });
}

export function parseCancelArgs(reason: unknown): { reason: string } {
  return parseInput('cancel request', saleSchemas().cancelArgs, { reason });
}

export function parseItemFixedArgs(itemId: unknown): { itemId: string } {
  return parseInput('item-fixed request', saleSchemas().itemFixedArgs, { itemId });
}

/** `awaitReceipt`'s argument; `undefined` stays undefined (every field of the request is optional). */
export function parseAwaitReceiptRequest(request: unknown): AwaitReceiptRequest {
  return parseInput('awaitReceipt request', saleSchemas().awaitReceiptRequest, request ?? {});
}

/** Checked as the workflow checks it, before anything is sent. */
export function parseWait(wait: unknown): string | undefined {
  return wait === undefined ? undefined : parseAwaitReceiptRequest({ wait }).wait;
}

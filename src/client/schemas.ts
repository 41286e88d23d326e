// The sale's own schemas (src/contracts/sale-input.ts), the workflow's too, checked at the edge: a failure becomes a
// `SaleInputError` naming the first wrong field, before anything reaches Temporal.
import type { z } from 'zod';
import type { RefundRequest, SaleInput } from '../contracts/sale.js';
import { checkInput, saleSchemas } from '../contracts/sale-input.js';
import { SaleInputError } from './errors.js';

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

/** `awaitReceipt`'s wait, checked as the workflow checks it. */
export function parseWait(wait: unknown): string | undefined {
  return wait === undefined
    ? undefined
    : parseInput('awaitReceipt request', saleSchemas().awaitReceiptRequest, { wait }).wait;
}

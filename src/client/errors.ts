// The client's errors, and its checks: the workflow's own schemas, failing before anything reaches Temporal.
import { fiscalDaySchemas } from '../contracts/fiscal-day.js';
import type { z } from 'zod';
import type { RefundRequest, SaleInput } from '../contracts/sale.js';
import { checkInput, describeProblems, saleSchemas, type InputProblem } from '../contracts/sale-input.js';

/** Nothing reached Temporal. */
export class SaleInputError extends Error {
  override readonly name = 'SaleInputError';
  readonly field: string;
  readonly reason: string;

  constructor(
    readonly subject: string,
    /** The one named in the message first. */
    readonly problems: readonly [InputProblem, ...InputProblem[]],
  ) {
    super(describeProblems(subject, problems));
    this.field = problems[0].field;
    this.reason = problems[0].reason;
  }
}

/** `fields` names where the inputs differ, never their values, which may be customer data. */
export class SaleInputConflictError extends Error {
  override readonly name = 'SaleInputConflictError';

  constructor(
    readonly workflowId: string,
    readonly fields: readonly string[],
    options: { cause?: unknown } = {},
  ) {
    const named = fields.length > 0 ? fields.join(', ') : 'the input';
    super(
      `sale ${workflowId} was already started with another input (differing: ${named}); nothing was changed. ` +
        'Use a new trader invoice number for a new sale, or the same input to find this one',
      { cause: options.cause },
    );
  }
}

export type SaleOperation = 'getState' | 'awaitReceipt' | 'refund' | 'retry' | 'cancel' | 'itemFixed';

export type OperationFailure =
  /** No such execution, or it has already finished. */
  | 'not_found'
  /** The workflow refused the operation (its validator or handler said why). */
  | 'rejected'
  /** The call timed out before the workflow answered; the update may still complete. Repeating it is safe. */
  | 'timed_out';

export abstract class WorkflowOperationError<Operation extends string> extends Error {
  constructor(
    readonly operation: Operation,
    readonly workflowId: string,
    readonly failure: OperationFailure,
    message: string,
    options: { cause?: unknown; updateId?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.updateId = options.updateId;
  }

  /** The update's id, when the operation was an update: pass it again to get the same update's answer. */
  readonly updateId: string | undefined;
}

export class SaleOperationError extends WorkflowOperationError<SaleOperation> {
  override readonly name = 'SaleOperationError';
}

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

export function parseSaleReference(businessId: unknown, traderInvoiceNumber: unknown) {
  return parseInput('sale reference', saleSchemas().saleReference, { businessId, traderInvoiceNumber });
}

export function parseCancelArgs(reason: unknown) {
  return parseInput('cancel request', saleSchemas().cancelArgs, { reason });
}

export function parseTillClose(till: unknown) {
  return parseInput('till close', fiscalDaySchemas().tillClose, till);
}

export function parseItemFixedArgs(itemId: unknown) {
  return parseInput('item-fixed request', saleSchemas().itemFixedArgs, { itemId });
}

/** `awaitReceipt`'s wait, checked as the workflow checks it. */
export function parseWait(wait: unknown): string | undefined {
  return parseInput('awaitReceipt request', saleSchemas().awaitReceiptRequest, { wait }).wait;
}

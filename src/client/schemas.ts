/**
 * Validation of what other services hand to the sales client, at the edge: the workflow itself stays free
 * of zod. The schemas mirror the types in src/contracts/sale.ts exactly (checked at compile time below),
 * and refuse unknown fields so a misspelt optional field is reported instead of silently ignored.
 */
import type { UpdateDefinition } from '@temporalio/common';
import { z } from 'zod';
import type {
  cancelUpdate,
  confirmStockMovementUpdate,
  itemFixedUpdate,
  RefundRequest,
  resendStockMovementUpdate,
  SaleInput,
} from '../contracts/sale.js';
import {
  calendarDate,
  creditNoteReason,
  fieldPath,
  nonEmpty,
  saleRequestParts,
  traderInvoiceNumber,
  typeErrors,
} from '../compliance/requests.js';
import { SALE_LINES_MAX, SALE_LINES_MIN, TRADER_INVOICE_NUMBER_MAX } from '../contracts/compliance-rules.js';
import { parseDuration } from '../contracts/duration.js';
import { SaleInputError } from './errors.js';
import type { InputProblem } from './errors.js';

export const SALE_LIMITS = {
  traderInvoiceNumberMax: TRADER_INVOICE_NUMBER_MAX,
  linesMin: SALE_LINES_MIN,
  linesMax: SALE_LINES_MAX,
  refundWindowDaysMax: 365,
  transientRetryLimitMax: 50,
} as const;

// ---------------------------------------------------------------------------------------------------------
// Field rules (what a sale request may carry is defined once, in src/compliance/requests.ts; the rules here
// are the sales client's own: the business id and the workflow's options)
// ---------------------------------------------------------------------------------------------------------

/** The business id is the first part of the sale's workflow id `sale:<businessId>:<tin>`: a ':' in it would
 *  let two different sales share one id. */
const businessIdSchema = nonEmpty().refine(
  (value) => !value.includes(':'),
  "must not contain ':' (it separates the parts of the sale's workflow id)",
);

const duration = () =>
  z.string().superRefine((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: "must be a duration: a number and a unit, e.g. '24 hours', '30s', '7d'" });
    } else if (ms <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be longer than 0' });
    }
  });

const boundedNumber = (min: number, max: number) =>
  z.number().min(min, `must be between ${min} and ${max}`).max(max, `must be between ${min} and ${max}`);

// ---------------------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------------------

/** The request's buyer, with one rule of the sales client's own: an email must be a valid address. */
const customerSchema = z.strictObject({
  ...saleRequestParts.customer,
  email: z.email('must be a valid email address').optional(),
});

const saleOptionsSchema = z.strictObject({
  refundWindowDays: boundedNumber(0, SALE_LIMITS.refundWindowDaysMax).optional(),
  outcomeTimeout: duration().optional(),
  itemFixDeadline: duration().optional(),
  transientRetryLimit: boundedNumber(0, SALE_LIMITS.transientRetryLimitMax).int('must be a whole number').optional(),
});

export const saleInputSchema = z.strictObject({
  businessId: businessIdSchema,
  ...saleRequestParts.fields,
  customer: customerSchema.optional(),
  lines: saleRequestParts.lines(z.strictObject(saleRequestParts.line)),
  options: saleOptionsSchema.optional(),
});

export const refundRequestSchema = z.strictObject({
  reason: creditNoteReason(),
  returnDate: calendarDate(),
  traderInvoiceNumber: traderInvoiceNumber(),
  restock: z.boolean().optional(),
});

/** Names one sale: `sale:<businessId>:<traderInvoiceNumber>`. */
const saleReferenceSchema = z.strictObject({
  businessId: businessIdSchema,
  traderInvoiceNumber: traderInvoiceNumber(),
});

const cancelArgsSchema = z.strictObject({ reason: nonEmpty() });
const itemFixedArgsSchema = z.strictObject({ itemId: nonEmpty() });
const stockMovementArgsSchema = z.strictObject({ referenceId: nonEmpty() });

/** Exactly the same type, optional fields included (plain mutual assignability would miss an optional field). */
type Exact<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// A change to SaleInput or RefundRequest that the schemas do not follow is a compile error here.
const _saleInputMatchesDefinition: Exact<z.output<typeof saleInputSchema>, SaleInput> = true;
const _refundRequestMatchesDefinition: Exact<z.output<typeof refundRequestSchema>, RefundRequest> = true;

type UpdateArgument<U> = U extends UpdateDefinition<unknown, [infer A]> ? A : never;
const _cancelArgsMatch: Exact<z.output<typeof cancelArgsSchema>, UpdateArgument<typeof cancelUpdate>> = true;
const _itemFixedArgsMatch: Exact<z.output<typeof itemFixedArgsSchema>, UpdateArgument<typeof itemFixedUpdate>> = true;
const _confirmArgsMatch: Exact<
  z.output<typeof stockMovementArgsSchema>,
  UpdateArgument<typeof confirmStockMovementUpdate>
> = true;
const _resendArgsMatch: Exact<
  z.output<typeof stockMovementArgsSchema>,
  UpdateArgument<typeof resendStockMovementUpdate>
> = true;

// ---------------------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------------------

function problemsOf(issues: readonly z.core.$ZodIssue[]): InputProblem[] {
  return issues.flatMap((issue): InputProblem[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), reason: 'is not a known field' }));
    }
    return [{ field: issue.path.length > 0 ? fieldPath(issue.path) : '(input)', reason: issue.message }];
  });
}

/**
 * Parses `input` or throws a `SaleInputError` naming the first wrong field. An unknown field is named
 * first: a misspelt `quantitty` explains the "quantity is required" that comes with it.
 */
function parseInput<S extends z.ZodType>(subject: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input, { error: typeErrors });
  if (parsed.success) return parsed.data;
  const problems = problemsOf(parsed.error.issues);
  const unknown = problems.filter((p) => p.reason === 'is not a known field');
  const ordered = [...unknown, ...problems.filter((p) => !unknown.includes(p))];
  const [first, ...rest] = ordered;
  throw new SaleInputError(subject, [first ?? { field: '(input)', reason: 'is invalid' }, ...rest]);
}

export function parseSaleInput(input: unknown): SaleInput {
  return parseInput('sale input', saleInputSchema, input);
}

export function parseRefundRequest(input: unknown): RefundRequest {
  return parseInput('refund request', refundRequestSchema, input);
}

export function parseSaleReference(businessId: unknown, traderInvoiceNumber: unknown): { businessId: string; traderInvoiceNumber: string } {
  return parseInput('sale reference', saleReferenceSchema, { businessId, traderInvoiceNumber });
}

export function parseCancelArgs(reason: unknown): { reason: string } {
  return parseInput('cancel request', cancelArgsSchema, { reason });
}

export function parseItemFixedArgs(itemId: unknown): { itemId: string } {
  return parseInput('item-fixed request', itemFixedArgsSchema, { itemId });
}

export function parseStockMovementArgs(referenceId: unknown): { referenceId: string } {
  return parseInput('stock movement request', stockMovementArgsSchema, { referenceId });
}

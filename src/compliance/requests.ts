/**
 * Request inputs of the compliance client and their client-side validation. Every documented limit (and
 * every decided one, C10, C21, C27, C28, C30) is checked before anything is sent, so a bad request fails
 * with a `RequestValidationError` naming the first wrong field instead of costing a round trip or, worse,
 * a rate-limit slot.
 */
import { z } from 'zod';
import { RequestValidationError } from '../http/errors.js';
import { callbackUrlProblem } from './callback-url.js';
import { CREDIT_NOTE_REASONS, SALE_LINES_MAX, SALE_LINES_MIN, TRADER_INVOICE_NUMBER_MAX } from '../contracts/compliance-rules.js';
import { STOCK_ACTIONS } from './schemas.js';

const LIMITS = {
  traderInvoiceNumberMax: TRADER_INVOICE_NUMBER_MAX,
  referenceIdMax: 100,
  idempotencyKeyMin: 8,
  idempotencyKeyMax: 128,
  pageSizeMin: 1,
  pageSizeMax: 100,
  saleLinesMin: SALE_LINES_MIN,
  saleLinesMax: SALE_LINES_MAX,
} as const;

const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]+$/;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface RequestValidationOptions {
  /** Accept http(s) callback URLs to loopback hosts (local stacks only; C48). */
  allowLoopbackCallbacks?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Field rules
// ---------------------------------------------------------------------------------------------------------

/** A string with something in it besides white space. */
export const nonEmpty = () => z.string().refine((value) => value.trim().length > 0, 'must not be empty');

const maxChars = (max: number) =>
  z.string().max(max, `must be at most ${max} characters`);

/** A `YYYY-MM-DD` string naming a day that exists (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A `YYYY-MM-DD` date that exists; one problem per value (a malformed date is not also "not a real date"). */
export const calendarDate = () =>
  z.string().superRefine((value, ctx) => {
    if (!DATE_PATTERN.test(value)) ctx.addIssue({ code: 'custom', message: 'must be a date in the form YYYY-MM-DD' });
    else if (!isCalendarDate(value)) ctx.addIssue({ code: 'custom', message: 'must be a real calendar date' });
  });

const atLeastZero = () => z.number().min(0, 'must be 0 or more');

/** The caller's own number of a sale or credit note: non-empty, at most 50 characters. */
export const traderInvoiceNumber = () => nonEmpty().pipe(maxChars(LIMITS.traderInvoiceNumberMax));

/** A credit note reason code (`01`…`06`). */
export const creditNoteReason = () => z.enum(CREDIT_NOTE_REASONS, `must be one of ${CREDIT_NOTE_REASONS.join(', ')}`);

function callbackUrl(options: RequestValidationOptions) {
  return z.string().superRefine((value, ctx) => {
    const problem = callbackUrlProblem(value, { allowLoopback: options.allowLoopbackCallbacks === true });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

// ---------------------------------------------------------------------------------------------------------
// The sale request (POST /v1/sales, C10)
// ---------------------------------------------------------------------------------------------------------

/**
 * The one definition of a sale request's fields and limits. The compliance client's `createSale` below and the
 * sales client's start-time check (src/client/schemas.ts) are both built from these parts, so what a sale may
 * carry cannot differ between the two. Each side wraps the shapes in its own kind of object: the compliance
 * client drops unknown fields (`z.object`), the sales client names them (`z.strictObject`).
 */
export const saleRequestParts = {
  /** Top-level fields, in document order (the first wrong one is reported). */
  fields: {
    traderInvoiceNumber: traderInvoiceNumber(),
    saleDate: calendarDate(),
    paymentTypeCode: nonEmpty().optional(),
    branchId: nonEmpty().optional(),
  },
  /** The buyer: every field optional and free text, as the contract's Customer. */
  customer: {
    name: z.string().optional(),
    pin: z.string().optional(),
    phone: z.string().optional(),
    email: z.string().optional(),
  },
  /** One line: quantity more than 0, unit price 0 or more. */
  line: {
    itemId: nonEmpty(),
    quantity: z.number().positive('must be more than 0'),
    unitPrice: atLeastZero(),
    description: z.string().optional(),
  },
  /** The lines, 1 to 500 of them (C10). */
  lines: <Line extends z.ZodType>(line: Line) =>
    z
      .array(line)
      .min(LIMITS.saleLinesMin, `must have at least ${LIMITS.saleLinesMin} line`)
      .max(LIMITS.saleLinesMax, `must have at most ${LIMITS.saleLinesMax} lines`),
};

// ---------------------------------------------------------------------------------------------------------
// Request bodies and queries
// ---------------------------------------------------------------------------------------------------------

function buildSchemas(options: RequestValidationOptions) {
  return {
    createSale: z.object({
      ...saleRequestParts.fields,
      customer: z.object(saleRequestParts.customer).optional(),
      lines: saleRequestParts.lines(z.object(saleRequestParts.line)),
      callbackUrl: callbackUrl(options).optional(),
    }),

    createCreditNote: z.object({
      traderInvoiceNumber: traderInvoiceNumber(),
      returnDate: calendarDate(),
      saleId: nonEmpty(),
      reason: creditNoteReason(),
      callbackUrl: callbackUrl(options).optional(),
    }),

    adjustStock: z.object({
      itemId: nonEmpty(),
      action: z.enum(STOCK_ACTIONS, `must be one of ${STOCK_ACTIONS.join(', ')}`),
      quantity: atLeastZero(),
      unitPrice: atLeastZero().optional(),
      referenceId: maxChars(LIMITS.referenceIdMax).optional(),
      branchId: nonEmpty().optional(),
    }),

    createItem: z.object({
      externalId: nonEmpty(),
      name: nonEmpty(),
      sku: z.string().optional(),
      taxTypeCode: nonEmpty(),
      taxCategory: nonEmpty().optional(),
      productTypeCode: nonEmpty().optional(),
      classificationCode: nonEmpty().optional(),
      unitCode: nonEmpty().optional(),
      packagingUnitCode: nonEmpty().optional(),
      unitPrice: atLeastZero(),
      stockTracked: z.boolean().optional(),
    }),

    registerItem: z.object({
      /** Branch id or its `authorityBhfId`; defaults to the business's first branch (C22). */
      branchId: nonEmpty().optional(),
      /** Register again an item the tax authority already has. */
      reRegister: z.boolean().optional(),
    }),

    listPurchases: z
      .object({
        cursor: nonEmpty().optional(),
        pageSize: z
          .number()
          .int('must be a whole number')
          .min(LIMITS.pageSizeMin, `must be between ${LIMITS.pageSizeMin} and ${LIMITS.pageSizeMax}`)
          .max(LIMITS.pageSizeMax, `must be between ${LIMITS.pageSizeMin} and ${LIMITS.pageSizeMax}`)
          .optional(),
        status: nonEmpty().optional(),
        fromDate: calendarDate().optional(),
        toDate: calendarDate().optional(),
      })
      .refine((q) => !q.fromDate || !q.toDate || q.fromDate <= q.toDate, {
        message: 'must not be before fromDate',
        path: ['toDate'],
      }),

    listCodeLists: z.object({ listId: nonEmpty().optional() }),

    listItemClassifications: z.object({ search: z.string().optional() }),
  };
}

type Schemas = ReturnType<typeof buildSchemas>;

export type CreateSaleInput = z.input<Schemas['createSale']>;
export type CreateCreditNoteInput = z.input<Schemas['createCreditNote']>;
export type StockAdjustmentInput = z.input<Schemas['adjustStock']>;
export type CreateItemInput = z.input<Schemas['createItem']>;
export type RegisterItemInput = z.input<Schemas['registerItem']>;
export type ListPurchasesQuery = z.input<Schemas['listPurchases']>;
export type CodeListsQuery = z.input<Schemas['listCodeLists']>;
export type ItemClassificationsQuery = z.input<Schemas['listItemClassifications']>;

const publicSchemas = buildSchemas({});
const loopbackSchemas = buildSchemas({ allowLoopbackCallbacks: true });

// ---------------------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------------------

/** `['lines', 0, 'quantity']` → `lines[0].quantity`. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');
}

/** Wording for type errors, where zod's default names zod's own terms (the sales client's parsing uses it too). */
export const typeErrors: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  if (issue.expected === 'number' && typeof issue.input === 'number') return 'must be a finite number';
  if (issue.expected === 'array') return 'must be a list';
  return `must be ${issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}`;
};

function parseOrThrow<S extends z.ZodType>(operation: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input, { error: typeErrors });
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  throw new RequestValidationError(
    operation,
    first && first.path.length > 0 ? fieldPath(first.path) : '(request)',
    first?.message ?? 'is invalid',
  );
}

/** The operations whose input is checked here, and what each takes and returns. */
export type ValidatedOperation = keyof Schemas;
export type RequestInput<Op extends ValidatedOperation> = z.input<Schemas[Op]>;
export type RequestBody<Op extends ValidatedOperation> = z.output<Schemas[Op]>;
/** The schemas seen per operation, so that one generic method keeps each operation's own types. */
type SchemaOf = { [Op in ValidatedOperation]: z.ZodType<RequestBody<Op>, RequestInput<Op>> };

/** Validates request inputs against the documented limits; one instance per client configuration. */
export class RequestValidator {
  private readonly schemas: SchemaOf;

  constructor(options: RequestValidationOptions = {}) {
    this.schemas = options.allowLoopbackCallbacks ? loopbackSchemas : publicSchemas;
  }

  /** The input of `operation` as it is sent, or a `RequestValidationError` naming `operation` and the first wrong field. */
  validate<Op extends ValidatedOperation>(operation: Op, input: RequestInput<Op>): RequestBody<Op> {
    return parseOrThrow(operation, this.schemas[operation], input);
  }
}

/** Header `Idempotency-Key`: 8 to 128 characters of `[A-Za-z0-9._:-]`. */
export function validateIdempotencyKey(operation: string, key: unknown): string {
  const field = 'Idempotency-Key';
  if (typeof key !== 'string' || key.length === 0) throw new RequestValidationError(operation, field, 'is required');
  if (key.length < LIMITS.idempotencyKeyMin || key.length > LIMITS.idempotencyKeyMax) {
    throw new RequestValidationError(
      operation,
      field,
      `must be ${LIMITS.idempotencyKeyMin} to ${LIMITS.idempotencyKeyMax} characters`,
    );
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new RequestValidationError(operation, field, 'may contain only letters, digits, ".", "_", ":" and "-"');
  }
  return key;
}

/** An id that goes into a URL path: non-empty. The caller URL-encodes it. */
export function validatePathId(operation: string, field: string, id: unknown): string {
  if (typeof id !== 'string') throw new RequestValidationError(operation, field, id === undefined ? 'is required' : 'must be a string');
  if (id.trim().length === 0) throw new RequestValidationError(operation, field, 'must not be empty');
  return id;
}

/** `businessId` when given per call or configured: non-empty. */
export function validateBusinessId(operation: string, businessId: unknown): string | undefined {
  if (businessId === undefined) return undefined;
  return validatePathId(operation, 'businessId', businessId);
}

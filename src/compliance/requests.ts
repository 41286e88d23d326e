/** Requests checked before sending: a bad one fails naming its first wrong field, not spending a rate-limit slot. */
import { z } from 'zod';
import { RequestValidationError } from '../http/errors.js';
import { callbackUrlProblem } from './callback-url.js';
import { catalogueSchemas } from '../contracts/catalogue-import.js';
import {
  calendarDate,
  creditNoteReason,
  fieldPath,
  maxChars,
  nonEmpty,
  saleSchemas,
  traderInvoiceNumber,
  typeErrors,
} from '../contracts/sale-input.js';
import { STOCK_ACTIONS } from './schemas.js';

const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]+$/;

const atLeastZero = () => z.number().min(0, 'must be 0 or more');

const { saleRequestParts } = saleSchemas();

/** A `callbackUrl` is last wherever it is: `RequestValidator` checks its value once every other field is right. */
const SCHEMAS = {
  createSale: z.object({
    ...saleRequestParts.fields,
    customer: z.object(saleRequestParts.customer).optional(),
    lines: saleRequestParts.lines(z.object(saleRequestParts.line)),
    callbackUrl: z.string().optional(),
  }),

  createCreditNote: z.object({
    traderInvoiceNumber: traderInvoiceNumber(),
    returnDate: calendarDate(),
    saleId: nonEmpty(),
    reason: creditNoteReason(),
    callbackUrl: z.string().optional(),
  }),

  adjustStock: z.object({
    itemId: nonEmpty(),
    action: z.enum(STOCK_ACTIONS, `must be one of ${STOCK_ACTIONS.join(', ')}`),
    quantity: atLeastZero(),
    unitPrice: atLeastZero().optional(),
    referenceId: maxChars(100).optional(),
    branchId: nonEmpty().optional(),
  }),

  // C21: a catalogue row is these fields and its branch; the service's code lists decide which codes it takes.
  createItem: z.object(catalogueSchemas().row.shape).omit({ branchId: true }),

  registerItem: z.object({
    branchId: nonEmpty().optional(), // or its `authorityBhfId`; default the business's first branch (C22)
    reRegister: z.boolean().optional(),
  }),

  listPurchases: z
    .object({
      cursor: nonEmpty().optional(),
      pageSize: z
        .number()
        .int('must be a whole number')
        .min(1, 'must be between 1 and 100')
        .max(100, 'must be between 1 and 100')
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

  listItemClassifications: z.object({ search: nonEmpty().optional() }),
};

type Schemas = typeof SCHEMAS;

export type CreateSaleInput = z.input<Schemas['createSale']>;
export type CreateCreditNoteInput = z.input<Schemas['createCreditNote']>;
export type StockAdjustmentInput = z.input<Schemas['adjustStock']>;

type ValidatedOperation = keyof Schemas;
export type RequestInput<Op extends ValidatedOperation> = z.input<Schemas[Op]>;
type RequestBody<Op extends ValidatedOperation> = z.output<Schemas[Op]>;
/** The schemas seen per operation, so that one generic method keeps each operation's own types. */
type SchemaOf = { [Op in ValidatedOperation]: z.ZodType<RequestBody<Op>, RequestInput<Op>> };

export class RequestValidator {
  /** `allowLoopbackCallbacks`: accept http(s) callback URLs to loopback hosts (local stacks only; C48). */
  constructor(private readonly options: { allowLoopbackCallbacks?: boolean } = {}) {}

  validate<Op extends ValidatedOperation>(operation: Op, input: RequestInput<Op>): RequestBody<Op> {
    const body = validateRequest(operation, (SCHEMAS as SchemaOf)[operation], input);
    const { callbackUrl: url } = body as { callbackUrl?: string };
    const problem =
      url === undefined ? undefined : callbackUrlProblem(url, { allowLoopback: this.options.allowLoopbackCallbacks });
    if (problem) throw new RequestValidationError(operation, 'callbackUrl', problem);
    return body;
  }
}

/** The request `schema` makes of `input`, or a `RequestValidationError` naming its first wrong field. */
export function validateRequest<Out, In>(operation: string, schema: z.ZodType<Out, In>, input: In): Out {
  const parsed = schema.safeParse(input, { error: typeErrors });
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  throw new RequestValidationError(
    operation,
    fieldPath(first?.path ?? [], '(request)'),
    first?.message ?? 'is invalid',
  );
}

/** Header `Idempotency-Key`: 8 to 128 characters of `[A-Za-z0-9._:-]`. */
export function validateIdempotencyKey(operation: string, key: unknown): string {
  const field = 'Idempotency-Key';
  if (typeof key !== 'string' || key.length === 0) throw new RequestValidationError(operation, field, 'is required');
  if (key.length < 8 || key.length > 128)
    throw new RequestValidationError(operation, field, 'must be 8 to 128 characters');
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new RequestValidationError(operation, field, 'may contain only letters, digits, ".", "_", ":" and "-"');
  }
  return key;
}

export function validatePathId(operation: string, field: string, id: unknown): string {
  if (typeof id !== 'string')
    throw new RequestValidationError(operation, field, id === undefined ? 'is required' : 'must be a string');
  if (id.trim().length === 0) throw new RequestValidationError(operation, field, 'must not be empty');
  return id;
}

export function validateBusinessId(operation: string, businessId: unknown): string | undefined {
  if (businessId === undefined) return undefined;
  return validatePathId(operation, 'businessId', businessId);
}

/**
 * The compliance client's request inputs, checked against every documented or decided limit before sending: a bad
 * request fails with a `RequestValidationError` naming its first wrong field instead of spending a rate-limit slot.
 * A sale request's fields are the sale input's own (src/contracts/sale-input.ts).
 */
import { z } from 'zod';
import { RequestValidationError } from '../http/errors.js';
import { callbackUrlProblem } from './callback-url.js';
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

interface RequestValidationOptions {
  /** Accept http(s) callback URLs to loopback hosts (local stacks only; C48). */
  allowLoopbackCallbacks?: boolean;
}

const atLeastZero = () => z.number().min(0, 'must be 0 or more');

function callbackUrl(options: RequestValidationOptions) {
  return z.string().superRefine((value, ctx) => {
    const problem = callbackUrlProblem(value, { allowLoopback: options.allowLoopbackCallbacks === true });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

function buildSchemas(options: RequestValidationOptions) {
  const { saleRequestParts } = saleSchemas();
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
      referenceId: maxChars(100).optional(),
      branchId: nonEmpty().optional(),
    }),

    // C21: the service's code lists decide which codes it takes; the shape is checked here.
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

type ValidatedOperation = keyof Schemas;
export type RequestInput<Op extends ValidatedOperation> = z.input<Schemas[Op]>;
type RequestBody<Op extends ValidatedOperation> = z.output<Schemas[Op]>;
/** The schemas seen per operation, so that one generic method keeps each operation's own types. */
type SchemaOf = { [Op in ValidatedOperation]: z.ZodType<RequestBody<Op>, RequestInput<Op>> };

export class RequestValidator {
  private readonly schemas: SchemaOf;

  constructor(options: RequestValidationOptions = {}) {
    this.schemas = options.allowLoopbackCallbacks ? loopbackSchemas : publicSchemas;
  }

  validate<Op extends ValidatedOperation>(operation: Op, input: RequestInput<Op>): RequestBody<Op> {
    const parsed = this.schemas[operation].safeParse(input, { error: typeErrors });
    if (parsed.success) return parsed.data;
    const first = parsed.error.issues[0];
    const field = first && first.path.length > 0 ? fieldPath(first.path) : '(request)';
    throw new RequestValidationError(operation, field, first?.message ?? 'is invalid');
  }
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

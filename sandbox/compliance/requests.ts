import { z } from 'zod';
import {
  CREDIT_NOTE_REASONS,
  SALE_AMOUNT_DECIMALS_MAX,
  SALE_LINE_AMOUNT_MAX,
  SALE_LINES_MAX,
  SALE_QUANTITY_MAX,
  SALE_TOTAL_MAX,
  SALE_UNIT_PRICE_MAX,
  TRADER_INVOICE_NUMBER_MAX,
} from './contract.js';
import { callbackUrlProblem } from './callback-url.js';
import { invalidRequest, type FieldIssue } from './errors.js';
import { PURCHASE_STATUS_VALUES, TAX_TYPE_VALUES } from './fixture-schema.js';

/**
 * The sandbox's own reading of the request shapes (compliance-api.md and decisions C10, C18, C21, C22,
 * C24, C27, C28, C30). The shapes are written independently of the client's validation in src/compliance, so
 * the two readings of the document check each other; the contract's values (credit-note reasons, length
 * limits) are the sandbox's own reading too (./contract.ts). Unknown fields are ignored, as C22 assumes.
 */

const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/** A schema-level message that still says "is required" for a missing field. */
const expected = (message: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : message),
});
const isoDate = z.iso.date(expected('must be a date YYYY-MM-DD'));
const optionalText = (max: number) => z.string().max(max).nullable().optional();
const callbackUrl = z
  .string()
  .superRefine((value, ctx) => {
    const problem = callbackUrlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .optional();

/** Decimal places of a number as JSON writes it (its shortest round-trip text): 0.00001 is `1e-5`, 5 places. */
function decimalPlaces(value: number): number {
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  return match ? Math.max(0, (match[1]?.length ?? 0) - Number(match[2] ?? 0)) : Number.POSITIVE_INFINITY;
}

const fewDecimals = (value: number) => decimalPlaces(value) <= SALE_AMOUNT_DECIMALS_MAX;
const DECIMALS_MESSAGE = `must have at most ${SALE_AMOUNT_DECIMALS_MAX} decimal places`;

const saleLineQuantity = z
  .number()
  .positive()
  .max(SALE_QUANTITY_MAX, `must be at most ${SALE_QUANTITY_MAX}`)
  .refine(fewDecimals, DECIMALS_MESSAGE);
const saleLineUnitPrice = z
  .number()
  .min(0)
  .max(SALE_UNIT_PRICE_MAX, `must be at most ${SALE_UNIT_PRICE_MAX}`)
  .refine(fewDecimals, DECIMALS_MESSAGE);

/** A line's amount and the sale's sum, checked only over lines whose own numbers are valid (named once). */
function checkSaleAmounts(lines: ReadonlyArray<{ quantity: number; unitPrice: number }>, ctx: z.RefinementCtx): void {
  let total = 0;
  let allFit = true;
  lines.forEach((line, index) => {
    if (!saleLineQuantity.safeParse(line?.quantity).success || !saleLineUnitPrice.safeParse(line?.unitPrice).success) {
      allFit = false;
      return;
    }
    const amount = line.quantity * line.unitPrice;
    total += amount;
    if (amount > SALE_LINE_AMOUNT_MAX) {
      allFit = false;
      ctx.addIssue({
        code: 'custom',
        path: [index],
        message: `quantity × unitPrice must be at most ${SALE_LINE_AMOUNT_MAX}`,
      });
    }
  });
  if (allFit && total > SALE_TOTAL_MAX) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: `quantity × unitPrice summed must be at most ${SALE_TOTAL_MAX}`,
    });
  }
}

export const SaleRequestSchema = z.object({
  traderInvoiceNumber: z.string().min(1).max(TRADER_INVOICE_NUMBER_MAX),
  saleDate: isoDate,
  paymentTypeCode: optionalText(10),
  branchId: z.string().min(1).optional(),
  customer: z
    .object({ name: optionalText(200), pin: optionalText(20), phone: optionalText(30), email: optionalText(254) })
    .nullable()
    .optional(),
  lines: z
    .array(
      z.object({
        itemId: z.string().min(1),
        quantity: saleLineQuantity,
        unitPrice: saleLineUnitPrice,
        description: optionalText(500),
      }),
    )
    .min(1)
    .max(SALE_LINES_MAX)
    .superRefine(checkSaleAmounts),
  callbackUrl,
});
export type SaleRequest = z.output<typeof SaleRequestSchema>;

export const CreditNoteRequestSchema = z.object({
  businessId: z.string().min(1).optional(),
  traderInvoiceNumber: z.string().min(1).max(TRADER_INVOICE_NUMBER_MAX),
  returnDate: isoDate,
  saleId: z.string().min(1),
  reason: z.enum(CREDIT_NOTE_REASONS, expected(`must be one of ${CREDIT_NOTE_REASONS.join(', ')}`)),
  callbackUrl,
});
export type CreditNoteRequest = z.output<typeof CreditNoteRequestSchema>;

export const ItemCreateRequestSchema = z.object({
  externalId: z.string().min(1).max(100),
  name: z.string().min(1).max(200),
  sku: z.string().max(100).optional(),
  taxTypeCode: z.enum(TAX_TYPE_VALUES, expected('must be one of A, B, C, D, E')),
  taxCategory: z.string().min(1).max(50).optional(),
  productTypeCode: z.string().min(1).max(5).nullable().optional(),
  classificationCode: z.string().min(1).max(20).nullable().optional(),
  unitCode: z.string().min(1).max(10).optional(),
  packagingUnitCode: z.string().min(1).max(10).optional(),
  unitPrice: z.number().min(0),
  stockTracked: z.boolean().optional(),
});

export const RegisterRequestSchema = z.object({
  branchId: z.string().min(1).optional(),
  reRegister: z.boolean().optional(),
});

export const StockAdjustmentRequestSchema = z.object({
  itemId: z.string().min(1),
  action: z.enum(['ADD', 'DEDUCT'], expected('must be ADD or DEDUCT')),
  quantity: z.number().min(0),
  unitPrice: z.number().min(0).optional(),
  referenceId: z.string().max(100).optional(),
  branchId: z.string().min(1).optional(),
});

const queryText = z.string().min(1).optional();

export const PurchasesQuerySchema = z.object({
  cursor: queryText,
  pageSize: z
    .string()
    .regex(/^\d+$/, 'must be an integer from 1 to 100')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be an integer from 1 to 100').max(100, 'must be an integer from 1 to 100'))
    .optional(),
  status: z.enum(PURCHASE_STATUS_VALUES, expected(`must be one of ${PURCHASE_STATUS_VALUES.join(', ')}`)).optional(),
  fromDate: isoDate.optional(),
  toDate: isoDate.optional(),
});

export const CodeListQuerySchema = z.object({ listId: queryText });
export const ClassificationQuerySchema = z.object({ search: queryText });

/** `lines[0].quantity`-style field path of a zod issue. */
export function fieldPath(path: ReadonlyArray<PropertyKey>, root = 'body'): string {
  const text = path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  return text === '' ? root : text;
}

function issuesOf(error: z.ZodError, root: string): FieldIssue[] {
  return error.issues.map((issue) => ({ field: fieldPath(issue.path, root), message: issue.message }));
}

// A missing field reads "is required" instead of zod's "expected string, received undefined"; a JSON number too
// large for a double (`1e400`) reaches the schema as Infinity, which zod would call "expected number, received number".
const requiredMessage: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  if (issue.expected === 'number' && typeof issue.input === 'number') return 'must be a finite number';
  return undefined;
};

/** Parses a JSON body; a missing body counts as `{}` when `optional`. Throws 400 naming the first wrong field. */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  options: { optional?: boolean } = {},
): z.output<S> {
  if (body === undefined && !options.optional)
    throw invalidRequest({ field: 'body', message: 'is required (a JSON object)' });
  const value = body === undefined ? {} : body;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest({ field: 'body', message: 'must be a JSON object' });
  }
  const parsed = schema.safeParse(value, { error: requiredMessage });
  if (!parsed.success) throw invalidRequest(issuesOf(parsed.error, 'body'));
  return parsed.data;
}

/** Parses query parameters; a parameter given twice is refused. Throws 400 naming the parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const raw = (query ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) throw invalidRequest({ field: name, message: 'must be given once' });
  }
  const parsed = schema.safeParse(raw, { error: requiredMessage });
  if (!parsed.success) throw invalidRequest(issuesOf(parsed.error, 'query'));
  return parsed.data;
}

/** The `Idempotency-Key` header, if sent; a malformed one is a 400 naming the header (C12). */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['idempotency-key'];
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) || !IDEMPOTENCY_KEY_PATTERN.test(raw)) {
    throw invalidRequest({ field: 'Idempotency-Key', message: 'must be 8 to 128 characters of A-Z a-z 0-9 . _ : -' });
  }
  return raw;
}

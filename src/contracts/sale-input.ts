/** A sale's inputs as zod schemas, for the workflow, the compliance client and tools/schemas alike: no Node APIs. */
import { z } from 'zod';
import {
  BUSINESS_ID_MAX,
  CREDIT_NOTE_REASONS,
  LINE_AMOUNT_MAX,
  SALE_AMOUNT_DECIMALS_MAX,
  SALE_LINES_MAX,
  SALE_LINES_MIN,
  SALE_QUANTITY_MAX,
  SALE_TOTAL_MAX,
  SALE_UNIT_PRICE_MAX,
  TRADER_INVOICE_NUMBER_MAX,
} from './compliance-rules.js';
import { parseDuration } from './duration.js';

/** `awaitReceipt`'s longest wait: an update held open longer than this ties up the caller and the worker's slot. */
export const AWAIT_RECEIPT_WAIT_MAX = '10 minutes';

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

export const nonEmpty = () => z.string().refine((value) => value.trim().length > 0, 'must not be empty');

export const maxChars = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** A `YYYY-MM-DD` date that exists (no 2026-02-30); a malformed date is not also "not a real date". */
export const calendarDate = () =>
  z
    .stringFormat('date', DATE_PATTERN, {
      abort: true,
      error: (issue) => (issue.code === 'invalid_format' ? 'must be a date in the form YYYY-MM-DD' : undefined),
    })
    .refine(isCalendarDate, 'must be a real calendar date');

function isCalendarDate(value: string): boolean {
  const [year, month, day] = value.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export const traderInvoiceNumber = () =>
  nonEmpty().pipe(maxChars(TRADER_INVOICE_NUMBER_MAX)).meta({ minLength: 1, maxLength: TRADER_INVOICE_NUMBER_MAX });

export const creditNoteReason = () => z.enum(CREDIT_NOTE_REASONS, `must be one of ${CREDIT_NOTE_REASONS.join(', ')}`);

/** The first part of the sale's workflow id `sale:<businessId>:<tin>`: a ':' in it would let two sales share one. */
const businessId = () =>
  nonEmpty()
    .refine((value) => !value.includes(':'), "must not contain ':' (it separates the parts of the sale's workflow id)")
    .refine(
      (value) => [...value].length <= BUSINESS_ID_MAX,
      `must be at most ${BUSINESS_ID_MAX} characters (the sale's workflow id must fit 255)`,
    )
    .meta({ minLength: 1, maxLength: BUSINESS_ID_MAX, pattern: '^[^:]*$' });

/** Decimal places of `value` as written in JSON (its shortest round-trip text): 19.99 has 2, 1e-7 has 7. */
function decimalPlaces(value: number): number {
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match) return Number.POSITIVE_INFINITY;
  return Math.max(0, (match[1]?.length ?? 0) - Number(match[2] ?? 0));
}

const DECIMALS_MESSAGE = `must have at most ${SALE_AMOUNT_DECIMALS_MAX} decimal places`;
const hasAllowedDecimals = (value: number) => decimalPlaces(value) <= SALE_AMOUNT_DECIMALS_MAX;

// zod refuses NaN and ±Infinity.
const lineQuantity = z
  .number()
  .positive('must be more than 0')
  .max(SALE_QUANTITY_MAX, `must be at most ${SALE_QUANTITY_MAX}`)
  .refine(hasAllowedDecimals, DECIMALS_MESSAGE);

const lineUnitPrice = z
  .number()
  .min(0, 'must be 0 or more')
  .max(SALE_UNIT_PRICE_MAX, `must be at most ${SALE_UNIT_PRICE_MAX}`)
  .refine(hasAllowedDecimals, DECIMALS_MESSAGE);

const pricedLine = z.object({ quantity: lineQuantity, unitPrice: lineUnitPrice });

/**
 * Array checks run even when a line is malformed (zod reports that line's own issues): only whole, valid lines count,
 * and the total only where every line is in bounds, so a wrong quantity is not named again as an amount.
 */
function checkAmounts(lines: readonly unknown[], ctx: z.RefinementCtx): void {
  const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  // NaN for a malformed line: it is neither over the bound nor within it.
  const amounts = lines.map((line) => {
    const parsed = pricedLine.safeParse(line);
    return parsed.success ? parsed.data.quantity * parsed.data.unitPrice : Number.NaN;
  });
  amounts.forEach((amount, index) => {
    if (amount > LINE_AMOUNT_MAX) issue([index], `quantity × unitPrice must be at most ${LINE_AMOUNT_MAX}`);
  });
  const total = amounts.reduce((sum, amount) => sum + amount, 0);
  if (amounts.every((amount) => amount <= LINE_AMOUNT_MAX) && total > SALE_TOTAL_MAX)
    issue([], `must total at most ${SALE_TOTAL_MAX} (quantity × unitPrice summed)`);
}

const DURATION_PATTERN = '^\\d*\\.?\\d+ *[a-zA-Z]+$';

/** A duration longer than 0 and at most `max`; `examples` go into the message. */
export const positiveDuration = (examples: string, max?: string) =>
  z.string().superRefine((value, ctx) => {
    const ms = parseDuration(value);
    const problem =
      ms === undefined
        ? `must be a duration: a number and a unit, e.g. ${examples}`
        : ms <= 0
          ? 'must be longer than 0'
          : max !== undefined && ms > (parseDuration(max) ?? 0)
            ? `must be at most ${max}`
            : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const duration = (description: string) =>
  positiveDuration("'24 hours', '30s', '7d'").meta({ pattern: DURATION_PATTERN, description });

const boundedNumber = (min: number, max: number) =>
  z.number().min(min, `must be between ${min} and ${max}`).max(max, `must be between ${min} and ${max}`);

/** Shared with the compliance client's `createSale`, which wraps them in `z.object` (unknown fields dropped). */
const saleRequestParts = {
  /** In document order: the first wrong one is reported. */
  fields: {
    traderInvoiceNumber: traderInvoiceNumber().describe(
      "The caller's own number of the sale: at most 50 characters; one sale per business and number.",
    ),
    saleDate: calendarDate().describe('The day of the sale, YYYY-MM-DD.'),
    paymentTypeCode: nonEmpty().optional().describe('eTIMS payment type code, e.g. 01 cash.'),
    branchId: nonEmpty()
      .optional()
      .describe("Branch id or its authority branch-office id; default the business's first branch."),
  },
  customer: {
    name: z.string().optional(),
    pin: z.string().optional().describe("The buyer's tax identification number (KRA PIN)."),
    phone: z.string().optional(),
    email: z.string().optional(),
  },
  line: {
    itemId: nonEmpty().describe("The item's id at the compliance service."),
    quantity: lineQuantity.describe(
      `More than 0, at most ${SALE_QUANTITY_MAX}, at most ${SALE_AMOUNT_DECIMALS_MAX} decimal places.`,
    ),
    unitPrice: lineUnitPrice.describe(
      `Tax-inclusive price of one unit: 0 to ${SALE_UNIT_PRICE_MAX}, at most ${SALE_AMOUNT_DECIMALS_MAX} decimal ` +
        `places; quantity × unitPrice at most ${LINE_AMOUNT_MAX}.`,
    ),
    description: z.string().optional(),
  },
  lines: <Line extends z.ZodType<z.infer<typeof pricedLine>>>(line: Line) =>
    z
      .array(line)
      .min(SALE_LINES_MIN, `must have at least ${SALE_LINES_MIN} line`)
      .max(SALE_LINES_MAX, `must have at most ${SALE_LINES_MAX} lines`)
      .superRefine(checkAmounts)
      .describe(
        `${SALE_LINES_MIN} to ${SALE_LINES_MAX} lines; the sum of quantity × unitPrice at most ${SALE_TOTAL_MAX}.`,
      ),
};

/** A copy of zod's pattern: the shared original is frozen in the workflow sandbox, and zod resets its `lastIndex`. */
const EMAIL_PATTERN = new RegExp(z.regexes.email);

const customerSchema = z
  .strictObject({
    ...saleRequestParts.customer,
    email: z.email({ pattern: EMAIL_PATTERN, error: 'must be a valid email address' }).optional(),
  })
  .describe('The buyer; every field optional. Encrypted in histories when the worker has payload keys.');

const saleOptionsSchema = z
  .strictObject({
    refundWindowDays: boundedNumber(0, 365)
      .optional()
      .describe('How long after it is signed the sale can be refunded (default 30 days).'),
    outcomeTimeout: duration(
      "Longest wait for the authority's outcome of one submission before parking. Default: after 24 hours the wait " +
        'counts as an outage, waited out (see outageLimit).',
    ).optional(),
    itemFixDeadline: duration(
      "How long a sale waits for an operator to fix an item the service says still needs something (default '7 days').",
    ).optional(),
    transientRetryLimit: boundedNumber(0, 50)
      .int('must be a whole number')
      .optional()
      .describe(
        'How many times a transient authority failure is retried before parking (default: no count; see outageLimit).',
      ),
    outageLimit: duration(
      'How long the sale waits out an outage of the service or the authority by itself before parking ' +
        "(default: as long as it lasts), e.g. '3 days'.",
    ).optional(),
  })
  .describe('Behaviour knobs; every one has a default.');

const saleInputSchema = z
  .strictObject({
    businessId: businessId().describe("The business the sale is for (no ':')."),
    ...saleRequestParts.fields,
    customer: customerSchema.optional(),
    lines: saleRequestParts.lines(z.strictObject(saleRequestParts.line)),
    options: saleOptionsSchema.optional(),
  })
  .describe(
    'The input of a sale workflow (saleWorkflow): one sale of one business, ' +
      'id sale:<businessId>:<traderInvoiceNumber>.',
  );

const refundRequestSchema = z
  .strictObject({
    reason: creditNoteReason().describe(
      '01 missing quantity, 02 missing data, 03 damaged, 04 wasted, 05 raw material shortage, 06 refund.',
    ),
    returnDate: calendarDate().describe('The day the goods came back, YYYY-MM-DD.'),
    traderInvoiceNumber: traderInvoiceNumber().describe("The credit note's own trader invoice number."),
    restock: z
      .boolean()
      .optional()
      .describe('Put the goods back in stock (ignored for damaged / wasted goods); default true.'),
    saleId: nonEmpty()
      .optional()
      .describe(
        "The service's id of the sale. Needed only when the sale's workflow history is past the namespace's " +
          'retention: the signed sale is then read from the service.',
      ),
    branchId: nonEmpty()
      .optional()
      .describe("The sale's branch for the restock, with saleId only: the service's record of a sale names none."),
  })
  .describe('The argument of the refund update: a credit note reversing the signed sale in full.');

const refundInputSchema = z
  .strictObject({
    businessId: businessId().describe('The business of the sale.'),
    traderInvoiceNumber: traderInvoiceNumber().describe("The sale's trader invoice number (not the credit note's)."),
    request: refundRequestSchema,
  })
  .describe(
    'The input of a refund workflow (refundWorkflow), one per sale, id refund:<businessId>:<traderInvoiceNumber>; ' +
      'started by an update-with-start of its refund update with the same request.',
  );

const saleReferenceSchema = z.strictObject({ businessId: businessId(), traderInvoiceNumber: traderInvoiceNumber() });

const cancelArgsSchema = z
  .strictObject({ reason: nonEmpty().describe('Why the sale is given up; kept in its history.') })
  .describe('The argument of the cancel update.');
const itemFixedArgsSchema = z
  .strictObject({ itemId: nonEmpty().describe('The item fixed in the dashboard.') })
  .describe('The argument of the itemFixed update.');

const awaitReceiptRequestSchema = z
  .strictObject({
    wait: positiveDuration("'30 seconds', '2m'", AWAIT_RECEIPT_WAIT_MAX)
      .meta({ pattern: DURATION_PATTERN })
      .optional()
      .describe(
        "Longest wait for the outcome, as a duration ('30 seconds', '2m'); default '30 seconds', " +
          `at most '${AWAIT_RECEIPT_WAIT_MAX}'.`,
      ),
    input: saleInputSchema
      .optional()
      .describe(
        'When given, must equal the input the sale was started with ' +
          '(otherwise sale_input_conflict, the differing fields named).',
      ),
  })
  .describe(
    'The argument of the awaitReceipt update, alone or in an update-with-start: wait for the signed receipt values.',
  );

const schemas = {
  saleInput: saleInputSchema,
  refundRequest: refundRequestSchema,
  refundInput: refundInputSchema,
  saleReference: saleReferenceSchema,
  cancelArgs: cancelArgsSchema,
  itemFixedArgs: itemFixedArgsSchema,
  awaitReceiptRequest: awaitReceiptRequestSchema,
  saleRequestParts,
};

export type SaleSchemas = typeof schemas;
export type SaleInput = z.output<SaleSchemas['saleInput']>;

/** Behind a function: the sandbox freezes what a shared module's exports reach, and zod writes into a schema on use. */
export function saleSchemas(): SaleSchemas {
  return schemas;
}

export interface InputProblem {
  /** Path of the wrong field, e.g. `lines[0].quantity`; `(input)` when the whole value is wrong. */
  field: string;
  reason: string;
}

type InputCheck<T> = { ok: true; value: T } | { ok: false; problems: [InputProblem, ...InputProblem[]] };

/** `['lines', 0, 'quantity']` → `lines[0].quantity`; `[]` → `root`. */
export function fieldPath(path: ReadonlyArray<PropertyKey>, root = ''): string {
  if (path.length === 0) return root;
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');
}

/** Wording for type errors, where zod's default names zod's own terms. */
export const typeErrors: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  if (issue.expected === 'number' && typeof issue.input === 'number') return 'must be a finite number';
  if (issue.expected === 'array') return 'must be a list';
  return `must be ${issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}`;
};

/** Every problem, unknown fields first: a misspelt `quantitty` explains the "quantity is required" beside it. */
export function checkInput<T>(schema: z.ZodType<T>, value: unknown): InputCheck<T> {
  const parsed = schema.safeParse(value, { error: typeErrors });
  if (parsed.success) return { ok: true, value: parsed.data };
  const unknownFirst = (issue: z.core.$ZodIssue) => (issue.code === 'unrecognized_keys' ? 0 : 1);
  const issues = parsed.error.issues.toSorted((a, b) => unknownFirst(a) - unknownFirst(b));
  const [first, ...rest] = issues.flatMap((issue): InputProblem[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), reason: 'is not a known field' }))
      : [{ field: fieldPath(issue.path, '(input)'), reason: issue.message }],
  );
  return { ok: false, problems: [first ?? { field: '(input)', reason: 'is invalid' }, ...rest] };
}

export function checkSaleInput(value: unknown): InputCheck<SaleInput> {
  return checkInput(schemas.saleInput, value);
}

/** `invalid sale input: lines is required (and 1 more problem)`. */
export function describeProblems(subject: string, problems: readonly InputProblem[]): string {
  const [first] = problems;
  if (!first) return `invalid ${subject}`;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  return `invalid ${subject}: ${first.field} ${first.reason}${more}`;
}

/** Paths where `asked` differs from `started` (key order, absent or `undefined` alike); never values: customer data. */
export function saleInputDifferences(started: unknown, asked: unknown, path: Array<string | number> = []): string[] {
  if (started === asked) return []; // 0 and -0 alike: JSON writes both as 0
  if (Array.isArray(started) && Array.isArray(asked) && started.length === asked.length)
    return started.flatMap((item, index) => saleInputDifferences(item, asked[index], [...path, index]));
  // Two objects where one side is absent: name the fields present, so `customer.name` rather than `customer`.
  if ((isRecord(started) || started === undefined) && (isRecord(asked) || asked === undefined)) {
    const [x, y] = [started ?? {}, asked ?? {}];
    const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
    return keys.flatMap((key) => saleInputDifferences(x[key], y[key], [...path, key]));
  }
  return [fieldPath(path, '(input)')];
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a tenants file may say, and messages that name the entry and field but never echo what could be a key. */
import { z } from 'zod';
import { ConfigError } from '../config/env.js';
import { isCalendarDate } from '../config/stock-in.js';

const APPLICATION = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** An id of the services; one that starts like a key is a key pasted in the wrong place, and is never repeated. */
const ID = /^(?!(cmp_sk|sk|whsec|cs)_)[A-Za-z0-9_.:-]+$/;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ONE_SOURCE = 'must be exactly one of {"value": …}, {"file": …} or {"env": …}';
const RATE = 'must be a whole number from 1 to 100000';

function required(message: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : message);
}

function text(message: string, pattern?: RegExp) {
  const schema = z.string({ error: required(message) });
  return pattern ? schema.regex(pattern, { error: message }) : schema.min(1, { error: message });
}

const applicationName = text(
  'must be 1 to 40 lowercase letters, digits or -, starting with a letter or digit',
  APPLICATION,
);
const id = (what: string) => text(`must be ${what} id (letters, digits, _ . : -), not a key`, ID);

export const keySource = z
  .strictObject(
    {
      value: z.string({ error: 'must be a string' }).optional(),
      file: text('must be a path').optional(),
      env: text('must be an environment variable name', VARIABLE).optional(),
    },
    { error: required(ONE_SOURCE) },
  )
  .refine((source) => Object.keys(source).length === 1, { error: ONE_SOURCE });
export type KeySource = z.infer<typeof keySource>;

const baseUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).optional();

const AN_ENTRY = { error: 'must be an object, one entry' };

export const complianceEntry = z.strictObject(
  {
    application: applicationName,
    apiKey: keySource,
    baseUrl,
    requestsPerMinute: z.int({ error: RATE }).min(1, { error: RATE }).max(100_000, { error: RATE }).default(120),
    businesses: z.array(id('a business'), { error: 'must be a list of business ids' }).optional(),
  },
  AN_ENTRY,
);

export const accountingEntry = z.strictObject(
  {
    application: applicationName,
    apiKey: keySource,
    baseUrl,
    clientSecret: keySource.optional(),
    clientId: keySource.optional(),
    webhookSecret: keySource.optional(),
  },
  AN_ENTRY,
);

export const linkEntry = z.strictObject(
  { business: id('a business'), company: id('a company'), accounting: applicationName },
  AN_ENTRY,
);

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const stockInEntry = z.strictObject(
  {
    business: id('a business'),
    from: text('must be a date in the form YYYY-MM-DD', DATE).refine(isCalendarDate, {
      error: 'must be a date the calendar has',
    }),
    allOrNothing: z.boolean({ error: 'must be true or false' }).default(false),
  },
  AN_ENTRY,
);

const list = z
  .array(z.unknown(), { error: 'must be a list' })
  .nullish()
  .transform((items) => items ?? []);
export const tenantsDocument = z.strictObject(
  { compliance: list, accounting: list, links: list, stockIn: list },
  { error: 'must be an object with compliance, accounting and links lists' },
);

/** A field name is said unless it could be a key pasted in the wrong place. */
function fieldName(name: string | undefined): string {
  const plain =
    name !== undefined && /^[A-Za-z][A-Za-z0-9_-]{0,39}$/.test(name) && !/^(cmp_sk|sk|whsec|cs|client)_/.test(name);
  return plain ? `unknown field "${name}"` : 'unknown field (its name is not shown)';
}

function issuePath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : ': '}${String(part)}`))
    .join('');
}

export function parseEntry<T>(schema: z.ZodType<T>, raw: unknown, source: string): T {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issuePath(issue.path);
  const message = issue.code === 'unrecognized_keys' ? fieldName(issue.keys[0]) : issue.message;
  throw new ConfigError(`${source}: ${where ? `${where}: ` : ''}${message}`);
}

/** `tenants.json: compliance[1] (retail-group)`; the label only once it is known to be a name, not something pasted. */
export function entrySource(
  file: string,
  list: keyof z.infer<typeof tenantsDocument>,
  index: number,
  raw: unknown,
): string {
  const byBusiness = list === 'links' || list === 'stockIn';
  const label =
    typeof raw === 'object' && raw !== null
      ? (raw as Record<string, unknown>)[byBusiness ? 'business' : 'application']
      : undefined;
  const named = typeof label === 'string' && (byBusiness ? ID : APPLICATION).test(label);
  return `${file}: ${list}[${index}]${named ? ` (${label})` : ''}`;
}

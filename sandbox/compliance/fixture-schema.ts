import { z } from 'zod';
import { isValidRegex } from '../shared/regex.js';

/**
 * The compliance sandbox's world: applications and their API keys, businesses with branches, items,
 * stock and supplier invoices, the simulated tax authority's rules and the callback schedule.
 * Every field carries a `.describe()` text; docs/sandbox-fixture.schema.json is generated from them.
 */

export const SCOPE_VALUES = [
  'sales:read',
  'sales:write',
  'stock:write',
  'catalog:read',
  'catalog:write',
  'purchases:read',
] as const;
export const TAX_TYPE_VALUES = ['A', 'B', 'C', 'D', 'E'] as const;
const REGISTRATION_STATUS_VALUES = ['PENDING', 'REGISTERED'] as const;
export const PURCHASE_STATUS_VALUES = ['pulled', 'pending_review', 'confirmed', 'rejected'] as const;
const AUTHORITY_OUTCOME_VALUES = ['accept', 'async', 'reject'] as const;
export const AUTHORITY_ERROR_CODE_VALUES = [
  'authority_unavailable',
  'invalid_customer_pin',
  'authority_rejected',
] as const;
const DOCUMENT_TYPE_VALUES = ['sale', 'credit_note'] as const;

export type Scope = (typeof SCOPE_VALUES)[number];
export type TaxType = (typeof TAX_TYPE_VALUES)[number];
export type AuthorityErrorCode = (typeof AUTHORITY_ERROR_CODE_VALUES)[number];
export type DocumentType = (typeof DOCUMENT_TYPE_VALUES)[number];

/** Tax category text per band, used when an item does not give one (C1). */
export const DEFAULT_TAX_CATEGORY: Readonly<Record<TaxType, string>> = {
  A: 'VAT_EXEMPT',
  B: 'VAT_STANDARD',
  C: 'ZERO_RATED',
  D: 'NON_VAT',
  E: 'VAT_REDUCED',
};

export const API_KEY_PATTERN = /^cmp_sk_(test|live)_[A-Za-z0-9_-]{16,}$/;

// Ids travel in URL paths and query strings, so they are kept to URL-safe characters.
const id = (what: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'must be 1-100 letters, digits, _ . : or -')
    .describe(`Id of the ${what}`);
const isoDate = z.iso.date('must be a date YYYY-MM-DD');
const regexSource = (what: string) =>
  z
    .string()
    .min(1)
    .refine(isValidRegex, 'is not a valid regular expression')
    .describe(`Regular expression (JavaScript syntax) tested on the ${what}`);

const ApplicationFixtureSchema = z
  .object({
    id: id('application'),
    name: z.string().min(1).describe('Display name, returned by GET /v1/identity'),
    requestsPerMinute: z
      .number()
      .int()
      .min(1)
      .default(120)
      .describe('Requests allowed per rate-limit window (the window is rateLimitWindowMs long, one minute by default)'),
    suspended: z
      .boolean()
      .default(false)
      .describe("A suspended application's keys are refused with 401 invalid_api_key"),
  })
  .describe('An integration registered in the compliance dashboard; rate limits apply per application');

const ApiKeyFixtureSchema = z
  .object({
    id: id('API key')
      .optional()
      .describe('Public id shown by GET /v1/identity; derived from a hash of the key when absent'),
    key: z
      .string()
      .regex(API_KEY_PATTERN, 'must be cmp_sk_test_… or cmp_sk_live_… followed by at least 16 of [A-Za-z0-9_-]')
      .describe(
        'The secret key. cmp_sk_test_ keys act on sandbox businesses, cmp_sk_live_ keys on production businesses',
      ),
    applicationId: id('application the key belongs to'),
    scopes: z
      .array(z.enum(SCOPE_VALUES))
      .default([])
      .describe('Scopes granted; each operation needs the one in the API document'),
    businessId: id('business')
      .optional()
      .describe(
        'Business the key is bound to. Absent: organisation-wide, acts for every business of its application and must send businessId',
      ),
    revoked: z.boolean().default(false).describe('A revoked key is refused with 401'),
    expiresAt: z.iso
      .datetime({ offset: true, message: 'must be an ISO date-time' })
      .optional()
      .describe('After this instant the key is refused with 401'),
  })
  .describe('An API key of an application');

const BranchFixtureSchema = z
  .object({
    id: id('branch'),
    name: z.string().min(1).describe('Branch name; purchases report it as `branch`'),
    authorityBhfId: z
      .string()
      .regex(/^\d{2}$/, 'must be two digits, e.g. 00')
      .describe('Tax authority branch-office id (bhfId)'),
    scuSerial: z
      .number()
      .int()
      .min(0)
      .max(9_999_999_999)
      .optional()
      .describe(
        "Serial of the branch's signing control unit, printed as KRACU + 10 digits; numbered from 100000001 when absent",
      ),
  })
  .describe('A branch of a business');

const ItemNeedsFixtureSchema = z
  .object({
    productType: z.boolean().describe('The item still lacks a product type'),
    classificationMapping: z.boolean().describe('The item still lacks an item classification mapping'),
  })
  .describe('What the item lacks for registration; computed from productTypeCode and classificationCode when absent');

const ItemFixtureSchema = z
  .object({
    id: id('item'),
    externalId: z.string().min(1).max(100).describe("The caller's own identifier, unique per business"),
    name: z.string().min(1).describe('Item name, copied onto sale lines'),
    sku: z.string().default('').describe('Stock keeping unit'),
    taxTypeCode: z
      .enum(TAX_TYPE_VALUES)
      .describe('Tax band: A exempt 0 %, B 16 %, C zero-rated 0 %, D non-VAT 0 %, E 8 %'),
    taxCategory: z
      .string()
      .min(1)
      .optional()
      .describe('Free text; derived from the band when absent (VAT_STANDARD, VAT_EXEMPT, …)'),
    productTypeCode: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe('1 raw material, 2 finished product, 3 service; null = missing'),
    classificationCode: z.string().min(1).nullable().default(null).describe('Item classification code; null = missing'),
    unitCode: z.string().min(1).default('U').describe('Quantity unit code (U pieces, KG, L)'),
    packagingUnitCode: z.string().min(1).default('NT').describe('Packaging unit code (NT, BX, BG)'),
    unitPrice: z.number().min(0).describe('Default tax-inclusive unit price'),
    stockTracked: z.boolean().default(true).describe('Whether stock movements can be reported for the item'),
    registrationStatus: z
      .enum(REGISTRATION_STATUS_VALUES)
      .default('PENDING')
      .describe('PENDING until registered with the tax authority'),
    needs: ItemNeedsFixtureSchema.optional(),
    deleted: z.boolean().default(false).describe('A deleted item is not listed and cannot be sold'),
  })
  .describe('An item of the business catalogue');

const StockFixtureSchema = z
  .object({
    itemId: id('item'),
    branchId: id('branch'),
    quantity: z.number().min(0).describe('Quantity on hand at the branch'),
  })
  .describe('Starting quantity on hand of an item at a branch (absent pairs start at 0)');

const PurchaseLineFixtureSchema = z
  .object({
    description: z.string().min(1).describe('Line description'),
    hsCode: z.string().min(1).nullable().default(null).describe('Harmonised System code, if any'),
    quantity: z.number().positive().describe('Quantity'),
    unitPrice: z.number().min(0).describe('Tax-inclusive unit price; total and taxAmount are computed from it'),
    taxRate: z.number().min(0).max(100).default(16).describe('VAT rate in percent'),
    itemCode: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        "The supplier's own code of the line; listed as the line's `itemCode` when given (a field beyond the contract's, as a service may send)",
      ),
  })
  .describe('A supplier invoice line');

const PurchaseReviewFixtureSchema = z
  .object({
    atPull: z
      .number()
      .int()
      .min(1)
      .describe("The business's pull (1 = its first since the sandbox started) from which the review shows"),
    status: z.enum(PURCHASE_STATUS_VALUES).describe('Review status from then on'),
    confirmationError: z.string().min(1).nullable().default(null).describe('Why confirming failed, from then on'),
  })
  .describe(
    'A review done on the dashboard between two pulls: the invoice shows this status from the given pull on (C9)',
  );

export const PurchaseFixtureSchema = z
  .object({
    id: id('purchase'),
    status: z
      .enum(PURCHASE_STATUS_VALUES)
      .default('pulled')
      .describe('Review status at the start; `reviews` move it (C9)'),
    supplier: z.object({ name: z.string().min(1), pin: z.string().min(1) }).describe('Supplier name and tax PIN'),
    supplierInvoiceNumber: z.string().min(1).describe("The supplier's invoice number"),
    invoiceDate: isoDate.describe('Invoice date; lists are sorted by it, newest first'),
    branchId: id('branch the invoice is addressed to'),
    lines: z.array(PurchaseLineFixtureSchema).min(1),
    confirmationError: z.string().nullable().default(null).describe('Why confirming the invoice failed, if it did'),
    pendingPull: z
      .boolean()
      .default(false)
      .describe('Held by the tax authority and not yet fetched: invisible until POST /v1/purchases/pull'),
    arrivesAtPull: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "With pendingPull: fetched only by the business's nth pull (a late invoice, typically with an old date); default the first",
      ),
    reviews: z.array(PurchaseReviewFixtureSchema).default([]).describe('Status changes over time, by pull'),
  })
  .refine((p) => p.arrivesAtPull === undefined || p.pendingPull, {
    message: 'needs pendingPull: true',
    path: ['arrivesAtPull'],
  })
  .describe('A supplier invoice the tax authority holds against the business');

const BusinessFixtureSchema = z
  .object({
    id: id('business'),
    name: z.string().min(1).describe('Business name, printed on receipts'),
    pin: z
      .string()
      .regex(/^[A-Z]\d{9}[A-Z]$/, 'must be a KRA PIN such as P051234567A')
      .describe('Tax PIN'),
    environment: z
      .enum(['sandbox', 'production'])
      .describe('sandbox businesses take cmp_sk_test_ keys, production ones cmp_sk_live_ keys'),
    applicationId: id('application that owns the business'),
    branches: z.array(BranchFixtureSchema).min(1).describe('The first branch is the default branch'),
    items: z.array(ItemFixtureSchema).default([]),
    stock: z.array(StockFixtureSchema).default([]),
    purchases: z.array(PurchaseFixtureSchema).default([]),
  })
  .describe('A business (taxpayer) and its data');

export const AuthorityRuleSchema = z
  .object({
    id: z.string().min(1).max(100).optional().describe('Rule id; assigned when absent'),
    match: z
      .object({
        businessId: z.string().min(1).optional().describe('Only documents of this business'),
        documentType: z.enum(DOCUMENT_TYPE_VALUES).optional().describe('Only sales or only credit notes'),
        traderInvoiceNumber: regexSource('trader invoice number').optional(),
        itemId: z.string().min(1).optional().describe('Only documents with a line of this item'),
        customerPin: regexSource('customer PIN (a document without a PIN never matches)').optional(),
      })
      .prefault({})
      .describe('All given conditions must hold; an empty match applies to every document'),
    outcome: z
      .enum(AUTHORITY_OUTCOME_VALUES)
      .describe('accept: signed at once (201); async: in flight (202) and settled later; reject: 422'),
    asyncOutcome: z.enum(['completed', 'failed']).default('completed').describe('How an async document settles'),
    delayMs: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'async: time until the document settles (default authority.asyncDelayMs). ' +
          'accept/reject: time the authority takes to answer, during which the request is held',
      ),
    errorCode: z
      .enum(AUTHORITY_ERROR_CODE_VALUES)
      .optional()
      .describe(
        'Cause reported in error.errors[].code when rejecting or failing ' +
          '(default authority_rejected, or authority_unavailable for an async failure)',
      ),
    message: z.string().min(1).optional().describe("Why the authority refused; becomes the document's `error`"),
    times: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('How many submissions the rule applies to (absent: unlimited); see timesPer'),
    timesPer: z
      .enum(['rule', 'document'])
      .default('rule')
      .describe(
        'rule: `times` counts submissions of all documents together; document: each document gets its own `times`',
      ),
  })
  .describe('A decision of the simulated tax authority; the first matching rule that is not used up decides');

export const ItemNeedsRuleSchema = z
  .object({
    businessId: z.string().min(1).optional().describe('Only items of this business'),
    externalId: regexSource("item's externalId"),
    productType: z.boolean().default(false).describe('The authority takes no product type for these items'),
    classificationMapping: z
      .boolean()
      .default(false)
      .describe("The authority has no mapping of these items' classification"),
  })
  .refine((rule) => rule.productType || rule.classificationMapping, {
    message: 'must set productType or classificationMapping',
  })
  .describe(
    'Items created through the API whose externalId matches lack these parts whatever codes they were created with, ' +
      'until fixed (POST /__sandbox/items/{id}/fix)',
  );

const AuthorityFixtureSchema = z
  .object({
    defaultOutcome: z.enum(AUTHORITY_OUTCOME_VALUES).default('accept').describe('Outcome when no rule matches'),
    asyncDelayMs: z.number().int().min(0).default(1500).describe('Default time until an async document settles'),
    rules: z.array(AuthorityRuleSchema).default([]),
    itemNeeds: z.array(ItemNeedsRuleSchema).default([]),
    unregisteredItemCause: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'must be a snake_case code')
      .default('item_not_registered')
      .describe(
        'Cause code of a sale rejected for an unregistered item (C33). Another code stands in for a service that words ' +
          'this rejection its own way: the cause then names neither the item nor the line, only the code and a message',
      ),
  })
  .describe('The simulated tax authority');

const CallbacksFixtureSchema = z
  .object({
    retryScheduleMs: z
      .array(z.number().int().min(0))
      .min(1)
      .default([0, 10_000, 60_000, 300_000, 1_800_000, 7_200_000])
      .describe('Delay of each delivery attempt after the outcome (C47); its length is the number of attempts'),
    timeoutMs: z.number().int().min(1).default(10_000).describe('An attempt without an answer in this time has failed'),
    outOfOrderHoldMs: z
      .number()
      .int()
      .min(0)
      .default(5_000)
      .describe(
        'callback-out-of-order faults: the longest a delivery is held waiting for a later one of the same document',
      ),
  })
  .describe('Result callback delivery');

const ComplianceFixtureObjectSchema = z.object({
  rateLimitWindowMs: z.number().int().min(1).default(60_000).describe('Length of a rate-limit window (C43)'),
  idempotencyTtlMs: z
    .number()
    .int()
    .min(1)
    .default(86_400_000)
    .describe('How long an Idempotency-Key is remembered (C13)'),
  applications: z.array(ApplicationFixtureSchema).min(1),
  apiKeys: z.array(ApiKeyFixtureSchema).default([]),
  businesses: z.array(BusinessFixtureSchema).default([]),
  authority: AuthorityFixtureSchema.prefault({}),
  callbacks: CallbacksFixtureSchema.prefault({}),
});

export const ComplianceFixtureSchema = ComplianceFixtureObjectSchema.superRefine(checkReferences).describe(
  'The compliance service sandbox',
);

export type ComplianceFixture = z.output<typeof ComplianceFixtureSchema>;
export type ComplianceFixtureInput = z.input<typeof ComplianceFixtureSchema>;
export type ApplicationFixture = ComplianceFixture['applications'][number];
export type BusinessFixture = ComplianceFixture['businesses'][number];
export type ItemFixture = BusinessFixture['items'][number];
export type ItemFixtureInput = z.input<typeof ItemFixtureSchema>;
export type PurchaseFixture = BusinessFixture['purchases'][number];
export type PurchaseFixtureInput = z.input<typeof PurchaseFixtureSchema>;
export type PurchaseLineFixtureInput = z.input<typeof PurchaseLineFixtureSchema>;
export type PurchaseStatus = (typeof PURCHASE_STATUS_VALUES)[number];
export type AuthorityRule = z.output<typeof AuthorityRuleSchema>;
export type AuthorityRuleInput = z.input<typeof AuthorityRuleSchema>;
export type ItemNeedsRule = z.output<typeof ItemNeedsRuleSchema>;
export type ItemNeedsRuleInput = z.input<typeof ItemNeedsRuleSchema>;

type Ctx = z.RefinementCtx;
type Path = (string | number)[];

function firstDuplicate<T>(values: readonly T[]): number {
  const seen = new Set<T>();
  for (const [index, value] of values.entries()) {
    if (seen.has(value)) return index;
    seen.add(value);
  }
  return -1;
}

function requireUnique(ctx: Ctx, values: readonly string[], pathOf: (index: number) => Path, label: string): void {
  const index = firstDuplicate(values);
  if (index >= 0) ctx.addIssue({ code: 'custom', path: pathOf(index), message: `duplicate ${label} ${values[index]}` });
}

/** Referential integrity: every reference points at something that exists, and ids are unique. */
function checkReferences(fixture: z.output<typeof ComplianceFixtureObjectSchema>, ctx: Ctx): void {
  const applicationIds = new Set(fixture.applications.map((a) => a.id));
  requireUnique(
    ctx,
    fixture.applications.map((a) => a.id),
    (i) => ['applications', i, 'id'],
    'application id',
  );

  // A key's value is a secret even in a fixture error: only its position is named.
  const keyIndex = firstDuplicate(fixture.apiKeys.map((k) => k.key));
  if (keyIndex >= 0) ctx.addIssue({ code: 'custom', path: ['apiKeys', keyIndex, 'key'], message: 'duplicate API key' });
  requireUnique(
    ctx,
    fixture.apiKeys.flatMap((k) => (k.id === undefined ? [] : [k.id])),
    () => ['apiKeys'],
    'API key id',
  );

  const businessApplication = new Map(fixture.businesses.map((b) => [b.id, b.applicationId]));
  requireUnique(
    ctx,
    fixture.businesses.map((b) => b.id),
    (i) => ['businesses', i, 'id'],
    'business id',
  );
  // Root causes before their consequences: a business's own application, then the keys that point at it.
  fixture.businesses.forEach((business, bi) => {
    if (!applicationIds.has(business.applicationId)) {
      ctx.addIssue({
        code: 'custom',
        path: ['businesses', bi, 'applicationId'],
        message: `unknown application ${business.applicationId}`,
      });
    }
  });

  fixture.apiKeys.forEach((key, i) => {
    if (!applicationIds.has(key.applicationId)) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiKeys', i, 'applicationId'],
        message: `unknown application ${key.applicationId}`,
      });
    }
    if (key.businessId !== undefined) {
      const owner = businessApplication.get(key.businessId);
      if (owner === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['apiKeys', i, 'businessId'],
          message: `unknown business ${key.businessId}`,
        });
      } else if (owner !== key.applicationId) {
        ctx.addIssue({
          code: 'custom',
          path: ['apiKeys', i, 'businessId'],
          message: `business ${key.businessId} belongs to application ${owner}, not ${key.applicationId}`,
        });
      }
    }
  });

  const allBranches = fixture.businesses.flatMap((b, bi) =>
    b.branches.map((br, ri) => ({ br, path: ['businesses', bi, 'branches', ri] })),
  );
  requireUnique(
    ctx,
    allBranches.map((x) => x.br.id),
    (i) => [...(allBranches[i]?.path ?? []), 'id'],
    'branch id',
  );
  const serials = allBranches.flatMap((x) => (x.br.scuSerial === undefined ? [] : [String(x.br.scuSerial)]));
  requireUnique(ctx, serials, () => ['businesses'], 'branch scuSerial');
  const allItems = fixture.businesses.flatMap((b, bi) =>
    b.items.map((it, ii) => ({ it, path: ['businesses', bi, 'items', ii] })),
  );
  requireUnique(
    ctx,
    allItems.map((x) => x.it.id),
    (i) => [...(allItems[i]?.path ?? []), 'id'],
    'item id',
  );
  const allPurchases = fixture.businesses.flatMap((b, bi) =>
    b.purchases.map((p, pi) => ({ p, path: ['businesses', bi, 'purchases', pi] })),
  );
  requireUnique(
    ctx,
    allPurchases.map((x) => x.p.id),
    (i) => [...(allPurchases[i]?.path ?? []), 'id'],
    'purchase id',
  );

  fixture.businesses.forEach((business, bi) => {
    const at = (...rest: Path): Path => ['businesses', bi, ...rest];
    requireUnique(
      ctx,
      business.branches.map((b) => b.authorityBhfId),
      (i) => at('branches', i, 'authorityBhfId'),
      'authorityBhfId',
    );
    requireUnique(
      ctx,
      business.items.map((it) => it.externalId),
      (i) => at('items', i, 'externalId'),
      'externalId',
    );
    business.items.forEach((item, ii) => {
      const needs = item.needs;
      if (item.registrationStatus === 'REGISTERED' && needs && (needs.productType || needs.classificationMapping)) {
        ctx.addIssue({
          code: 'custom',
          path: at('items', ii, 'needs'),
          message: 'a REGISTERED item cannot still need something',
        });
      }
    });
    const branchIds = new Set(business.branches.map((b) => b.id));
    const itemIds = new Set(business.items.map((it) => it.id));
    business.stock.forEach((level, si) => {
      if (!itemIds.has(level.itemId)) {
        const message = `item ${level.itemId} is not an item of business ${business.id}`;
        ctx.addIssue({ code: 'custom', path: at('stock', si, 'itemId'), message });
      }
      if (!branchIds.has(level.branchId)) {
        const message = `branch ${level.branchId} is not a branch of business ${business.id}`;
        ctx.addIssue({ code: 'custom', path: at('stock', si, 'branchId'), message });
      }
    });
    requireUnique(
      ctx,
      business.stock.map((s) => `${s.itemId}@${s.branchId}`),
      (i) => at('stock', i),
      'stock level for item@branch',
    );
    business.purchases.forEach((purchase, pi) => {
      if (!branchIds.has(purchase.branchId)) {
        ctx.addIssue({
          code: 'custom',
          path: at('purchases', pi, 'branchId'),
          message: `branch ${purchase.branchId} is not a branch of business ${business.id}`,
        });
      }
    });
  });

  requireUnique(
    ctx,
    fixture.authority.rules.flatMap((r) => (r.id === undefined ? [] : [r.id])),
    () => ['authority', 'rules'],
    'rule id',
  );
  fixture.authority.rules.forEach((rule, ri) => {
    if (rule.match.businessId !== undefined && !businessApplication.has(rule.match.businessId)) {
      ctx.addIssue({
        code: 'custom',
        path: ['authority', 'rules', ri, 'match', 'businessId'],
        message: `unknown business ${rule.match.businessId}`,
      });
    }
  });
}

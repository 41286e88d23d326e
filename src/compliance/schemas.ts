/** Lenient: unknown fields and enum values kept, a nullable key may be missing; a missing required field fails. */
import { z } from 'zod';
import { ApiError } from '../http/errors.js';
import { AUTHORITY_CAUSES, COMPLIANCE_ERROR_CODES } from '../contracts/compliance-rules.js';
import { taxBandsOf, type TaxBands } from '../contracts/fiscal-day.js';

/** A string whose documented values are known but which may carry others. */
type Open<Known extends string> = Known | (string & {});

function openString<const Known extends readonly string[]>(_known: Known) {
  return z.string().transform((value): Open<Known[number]> => value);
}

const nullableString = () => z.string().nullable().default(null);
const nullableInteger = () => z.number().int().nullable().default(null);
const requiredId = () => z.string().min(1);

const CALLBACK_EVENTS = ['sale.completed', 'sale.failed'] as const;
const TAX_TYPE_CODES = ['A', 'B', 'C', 'D', 'E'] as const;
const SCOPES = ['sales:read', 'sales:write', 'stock:write', 'catalog:read', 'catalog:write', 'purchases:read'] as const;
export const STOCK_ACTIONS = ['ADD', 'DEDUCT'] as const;

const CustomerSchema = z.looseObject({
  name: nullableString(),
  pin: nullableString(),
  phone: nullableString(),
  email: nullableString(),
});

const NO_CUSTOMER = { name: null, pin: null, phone: null, email: null } as const;

const SaleLineSchema = z.looseObject({
  id: requiredId(),
  itemId: requiredId(),
  name: nullableString(),
  description: nullableString(),
  quantity: z.number(),
  unitPrice: z.number(),
  total: z.number(),
  taxableAmount: z.number(),
  taxAmount: z.number(),
  taxRate: z.number(),
  taxTypeCode: openString(TAX_TYPE_CODES).nullable().default(null),
});

const totalsFields = { total: z.number(), taxableAmount: z.number(), taxAmount: z.number() };

/** Values signed by the tax authority; nothing is parsed from them (C32). */
const receiptFields = {
  cuInvoiceNo: nullableString(),
  receiptNumber: nullableInteger(),
  receiptLabel: openString(['NS', 'NC']).nullable().default(null),
  scuId: nullableString(),
  scuDate: nullableString(),
  scuTime: nullableString(),
  totalReceiptCounter: nullableString(),
  signature: nullableString(),
  internalData: nullableString(),
  verificationUrl: nullableString(),
  originalCuInvoiceNo: nullableString(),
};

/** Informational only (C8), so only `url` and `status` are required. */
const CallbackSchema = z.looseObject({
  url: z.string(),
  status: openString(['awaiting_outcome', 'pending', 'delivered', 'failed']),
  event: openString(CALLBACK_EVENTS).nullable().default(null),
  attempts: z.number().int().nonnegative().default(0),
  lastAttemptAt: nullableString(),
  lastResponseStatus: nullableInteger(),
  lastError: nullableString(),
  deliveredAt: nullableString(),
  nextAttemptAt: nullableString(),
});

/** A sale or a credit note (on a credit note, amounts and quantities are negative). */
export const SaleSchema = z.looseObject({
  id: requiredId(),
  type: openString(['sale', 'credit_note']),
  status: openString(['pending', 'ready_to_submit', 'retrying', 'completed', 'failed', 'cancelled']),
  traderInvoiceNumber: z.string(),
  saleDate: nullableString(),
  paymentTypeCode: nullableString(),
  customer: CustomerSchema.nullish().transform((customer) => customer ?? { ...NO_CUSTOMER }),
  lines: z.array(SaleLineSchema),
  totals: z.looseObject(totalsFields),
  receipt: z.looseObject(receiptFields).nullable().default(null),
  originalSaleId: nullableString(),
  error: nullableString(),
  callback: CallbackSchema.nullable().default(null),
});

/** Named fields only: the service's `callback.url`, whose token must never leave the worker, never reaches history. */
const FiscalDocumentFields = z.object({
  id: z.string(),
  type: z.string(),
  status: z.string(),
  traderInvoiceNumber: z.string(),
  totals: z.object(totalsFields),
  receipt: z.object(receiptFields).nullable(),
  error: z.string().nullable(),
});

/** Without lines (a sale's lines are its customer's business): only their sums per tax letter, for the day book. */
export const FiscalDocumentSchema = FiscalDocumentFields.extend({
  lines: z.array(z.looseObject({ ...totalsFields, taxTypeCode: z.string().nullable().default(null) })).optional(),
}).transform(({ lines, ...document }): z.output<typeof FiscalDocumentFields> & { taxes?: TaxBands } =>
  lines === undefined ? document : { ...document, taxes: taxBandsOf(lines) },
);

const ItemNeedsSchema = z.looseObject({ productType: z.boolean(), classificationMapping: z.boolean() });

export const ItemSchema = z.looseObject({
  id: requiredId(),
  externalId: z.string(),
  name: z.string(),
  sku: nullableString(),
  // Code fields are accepted as null too (C1): an item may be created before it is fully classified.
  taxCategory: nullableString(),
  taxTypeCode: openString(TAX_TYPE_CODES).nullable().default(null),
  productTypeCode: openString(['1', '2', '3']).nullable().default(null),
  classificationCode: nullableString(),
  unitCode: nullableString(),
  packagingUnitCode: nullableString(),
  unitPrice: z.number().nullable().default(null),
  stockTracked: z.boolean().nullable().default(null),
  registrationStatus: openString(['PENDING', 'REGISTERED']),
  /** Null when the service did not say; read as "unknown", not "nothing missing". */
  needs: ItemNeedsSchema.nullable().default(null),
});

const FiscalReportSchema = z.looseObject({ status: openString(['ok']) });

export const StockAdjustmentResultSchema = z.looseObject({
  itemId: requiredId(),
  branchId: requiredId(),
  movementId: requiredId(),
  quantityOnHand: z.number(),
  /** The tax system's report of the movement; anything but `ok` is a remark, not a failure (C2). */
  fiscal: z.looseObject({
    stockIo: FiscalReportSchema.nullable().default(null),
    stockMaster: FiscalReportSchema.nullable().default(null),
  }),
});

const PurchaseLineSchema = z.looseObject({
  description: z.string(),
  hsCode: nullableString(),
  quantity: z.number(),
  unitPrice: z.number(),
  taxRate: z.number(),
  taxAmount: z.number(),
  total: z.number(),
});

const PurchaseSchema = z.looseObject({
  id: requiredId(),
  status: openString(['pulled', 'pending_review', 'confirmed', 'rejected']),
  supplier: z.looseObject({ name: nullableString(), pin: nullableString() }),
  supplierInvoiceNumber: z.string(),
  invoiceDate: z.string(),
  branch: nullableString(),
  totals: z.looseObject({ subtotal: z.number(), vat: z.number(), total: z.number() }),
  lines: z.array(PurchaseLineSchema),
  confirmationError: nullableString(),
});

const PullResultSchema = z.looseObject({ pulled: z.number().optional(), total: z.number().optional() });

const BranchSchema = z.looseObject({
  id: requiredId(),
  /** The tax authority's branch-office identifier. */
  authorityBhfId: z.string(),
  name: z.string().optional(),
});

const BusinessSchema = z.looseObject({
  id: requiredId(),
  name: z.string().optional(),
  pin: z.string().optional(),
  environment: openString(['sandbox', 'production']).optional(),
  branches: z.array(BranchSchema).default([]),
});

const IdentitySchema = z.looseObject({
  application: z
    .looseObject({ id: z.string().optional(), name: z.string().optional(), rateLimitPerMinute: z.number().optional() })
    .optional(),
  apiKey: z
    .looseObject({
      id: z.string().optional(),
      environment: openString(['test', 'live']).optional(),
      scopes: z.array(openString(SCOPES)).optional(),
      /** Null for an organisation-wide key. */
      businessId: z.string().nullable().optional(),
    })
    .optional(),
});

const CodeSchema = z.looseObject({
  code: z.string(),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});

const CodeListSchema = z.looseObject({
  id: requiredId(),
  name: z.string().optional(),
  codes: z.array(CodeSchema).default([]),
});

const ItemClassificationSchema = z.looseObject({
  code: z.string(),
  name: z.string().optional(),
  taxTypeCode: openString(TAX_TYPE_CODES).nullable().optional(),
  level: z.number().optional(),
});

const envelope = <K extends string, S extends z.ZodType>(key: K, schema: S) =>
  z.looseObject({ data: z.looseObject({ [key]: schema } as Record<K, S>) });

export const SaleEnvelopeSchema = envelope('sale', SaleSchema);
export const ItemEnvelopeSchema = envelope('item', ItemSchema);
export const ItemListEnvelopeSchema = envelope('items', z.array(ItemSchema));
export const StockAdjustmentEnvelopeSchema = z.looseObject({ data: StockAdjustmentResultSchema });
export const PurchasePageEnvelopeSchema = envelope('purchases', z.array(PurchaseSchema)).extend({
  pagination: z.looseObject({ nextCursor: nullableString(), pageSize: z.number().int() }),
});
export const PullResultEnvelopeSchema = z.looseObject({ data: PullResultSchema });
export const BusinessListEnvelopeSchema = envelope('businesses', z.array(BusinessSchema));
export const IdentityEnvelopeSchema = z.looseObject({ data: IdentitySchema });
export const CodeListsEnvelopeSchema = envelope('codeLists', z.array(CodeListSchema));
export const ItemClassificationsEnvelopeSchema = envelope('classifications', z.array(ItemClassificationSchema));

/** One cause in `error.errors` of an `authority_rejected` answer (C33). */
const AuthorityErrorSchema = z.looseObject({
  code: openString(Object.values(AUTHORITY_CAUSES)),
  message: z.string().optional(),
  field: z.string().optional(),
  itemId: z.string().optional(),
});

/** `{error: {code, message, ...extras}}`; extras named by the document: sale, item, errors, creditNoteId, branches. */
export const ErrorBodySchema = z.looseObject({
  error: z.looseObject({
    code: openString(COMPLIANCE_ERROR_CODES),
    message: z.string(),
    sale: SaleSchema.optional(),
    item: ItemSchema.optional(),
    errors: z.array(AuthorityErrorSchema).optional(),
    creditNoteId: z.string().optional(),
    branches: z.array(BranchSchema).optional(),
  }),
});

/** The body POSTed to a callback URL (C45): only `data.sale.id` is relied on, the worker re-reads the sale. */
export const CallbackNotificationSchema = z.looseObject({
  id: z.string().optional(),
  event: openString(CALLBACK_EVENTS).optional(),
  createdAt: z.string().optional(),
  data: z.looseObject({ sale: z.looseObject({ id: requiredId() }) }),
});

export type Sale = z.output<typeof SaleSchema>;
export type ItemNeeds = z.output<typeof ItemNeedsSchema>;
export type Item = z.output<typeof ItemSchema>;
export type Purchase = z.output<typeof PurchaseSchema>;
export type Branch = z.output<typeof BranchSchema>;
export type Business = z.output<typeof BusinessSchema>;
export type Identity = z.output<typeof IdentitySchema>;
export type CodeList = z.output<typeof CodeListSchema>;
export type ItemClassification = z.output<typeof ItemClassificationSchema>;
export type AuthorityError = z.output<typeof AuthorityErrorSchema>;
export type ErrorBody = z.output<typeof ErrorBodySchema>;

/** Only `REGISTERED` counts; any other value is "not yet" (C1). */
export function isRegistered(item: Pick<Item, 'registrationStatus'>): boolean {
  return item.registrationStatus === 'REGISTERED';
}

/** `error[key]` of an `ApiError`, if present and well-formed. */
function detailOf<S extends z.ZodType>(err: unknown, key: string, schema: S): z.output<S> | undefined {
  return err instanceof ApiError ? schema.safeParse(err.details[key]).data : undefined;
}

/** The document a 422 `authority_rejected` carries in `error.sale` (C5). */
export function saleFromError(err: unknown): Sale | undefined {
  return detailOf(err, 'sale', SaleSchema);
}

/** The item a 422 on registration or a 409 `already_exists` carries in `error.item` (C21). */
export function itemFromError(err: unknown): Item | undefined {
  return detailOf(err, 'item', ItemSchema);
}

/** The causes listed in `error.errors`; malformed entries are skipped. */
export function authorityErrorsFromError(err: unknown): AuthorityError[] {
  const entries = detailOf(err, 'errors', z.array(z.unknown())) ?? [];
  return entries.flatMap((entry) => AuthorityErrorSchema.safeParse(entry).data ?? []);
}

import { z } from 'zod';

/** Response shapes, lenient: only what A4 requires is required; unknown fields and enum-like values are kept. */
export const PAYMENT_METHODS = ['cash', 'check', 'bank_transfer', 'credit_card', 'other'] as const;
export const SYNC_STATUSES = ['pending', 'syncing', 'synced', 'failed'] as const;
export const SORT_FIELDS = ['paymentDate', 'totalAmount', 'createdAt', 'updatedAt'] as const;
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;

export type KnownSyncStatus = (typeof SYNC_STATUSES)[number];
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

const NamedRefSchema = z.looseObject({ id: z.string().nullish(), name: z.string().nullish() });
const BillRefSchema = z.looseObject({ id: z.string().nullish(), billCode: z.string().nullish() });

const BillPaymentLineLinkSchema = z.looseObject({ billId: z.string().nullish(), amount: z.number().nullish() });
const BillPaymentLineSchema = z.looseObject({
  amount: z.number().nullish(),
  allocatedOnDate: z.string().nullish(),
  reference: z.string().nullish(),
  links: z.array(BillPaymentLineLinkSchema).nullish(),
});

export const BillPaymentSchema = z.looseObject({
  id: z.string(),
  totalAmount: z.number(),
  currency: z.string(),
  date: z.string(),
  supplierRef: NamedRefSchema.nullish(),
  accountRef: NamedRefSchema.nullish(),
  paymentMethodRef: NamedRefSchema.nullish(),
  billRef: BillRefSchema.nullish(),
  currencyRate: z.number().nullish(),
  billPaymentCode: z.string().nullish(),
  note: z.string().nullish(),
  lines: z.array(BillPaymentLineSchema).nullish(),
  createdAt: z.string().nullish(),
  updatedAt: z.string().nullish(),
  /** A6: extra fields the sandbox sends; optional because the contract does not show them. */
  paymentMethod: z.string().nullish(),
  status: z.string().nullish(),
  /** A18: the sync batch the bill payment belongs to; A19: why its sync failed. Sandbox extras, optional. */
  syncBatchId: z.string().nullish(),
  syncError: z.string().nullish(),
});

const CompanySchema = z.looseObject({ id: z.string(), name: z.string().nullish() });

function listEnvelopeSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    data: z.array(item),
    total: z.number(),
    page: z.number(),
    limit: z.number(),
    totalPages: z.number(),
    hasNextPage: z.boolean(),
    hasPreviousPage: z.boolean(),
  });
}

export const BillPaymentPageSchema = listEnvelopeSchema(BillPaymentSchema);

/** A8 decides an envelope; a bare array is accepted too and given a one-page envelope. */
export const CompanyPageSchema = z.union([
  listEnvelopeSchema(CompanySchema),
  z.array(CompanySchema).transform((data) => ({
    data,
    total: data.length,
    page: 1,
    limit: data.length,
    totalPages: data.length > 0 ? 1 : 0,
    hasNextPage: false,
    hasPreviousPage: false,
  })),
]);

export const ProcessSyncBatchResponseSchema = z.looseObject({ message: z.string() });

export type BillPayment = z.output<typeof BillPaymentSchema>;
export type CompanyPage = z.output<typeof CompanyPageSchema>;
export type ProcessSyncBatchResponse = z.output<typeof ProcessSyncBatchResponseSchema>;

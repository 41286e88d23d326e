import { z } from 'zod';

/**
 * The accounting sandbox's starting data: applications with their credentials and companies, the
 * companies' bill payments, and sync batches waiting to be processed (docs/contract-assumptions.md A5–A10).
 */

export const PAYMENT_METHOD_VALUES = ['cash', 'check', 'bank_transfer', 'credit_card', 'other'] as const;
export const SYNC_STATUS_VALUES = ['pending', 'syncing', 'synced', 'failed'] as const;
const SYNC_BATCH_STATE_VALUES = ['pending', 'processing', 'completed', 'failed'] as const;

const TAIL = '[A-Za-z0-9_-]{16,}';
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD');
const isoDateTime = z.iso.datetime({ offset: true });
const ref = z.object({ id: z.string().min(1), name: z.string() });

const AccountingCompanySchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
});

const AccountingApplicationSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  clientId: z.string().regex(/^client_[A-Za-z0-9_-]{4,}$/, 'expected client_…'),
  apiKeys: z
    .array(
      z
        .string()
        .regex(new RegExp(`^sk_(development|production)_${TAIL}$`), 'expected sk_development_… or sk_production_…'),
    )
    .min(1),
  /** Any of these verifies signed requests of this application (a rotation keeps the old one for a while). */
  clientSecrets: z.array(z.string().regex(new RegExp(`^cs_${TAIL}$`), 'expected cs_…')).default([]),
  webhookSecret: z
    .string()
    .regex(/^whsec_(development_|production_)?[A-Za-z0-9+/]{16,}={0,2}$/, 'expected whsec_… base64')
    .optional(),
  /**
   * Where the application's webhooks go (bill-payment sync status changes of processed batches, signed with
   * `webhookSecret`); also settable at run time through the inspection API. No URL or no secret: none sent.
   */
  webhookUrl: z.url({ protocol: /^https?$/, error: 'expected an absolute http(s) URL' }).optional(),
  /** An inactive application's keys are refused with 401. */
  active: z.boolean().default(true),
  companies: z.array(AccountingCompanySchema).default([]),
});

const BillPaymentLineSchema = z.object({
  amount: z.number(),
  allocatedOnDate: isoDate,
  reference: z.string().optional(),
  links: z.array(z.object({ billId: z.string().min(1), amount: z.number() })).default([]),
});

const FixtureBillPaymentSchema = z.object({
  id: z.string().min(1),
  companyId: z.string().min(1),
  supplierRef: ref.optional(),
  accountRef: ref.optional(),
  paymentMethodRef: ref.optional(),
  billRef: z.object({ id: z.string().min(1), billCode: z.string() }).optional(),
  totalAmount: z.number(),
  currency: z.string().min(3),
  currencyRate: z.number().positive().optional(),
  date: isoDate,
  billPaymentCode: z.string().optional(),
  note: z.string().optional(),
  lines: z.array(BillPaymentLineSchema).default([]),
  createdAt: isoDateTime,
  updatedAt: isoDateTime,
  paymentMethod: z.enum(PAYMENT_METHOD_VALUES),
  status: z.enum(SYNC_STATUS_VALUES).default('pending'),
});

const SyncFailureSchema = z.object({
  billPaymentId: z.string().min(1),
  /** What the accounting system says; shown as the bill payment's `syncError` (A19). */
  reason: z.string().min(1),
  /** How many processing runs fail this bill payment before one syncs it (default 1: a re-process fixes it). */
  times: z.number().int().min(1).default(1),
});

const FixtureSyncBatchSchema = z.object({
  id: z.string().min(1),
  companyId: z.string().min(1),
  /** The bill payments the batch covers (A18); a bill payment belongs to one batch at most. */
  billPaymentIds: z.array(z.string().min(1)).min(1),
  status: z.enum(SYNC_BATCH_STATE_VALUES).default('pending'),
  /** `failed`: every processing run fails all the batch's bill payments with `failureReason`. */
  outcome: z.enum(['synced', 'failed']).optional(),
  failureReason: z.string().min(1).default('The accounting system rejected the bill payment'),
  /** Single bill payments that fail their first `times` processing runs, with a reason. */
  failures: z.array(SyncFailureSchema).default([]),
  /** This batch's processing time, in ms, instead of the fixture's `processingDelayMs`. */
  processingDelayMs: z.number().int().min(0).optional(),
});

/** Signed webhook delivery (docs/sandbox.md "Accounting webhooks"). */
const WebhooksFixtureSchema = z.object({
  /** Delay of each delivery attempt after the status change; its length is the number of attempts. */
  retryScheduleMs: z.array(z.number().int().min(0)).min(1).default([0, 5_000, 30_000, 300_000, 1_800_000]),
  /** An attempt without an answer in this time has failed. */
  timeoutMs: z.number().int().min(1).default(10_000),
  /** callback-out-of-order faults: the longest a delivery is held waiting for a later one of the same bill payment. */
  outOfOrderHoldMs: z.number().int().min(0).default(5_000),
});

function duplicates(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
}

export const AccountingFixtureSchema = z
  .object({
    /** How long processing a sync batch takes, in ms (pending → syncing at once, → synced/failed after this). */
    processingDelayMs: z.number().int().min(0).default(250),
    /** Sign path plus query string instead of the bare path (A11). */
    signQuery: z.boolean().default(false),
    applications: z.array(AccountingApplicationSchema).min(1),
    billPayments: z.array(FixtureBillPaymentSchema).default([]),
    syncBatches: z.array(FixtureSyncBatchSchema).default([]),
    webhooks: WebhooksFixtureSchema.prefault({}),
  })
  .superRefine((fixture, ctx) => {
    const companyIds = fixture.applications.flatMap((a) => a.companies.map((c) => c.id));
    const checks: Array<[string, string[]]> = [
      ['applications', duplicates(fixture.applications.map((a) => a.id))],
      ['applications.apiKeys', duplicates(fixture.applications.flatMap((a) => a.apiKeys))],
      ['applications.companies', duplicates(companyIds)],
      ['billPayments', duplicates(fixture.billPayments.map((b) => b.id))],
      ['syncBatches', duplicates(fixture.syncBatches.map((s) => s.id))],
    ];
    for (const [path, dup] of checks) {
      // Ids only, never key values: an API key is a secret even in a fixture error.
      if (dup.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: path.split('.'),
          message: path.endsWith('apiKeys') ? 'duplicate API key' : `duplicate id ${dup[0]}`,
        });
      }
    }
    const known = new Set(companyIds);
    const companyOfPayment = new Map(fixture.billPayments.map((b) => [b.id, b.companyId]));
    fixture.billPayments.forEach((b, i) => {
      if (!known.has(b.companyId)) {
        ctx.addIssue({
          code: 'custom',
          path: ['billPayments', i, 'companyId'],
          message: `unknown company ${b.companyId}`,
        });
      }
    });
    const batchOfPayment = new Map<string, string>();
    fixture.syncBatches.forEach((s, i) => {
      if (!known.has(s.companyId)) {
        ctx.addIssue({
          code: 'custom',
          path: ['syncBatches', i, 'companyId'],
          message: `unknown company ${s.companyId}`,
        });
      }
      s.billPaymentIds.forEach((id, j) => {
        if (companyOfPayment.get(id) !== s.companyId) {
          ctx.addIssue({
            code: 'custom',
            path: ['syncBatches', i, 'billPaymentIds', j],
            message: `bill payment ${id} is not a bill payment of company ${s.companyId}`,
          });
        }
        // A bill payment shows one `syncBatchId` (A18), so it can be in one batch only.
        const other = batchOfPayment.get(id);
        if (other !== undefined && other !== s.id) {
          ctx.addIssue({
            code: 'custom',
            path: ['syncBatches', i, 'billPaymentIds', j],
            message: `bill payment ${id} is already in sync batch ${other}`,
          });
        }
        batchOfPayment.set(id, s.id);
      });
      s.failures.forEach((f, j) => {
        if (!s.billPaymentIds.includes(f.billPaymentId)) {
          ctx.addIssue({
            code: 'custom',
            path: ['syncBatches', i, 'failures', j, 'billPaymentId'],
            message: `bill payment ${f.billPaymentId} is not in sync batch ${s.id}`,
          });
        }
      });
    });
  });

export type AccountingFixture = z.output<typeof AccountingFixtureSchema>;
export type AccountingFixtureInput = z.input<typeof AccountingFixtureSchema>;
export type AccountingApplication = AccountingFixture['applications'][number];
export type FixtureBillPayment = AccountingFixture['billPayments'][number];
export type FixtureSyncBatch = AccountingFixture['syncBatches'][number];
export type WebhooksFixture = AccountingFixture['webhooks'];
export type PaymentMethod = (typeof PAYMENT_METHOD_VALUES)[number];
export type SyncStatus = (typeof SYNC_STATUS_VALUES)[number];

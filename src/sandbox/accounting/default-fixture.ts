import {
  AccountingFixtureSchema,
  PAYMENT_METHOD_VALUES,
  type AccountingFixture,
  type AccountingFixtureInput,
  type SyncStatus,
} from './fixture.js';

/**
 * Demo data for the accounting sandbox. The credentials below are sandbox-only demo values, published on
 * purpose (README, tests); they are in the development forms and unlock nothing outside the sandbox.
 */
const DEMO_ACCOUNTING_APPLICATION_ID = 'app_demo';
export const DEMO_ACCOUNTING_API_KEY = 'sk_development_demo_key_0000000000000001';
export const DEMO_ACCOUNTING_CLIENT_SECRET = 'cs_demo_client_secret_000000000001';
export const DEMO_ACCOUNTING_CLIENT_ID = 'client_demo_0001';
export const DEMO_ACCOUNTING_WEBHOOK_SECRET = 'whsec_development_YWNjb3VudGluZy1zYW5kYm94LWRlbW8td2ViaG9vayE=';
export const DEMO_COMPANY_IDS = ['cmp_demo_nairobi', 'cmp_demo_mombasa'] as const;

/** A second application, so "another application's company" (403) can be shown with the default data. */
const OTHER_ACCOUNTING_API_KEY = 'sk_development_other_key_000000000001';
export const OTHER_ACCOUNTING_CLIENT_SECRET = 'cs_other_client_secret_00000000001';
export const OTHER_COMPANY_ID = 'cmp_other_kisumu';
/** The key of an application switched off, refused with 401. */
export const INACTIVE_ACCOUNTING_API_KEY = 'sk_development_inactive_key_00000000001';

const SUPPLIERS = [
  { id: 'sup_001', name: 'Kibo Office Supplies' },
  { id: 'sup_002', name: 'Rift Valley Logistics' },
  { id: 'sup_003', name: 'Lakeside Power Ltd' },
  { id: 'sup_004', name: 'Savannah Print House' },
  { id: 'sup_005', name: 'Coastline Water Co' },
];
const ACCOUNTS = [
  { id: 'acc_bank_main', name: 'Equity Bank Current' },
  { id: 'acc_cash', name: 'Petty Cash' },
  { id: 'acc_card', name: 'Company Card' },
];
// Mostly synced history with a sprinkling of every other state, so each status filter has hits.
const STATUS_CYCLE: SyncStatus[] = ['synced', 'synced', 'failed', 'pending', 'syncing', 'synced', 'pending'];

const DAY_MS = 86_400_000;

/** Pending bill payments that the default sync batches pick up. */
const BATCHED: Record<string, string[]> = {
  cmp_demo_nairobi: ['bp_nbo_013', 'bp_nbo_014', 'bp_nbo_015'],
  cmp_demo_mombasa: ['bp_mba_013', 'bp_mba_014'],
};

function billPayments(companyId: string, code: string, count: number, firstDay: string, dayOffset: number) {
  const start = Date.parse(`${firstDay}T00:00:00Z`);
  return Array.from({ length: count }, (_, index) => {
    const n = index + 1;
    const id = `bp_${code}_${String(n).padStart(3, '0')}`;
    const supplier = SUPPLIERS[(n + dayOffset) % SUPPLIERS.length]!;
    const method = PAYMENT_METHOD_VALUES[(n * 3 + dayOffset) % PAYMENT_METHOD_VALUES.length]!;
    const account = method === 'cash' ? ACCOUNTS[1]! : method === 'credit_card' ? ACCOUNTS[2]! : ACCOUNTS[0]!;
    // Distinct, irregular amounts (no two equal) so amount sorting is unambiguous.
    const totalAmount = Math.round(((n * 7_919 + dayOffset * 1_013) % 2_500_00) + 1_250 + n * 37) / 100;
    const paymentDay = start + ((n * 11 + dayOffset) % 180) * DAY_MS;
    const date = new Date(paymentDay).toISOString().slice(0, 10);
    const createdAt = new Date(paymentDay + 9 * 3_600_000 + n * 60_000).toISOString();
    const updatedAt = new Date(paymentDay + (n % 4) * DAY_MS + 15 * 3_600_000 + n * 60_000).toISOString();
    const billId = `bill_${code}_${String(n).padStart(3, '0')}`;
    const status: SyncStatus = BATCHED[companyId]?.includes(id) ? 'pending' : STATUS_CYCLE[n % STATUS_CYCLE.length]!;
    return {
      id,
      companyId,
      supplierRef: supplier,
      accountRef: account,
      paymentMethodRef: { id: `pm_${method}`, name: method.replace('_', ' ') },
      billRef: { id: billId, billCode: `BILL-${code.toUpperCase()}-${1000 + n}` },
      totalAmount,
      currency: 'KES',
      currencyRate: 1,
      date,
      billPaymentCode: `BP-${code.toUpperCase()}-${2000 + n}`,
      note: `Payment ${n} to ${supplier.name}`,
      lines: [{ amount: totalAmount, allocatedOnDate: date, reference: `INV-${billId}`, links: [{ billId, amount: totalAmount }] }],
      createdAt,
      updatedAt,
      paymentMethod: method,
      status,
    };
  });
}

const defaultInput: AccountingFixtureInput = {
  processingDelayMs: 250,
  signQuery: false,
  applications: [
    {
      id: DEMO_ACCOUNTING_APPLICATION_ID,
      name: 'Demo Retail Ltd',
      clientId: DEMO_ACCOUNTING_CLIENT_ID,
      apiKeys: [DEMO_ACCOUNTING_API_KEY],
      clientSecrets: [DEMO_ACCOUNTING_CLIENT_SECRET],
      webhookSecret: DEMO_ACCOUNTING_WEBHOOK_SECRET,
      active: true,
      companies: [
        { id: 'cmp_demo_nairobi', name: 'Demo Retail Nairobi' },
        { id: 'cmp_demo_mombasa', name: 'Demo Retail Mombasa' },
      ],
    },
    {
      id: 'app_other',
      name: 'Other Traders Ltd',
      clientId: 'client_other_0001',
      apiKeys: [OTHER_ACCOUNTING_API_KEY],
      clientSecrets: [OTHER_ACCOUNTING_CLIENT_SECRET],
      active: true,
      companies: [{ id: OTHER_COMPANY_ID, name: 'Other Traders Kisumu' }],
    },
    {
      id: 'app_inactive',
      name: 'Dormant Ltd',
      clientId: 'client_inactive_0001',
      apiKeys: [INACTIVE_ACCOUNTING_API_KEY],
      active: false,
      companies: [{ id: 'cmp_inactive', name: 'Dormant Ltd' }],
    },
  ],
  billPayments: [
    ...billPayments('cmp_demo_nairobi', 'nbo', 16, '2025-01-02', 0),
    ...billPayments('cmp_demo_mombasa', 'mba', 14, '2025-01-06', 3),
    ...billPayments(OTHER_COMPANY_ID, 'ksm', 3, '2025-02-01', 1),
  ],
  syncBatches: [
    { id: 'sb_nbo_pending', companyId: 'cmp_demo_nairobi', billPaymentIds: BATCHED.cmp_demo_nairobi!, status: 'pending', outcome: 'synced' },
    { id: 'sb_mba_pending', companyId: 'cmp_demo_mombasa', billPaymentIds: BATCHED.cmp_demo_mombasa!, status: 'pending', outcome: 'failed' },
    { id: 'sb_nbo_done', companyId: 'cmp_demo_nairobi', billPaymentIds: ['bp_nbo_001', 'bp_nbo_005'], status: 'completed', outcome: 'synced' },
    { id: 'sb_other_pending', companyId: OTHER_COMPANY_ID, billPaymentIds: ['bp_ksm_001'], status: 'pending', outcome: 'synced' },
  ],
};

/** Parsed once, so a mistake in the demo data fails loudly at import rather than at first use. */
export const defaultAccountingFixture: AccountingFixture = AccountingFixtureSchema.parse(defaultInput);

import {
  AccountingFixtureSchema,
  PAYMENT_METHOD_VALUES,
  type AccountingFixture,
  type AccountingFixtureInput,
  type SyncStatus,
} from './fixture.js';
import { DEMO } from '../default-fixture.js';

/**
 * Demo data for the accounting sandbox. The credentials below are sandbox-only demo values, published on
 * purpose (README, tests); they are in the development forms and unlock nothing outside the sandbox.
 */
export const DEMO_ACCOUNTING_APPLICATION_ID = 'app_demo';
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
      lines: [
        {
          amount: totalAmount,
          allocatedOnDate: date,
          reference: `INV-${billId}`,
          links: [{ billId, amount: totalAmount }],
        },
      ],
      createdAt,
      updatedAt,
      paymentMethod: method,
      status,
    };
  });
}

/** The demo's reconciliation link: the Nairobi business's supplier invoices are paid from the Nairobi books. */
export const DEMO_RECONCILIATION_LINK = { businessId: DEMO.businesses.nairobi, companyId: 'cmp_demo_nairobi' } as const;

/**
 * Payments of the Nairobi books against the Nairobi business's supplier invoices (INV-2400 onwards, in
 * sandbox/default-fixture.ts), one for each case `npm run reconcile -- biz_demo_nairobi` sorts.
 */
const RECONCILIATION_CASES = [
  // Matched: the invoice number is the bill code (pur_nbo_001, INV-2400, 6,200.00).
  {
    id: 'bp_nbo_rec_01',
    supplier: 'Kibo Wholesalers Ltd',
    billCode: 'INV-2400',
    reference: 'June stock',
    amount: 6_200,
    date: '2025-07-04',
  },
  // Matched: the books' own bill code; a line names the invoice, written another way (pur_nbo_004, INV-2403).
  {
    id: 'bp_nbo_rec_02',
    supplier: 'Lakeside Dairies',
    billCode: 'LD-BILL-0093',
    reference: 'inv 2403 (Lakeside)',
    amount: 12_400,
    date: '2025-07-08',
  },
  // Part payments adding up to pur_nbo_006 (INV-2405, 34,360.00): a deposit by bill code, the balance by line reference.
  {
    id: 'bp_nbo_rec_03',
    supplier: 'Kibo Wholesalers Ltd',
    billCode: 'inv-2405',
    reference: 'Deposit',
    amount: 20_000,
    date: '2025-06-30',
  },
  {
    id: 'bp_nbo_rec_04',
    supplier: 'Kibo Wholesalers Ltd',
    billCode: 'KW-BAL-0715',
    reference: 'INV 2405 balance',
    amount: 14_360,
    date: '2025-07-15',
  },
  // Amount mismatch: pur_nbo_007 (INV-2406) is 16,200.00; the books paid 16,020.00.
  {
    id: 'bp_nbo_rec_05',
    supplier: 'Rift Valley Millers',
    billCode: 'INV2406',
    reference: 'Maize flour',
    amount: 16_020,
    date: '2025-07-01',
  },
  // Pays an invoice the tax authority does not hold (INV-2499).
  {
    id: 'bp_nbo_rec_06',
    supplier: 'Coast Packaging Co',
    billCode: 'INV-2499',
    reference: 'Cartons',
    amount: 7_350,
    date: '2025-06-20',
  },
  // Suggested: no reference, the supplier spelled another way (pur_nbo_016, Kibo Wholesalers Ltd, 24,800.00, 2025-06-09).
  {
    id: 'bp_nbo_rec_07',
    supplier: 'KIBO WHOLESALERS LIMITED',
    billCode: 'KW-JUNE-B',
    reference: 'Sugar delivery',
    amount: 24_800,
    date: '2025-06-19',
  },
  // A tie: two payments without a reference both fit pur_nbo_025 (Savanna Gas Distributors, 2,250.00, 2025-05-25).
  {
    id: 'bp_nbo_rec_08',
    supplier: 'Savanna Gas Distributors',
    billCode: 'SGD-0527',
    reference: 'Gas refill',
    amount: 2_250,
    date: '2025-05-27',
  },
  {
    id: 'bp_nbo_rec_09',
    supplier: 'Savanna Gas Distributors',
    billCode: 'SGD-0603',
    reference: 'Gas refill',
    amount: 2_250,
    date: '2025-06-03',
  },
];

function reconciliationPayments() {
  return RECONCILIATION_CASES.map((c, index) => {
    const billId = `bill_${c.id.slice(3)}`;
    const createdAt = new Date(Date.parse(`${c.date}T10:00:00Z`) + index * 60_000).toISOString();
    return {
      id: c.id,
      companyId: DEMO_RECONCILIATION_LINK.companyId,
      supplierRef: { id: `sup_${c.supplier.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`, name: c.supplier },
      accountRef: ACCOUNTS[0]!,
      paymentMethodRef: { id: 'pm_bank_transfer', name: 'bank transfer' },
      billRef: { id: billId, billCode: c.billCode },
      totalAmount: c.amount,
      currency: 'KES',
      currencyRate: 1,
      date: c.date,
      billPaymentCode: `BP-NBO-REC-${String(index + 1).padStart(2, '0')}`,
      note: `Payment to ${c.supplier}`,
      lines: [
        { amount: c.amount, allocatedOnDate: c.date, reference: c.reference, links: [{ billId, amount: c.amount }] },
      ],
      createdAt,
      updatedAt: new Date(Date.parse(createdAt) + 2 * 3_600_000).toISOString(),
      paymentMethod: 'bank_transfer' as const,
      status: 'synced' as const,
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
    ...reconciliationPayments(),
  ],
  syncBatches: [
    {
      id: 'sb_nbo_pending',
      companyId: 'cmp_demo_nairobi',
      billPaymentIds: BATCHED.cmp_demo_nairobi!,
      status: 'pending',
      outcome: 'synced',
    },
    {
      id: 'sb_mba_pending',
      companyId: 'cmp_demo_mombasa',
      billPaymentIds: BATCHED.cmp_demo_mombasa!,
      status: 'pending',
      outcome: 'failed',
      failureReason: 'The payment account is closed in the accounting system',
    },
    {
      id: 'sb_nbo_done',
      companyId: 'cmp_demo_nairobi',
      billPaymentIds: ['bp_nbo_001', 'bp_nbo_005'],
      status: 'completed',
      outcome: 'synced',
    },
    {
      id: 'sb_other_pending',
      companyId: OTHER_COMPANY_ID,
      billPaymentIds: ['bp_ksm_001'],
      status: 'pending',
      outcome: 'synced',
    },
    // One bill payment fails its first run with a reason and syncs when processed again (an operator's reprocess).
    {
      id: 'sb_nbo_vendor_mapping',
      companyId: 'cmp_demo_nairobi',
      billPaymentIds: ['bp_nbo_003', 'bp_nbo_006'],
      status: 'pending',
      failures: [
        {
          billPaymentId: 'bp_nbo_006',
          reason: 'Supplier is not mapped to a vendor in the accounting system',
          times: 1,
        },
      ],
    },
  ],
};

/** Parsed once, so a mistake in the demo data fails loudly at import rather than at first use. */
export const defaultAccountingFixture: AccountingFixture = AccountingFixtureSchema.parse(defaultInput);

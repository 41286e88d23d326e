import {
  ComplianceFixtureSchema,
  SCOPE_VALUES,
  type ComplianceFixture,
  type ComplianceFixtureInput,
  type ItemFixtureInput,
  type PurchaseFixtureInput,
  type TaxType,
} from './compliance/fixture-schema.js';
import { exactLine, mappedLine, purchaseLines, unknownLine, type SupplierLine } from './compliance/supplier-lines.js';

/**
 * The demo world `npm run sandbox` starts with, and the base the tests adjust. Every key here is a
 * sandbox-only demo value, published on purpose (README, tests); none unlocks anything real. The live
 * key is written so no long alphanumeric run follows its prefix, which keeps secret scanners quiet.
 */
export const DEMO = {
  applications: { retail: 'app_demo_retail', other: 'app_demo_other', suspended: 'app_demo_suspended' },
  keys: {
    /** Organisation-wide, all six scopes: must send businessId. */
    orgWide: 'cmp_sk_test_demo_org_wide_0001',
    /** Bound to the Nairobi business, all six scopes. */
    nairobi: 'cmp_sk_test_demo_nairobi_0001',
    /** Bound to the Nairobi business, sales:read only. */
    readOnly: 'cmp_sk_test_demo_read_only_0001',
    /** Bound to the Mombasa business, all six scopes. */
    mombasa: 'cmp_sk_test_demo_mombasa_0001',
    /** Live, organisation-wide: acts for the production business only. */
    live: 'cmp_sk_live_demo_key_prod_0001',
    /** Organisation-wide key of a second application (its own rate-limit window, 60 per minute). */
    otherApplication: 'cmp_sk_test_demo_other_app_0001',
    /** Key of a suspended application: 401. */
    suspended: 'cmp_sk_test_demo_suspended_0001',
    /** Revoked: 401. */
    revoked: 'cmp_sk_test_demo_revoked_0001',
    /** Expired on 2024-01-01: 401. */
    expired: 'cmp_sk_test_demo_expired_0001',
  },
  businesses: {
    nairobi: 'biz_demo_nairobi',
    mombasa: 'biz_demo_mombasa',
    /** environment production: only the live key acts for it. */
    production: 'biz_demo_production',
    /** Belongs to the other application. */
    kisumu: 'biz_other_kisumu',
  },
  branches: {
    nairobiCbd: 'br_nairobi_cbd',
    nairobiWestlands: 'br_nairobi_westlands',
    mombasaNyali: 'br_mombasa_nyali',
    mombasaOldTown: 'br_mombasa_old_town',
    productionMain: 'br_prod_main',
    productionDepot: 'br_prod_depot',
    kisumuMain: 'br_kisumu_main',
    kisumuKondele: 'br_kisumu_kondele',
  },
  /** Nairobi items unless named otherwise. */
  items: {
    milk: 'itm_milk_500ml', // A, registered
    sugar: 'itm_sugar_2kg', // B, registered
    cookingOil: 'itm_cooking_oil_1l', // B, registered
    maizeSeed: 'itm_maize_seed_2kg', // C, registered
    giftVoucher: 'itm_gift_voucher_1000', // D, registered, not stock tracked
    lpgRefill: 'itm_lpg_refill_6kg', // E, registered
    bathSoap: 'itm_bath_soap', // B, PENDING, lacks nothing: registers at once
    spiceMix: 'itm_spice_mix', // B, PENDING, needs a classification mapping
    beefSamosa: 'itm_beef_samosa', // B, PENDING, needs a product type
    mombasaWater: 'itm_msa_bottled_water', // Mombasa, B, registered
    mombasaMandazi: 'itm_msa_mandazi', // Mombasa, B, PENDING
    mombasaFish: 'itm_msa_fish_fillet', // Mombasa, A, registered
    productionTea: 'itm_prod_tea_leaves', // production business, B, registered
    kisumuRice: 'itm_ksm_rice_5kg', // other application, B, registered
  },
  /** Trader invoice number prefixes the demo authority rules react to. */
  invoicePrefixes: {
    /** 202 pending, completes after authority.asyncDelayMs. */
    async: 'ASYNC-',
    /** 202 pending, fails after asyncDelayMs with authority_unavailable. */
    asyncFail: 'ASYNCFAIL-',
    /** 422 authority_rejected (cause authority_rejected) on every submission. */
    reject: 'REJECT-',
    /** 422 with cause authority_unavailable on the document's first submission; a retry succeeds. */
    flaky: 'FLAKY-',
    /** Accepted after the authority takes 2 s (the request is held meanwhile). */
    slow: 'SLOW-',
  },
  /** A customer PIN the demo authority refuses (invalid_customer_pin). */
  invalidCustomerPin: 'P000000000X',
  /** Rule ids of the demo authority. */
  rules: {
    async: 'demo-async',
    asyncFail: 'demo-async-fail',
    reject: 'demo-reject',
    flaky: 'demo-flaky',
    slow: 'demo-slow',
    invalidPin: 'demo-invalid-customer-pin',
  },
} as const;

const ALL_SCOPES = [...SCOPE_VALUES];
const { businesses: B, branches: BR, items: I, keys: K, applications: APP } = DEMO;

const SUPPLIERS = [
  { name: 'Kibo Wholesalers Ltd', pin: 'P051100001A' },
  { name: 'Rift Valley Millers', pin: 'P051100002B' },
  { name: 'Coast Packaging Co', pin: 'P051100003C' },
  { name: 'Lakeside Dairies', pin: 'P051100004D' },
  { name: 'Savanna Gas Distributors', pin: 'P051100005E' },
];
const PURCHASE_LINES = [
  { description: 'Sugar 50kg bag', hsCode: '1701.99', unitPrice: 6_200, taxRate: 16 },
  { description: 'Cooking oil 20L jerrycan', hsCode: '1511.90', unitPrice: 5_400, taxRate: 16 },
  { description: 'Fresh milk crate (24 x 500ml)', hsCode: '0401.20', unitPrice: 1_440, taxRate: 0 },
  { description: 'LPG 13kg cylinder refill', hsCode: '2711.12', unitPrice: 3_100, taxRate: 8 },
  { description: 'Carton boxes (bundle of 50)', hsCode: null, unitPrice: 2_250, taxRate: 16 },
];
const STATUS_CYCLE = ['confirmed', 'pending_review', 'pulled', 'confirmed', 'rejected', 'pending_review'] as const;

function isoDay(daysBefore: number, from = Date.UTC(2025, 5, 30)): string {
  return new Date(from - daysBefore * 86_400_000).toISOString().slice(0, 10);
}

/** Deterministic supplier invoices: varied statuses, dates, suppliers and lines; some share a date. */
function demoPurchases(prefix: string, count: number, branchIds: readonly [string, string], pendingPull: number) {
  return Array.from({ length: count + pendingPull }, (_, n) => {
    const held = n >= count;
    const status = held ? 'pulled' : STATUS_CYCLE[n % STATUS_CYCLE.length]!;
    const lineCount = 1 + (n % 3);
    return {
      id: `${prefix}_${String(n + 1).padStart(3, '0')}`,
      status,
      supplier: SUPPLIERS[n % SUPPLIERS.length]!,
      supplierInvoiceNumber: `INV-${2400 + n}`,
      // Two invoices every third day (so the id breaks ties); the held-back ones are the newest.
      invoiceDate: held ? isoDay(-(n - count + 1)) : isoDay(Math.floor(n / 2) * 3),
      branchId: branchIds[n % 2]!,
      lines: Array.from({ length: lineCount }, (_, l) => ({
        ...PURCHASE_LINES[(n + l) % PURCHASE_LINES.length]!,
        quantity: 1 + ((n + l) % 4),
      })),
      confirmationError: status === 'rejected' ? 'Quantities differ from the delivery note' : null,
      pendingPull: held,
    };
  });
}

/** The demo business's supplier invoice that only its second pull fetches, dated two months back. */
export const DEMO_LATE_PURCHASE_ID = 'pur_nbo_late_001';

/** Reviews done on the dashboard between the demo business's pulls: the sync passes each change on once. */
const NAIROBI_REVIEWS: Record<
  string,
  Array<{ atPull: number; status: 'pending_review' | 'confirmed' | 'rejected'; confirmationError: string | null }>
> = {
  pur_nbo_003: [
    { atPull: 2, status: 'pending_review', confirmationError: null },
    { atPull: 3, status: 'confirmed', confirmationError: null },
  ],
  pur_nbo_002: [{ atPull: 2, status: 'rejected', confirmationError: 'Supplier PIN does not match the delivery note' }],
};

const PENDING = { registrationStatus: 'PENDING' } as const;

/** A registered finished product (type 2) in pieces unless `more` says otherwise. */
function item(
  id: string,
  externalId: string,
  name: string,
  taxTypeCode: TaxType,
  unitPrice: number,
  classificationCode: string,
  more: Partial<ItemFixtureInput> = {},
): ItemFixtureInput {
  const sku = externalId.replace(/^SKU-/, '');
  return {
    ...{ id, externalId, name, sku, taxTypeCode, unitPrice, classificationCode },
    productTypeCode: '2',
    registrationStatus: 'REGISTERED',
    ...more,
  };
}

const NAIROBI_ITEMS: ItemFixtureInput[] = [
  item(I.milk, 'SKU-MILK-500', 'Fresh milk 500ml', 'A', 65, '5010150100', { packagingUnitCode: 'BT' }),
  item(I.sugar, 'SKU-SUGAR-2KG', 'Sugar 2kg', 'B', 250, '5016150100', { packagingUnitCode: 'BG' }),
  item(I.cookingOil, 'SKU-OIL-1L', 'Cooking oil 1L', 'B', 389.99, '5015150100', {
    unitCode: 'L',
    packagingUnitCode: 'BT',
  }),
  item(I.maizeSeed, 'SKU-SEED-2KG', 'Maize seed 2kg', 'C', 520, '1011150000', {
    productTypeCode: '1',
    unitCode: 'KG',
    packagingUnitCode: 'BG',
  }),
  item(I.giftVoucher, 'SKU-VOUCHER-1000', 'Gift voucher KES 1,000', 'D', 1000, '8414160000', {
    productTypeCode: '3',
    stockTracked: false,
  }),
  item(I.lpgRefill, 'SKU-LPG-6KG', 'LPG refill 6kg', 'E', 1250, '1511150000'),
  item(I.bathSoap, 'SKU-SOAP-175', 'Bath soap 175g', 'B', 120, '5310270000', PENDING),
  item(I.spiceMix, 'SKU-SPICE-100', 'Pilau spice mix 100g', 'B', 85, '5017190000', {
    ...PENDING,
    needs: { productType: false, classificationMapping: true },
  }),
  item(I.beefSamosa, 'SKU-SAMOSA', 'Beef samosa', 'B', 60, '5019210000', { ...PENDING, productTypeCode: null }),
];

/** A supplier whose invoices exercise stock that comes in: the lines below are what a stock-in meets. */
const STOCK_IN_SUPPLIER = { name: 'Maziwa Bora Distributors Ltd', pin: 'P051234567X' };

/**
 * One delivery of that supplier: two lines named as the items are (in its own spelling), a carton of 24 of milk sold
 * by the piece that only a mapping reads, and a fee. The same wording on every delivery, so a mapping learned on
 * one settles the next.
 */
function stockInDelivery(quantities: { sugar: number; oil: number; milkCartons: number }): SupplierLine[] {
  return [
    exactLine(NAIROBI_ITEMS, I.sugar, { quantity: quantities.sugar, itemCode: 'MB-SUG-2KG' }),
    exactLine(NAIROBI_ITEMS, I.cookingOil, { quantity: quantities.oil, itemCode: 'MB-OIL-1L' }),
    mappedLine(NAIROBI_ITEMS, I.milk, {
      quantity: quantities.milkCartons,
      description: 'CTN 24x500ML MILK',
      itemCode: 'MB-MLK-CTN24',
    }),
    unknownLine(NAIROBI_ITEMS, { description: 'Delivery charge', unitPrice: 350 }),
  ];
}

/** The Nairobi business's supplier invoices for the stock-in, awaiting review; each line says what it should become. */
export const DEMO_STOCK_IN = {
  supplier: STOCK_IN_SUPPLIER,
  invoices: [
    {
      id: 'pur_nbo_in_1',
      supplierInvoiceNumber: 'MB-1041',
      invoiceDate: isoDay(3),
      branchId: BR.nairobiCbd,
      lines: stockInDelivery({ sugar: 10, oil: 6, milkCartons: 2 }),
    },
    {
      id: 'pur_nbo_in_2',
      supplierInvoiceNumber: 'MB-1057',
      invoiceDate: isoDay(1),
      branchId: BR.nairobiWestlands,
      lines: stockInDelivery({ sugar: 4, oil: 12, milkCartons: 1 }),
    },
  ],
} as const;

function stockInPurchases(): PurchaseFixtureInput[] {
  return DEMO_STOCK_IN.invoices.map(({ lines, ...invoice }) => ({
    ...invoice,
    status: 'pending_review',
    supplier: { ...STOCK_IN_SUPPLIER },
    lines: purchaseLines(lines),
    confirmationError: null,
    // Fetched by the first pull, as the held-back demo invoices are. Named although it is the default: worlds
    // without the demo's timeline (its arrivesAtPull invoices) leave these out and keep their counts.
    pendingPull: true,
    arrivesAtPull: 1,
  }));
}

export const defaultComplianceFixtureInput: ComplianceFixtureInput = {
  rateLimitWindowMs: 60_000,
  applications: [
    { id: APP.retail, name: 'Demo Retail POS', requestsPerMinute: 120 },
    { id: APP.other, name: 'Other Integrator', requestsPerMinute: 60 },
    { id: APP.suspended, name: 'Suspended Integrator', suspended: true },
  ],
  apiKeys: [
    { id: 'key_demo_org_wide', key: K.orgWide, applicationId: APP.retail, scopes: ALL_SCOPES },
    { id: 'key_demo_nairobi', key: K.nairobi, applicationId: APP.retail, scopes: ALL_SCOPES, businessId: B.nairobi },
    {
      id: 'key_demo_read_only',
      key: K.readOnly,
      applicationId: APP.retail,
      scopes: ['sales:read'],
      businessId: B.nairobi,
    },
    { id: 'key_demo_mombasa', key: K.mombasa, applicationId: APP.retail, scopes: ALL_SCOPES, businessId: B.mombasa },
    { id: 'key_demo_live', key: K.live, applicationId: APP.retail, scopes: ALL_SCOPES },
    { id: 'key_demo_other_app', key: K.otherApplication, applicationId: APP.other, scopes: ALL_SCOPES },
    { id: 'key_demo_suspended', key: K.suspended, applicationId: APP.suspended, scopes: ALL_SCOPES },
    { id: 'key_demo_revoked', key: K.revoked, applicationId: APP.retail, scopes: ALL_SCOPES, revoked: true },
    {
      id: 'key_demo_expired',
      key: K.expired,
      applicationId: APP.retail,
      scopes: ALL_SCOPES,
      expiresAt: '2024-01-01T00:00:00Z',
    },
  ],
  businesses: [
    {
      id: B.nairobi,
      name: 'Demo Duka Nairobi Ltd',
      pin: 'P051234567A',
      environment: 'sandbox',
      applicationId: APP.retail,
      branches: [
        { id: BR.nairobiCbd, name: 'Nairobi CBD', authorityBhfId: '00' },
        { id: BR.nairobiWestlands, name: 'Westlands', authorityBhfId: '01' },
      ],
      items: NAIROBI_ITEMS,
      stock: [
        { itemId: I.milk, branchId: BR.nairobiCbd, quantity: 120 },
        { itemId: I.milk, branchId: BR.nairobiWestlands, quantity: 40 },
        { itemId: I.sugar, branchId: BR.nairobiCbd, quantity: 80 },
        { itemId: I.sugar, branchId: BR.nairobiWestlands, quantity: 30 },
        { itemId: I.cookingOil, branchId: BR.nairobiCbd, quantity: 60 },
        { itemId: I.maizeSeed, branchId: BR.nairobiCbd, quantity: 25 },
        { itemId: I.lpgRefill, branchId: BR.nairobiCbd, quantity: 15 },
        { itemId: I.lpgRefill, branchId: BR.nairobiWestlands, quantity: 6 },
        { itemId: I.bathSoap, branchId: BR.nairobiCbd, quantity: 200 },
      ],
      purchases: [
        ...demoPurchases('pur_nbo', 45, [BR.nairobiCbd, BR.nairobiWestlands], 3).map((p) => ({
          ...p,
          reviews: NAIROBI_REVIEWS[p.id] ?? [],
        })),
        // Fetched only by the second pull, dated two months back: a sync that trusted invoice dates would miss it.
        {
          id: DEMO_LATE_PURCHASE_ID,
          status: 'pulled' as const,
          supplier: SUPPLIERS[1]!,
          supplierInvoiceNumber: 'INV-2290',
          invoiceDate: isoDay(60),
          branchId: BR.nairobiCbd,
          lines: [{ ...PURCHASE_LINES[0]!, quantity: 2 }],
          confirmationError: null,
          pendingPull: true,
          arrivesAtPull: 2,
        },
        ...stockInPurchases(),
      ],
    },
    {
      id: B.mombasa,
      name: 'Demo Duka Mombasa Ltd',
      pin: 'P051234568B',
      environment: 'sandbox',
      applicationId: APP.retail,
      branches: [
        { id: BR.mombasaNyali, name: 'Nyali', authorityBhfId: '00' },
        { id: BR.mombasaOldTown, name: 'Old Town', authorityBhfId: '01' },
      ],
      items: [
        item(I.mombasaWater, 'SKU-WATER-1L', 'Bottled water 1L', 'B', 50, '5020230000'),
        item(I.mombasaMandazi, 'SKU-MANDAZI', 'Mandazi', 'B', 20, '5022110000', PENDING),
        item(I.mombasaFish, 'SKU-FISH-1KG', 'Fish fillet 1kg', 'A', 780, '5010150100', {
          productTypeCode: '1',
          unitCode: 'KG',
        }),
      ],
      stock: [
        { itemId: I.mombasaWater, branchId: BR.mombasaNyali, quantity: 300 },
        { itemId: I.mombasaFish, branchId: BR.mombasaOldTown, quantity: 12 },
      ],
      purchases: demoPurchases('pur_msa', 6, [BR.mombasaNyali, BR.mombasaOldTown], 2),
    },
    {
      id: B.production,
      name: 'Demo Duka Live Ltd',
      pin: 'P051234569C',
      environment: 'production',
      applicationId: APP.retail,
      branches: [
        { id: BR.productionMain, name: 'Main', authorityBhfId: '00' },
        { id: BR.productionDepot, name: 'Depot', authorityBhfId: '01' },
      ],
      items: [item(I.productionTea, 'SKU-TEA-500', 'Tea leaves 500g', 'B', 310, '5016150100')],
    },
    {
      id: B.kisumu,
      name: 'Other Integrator Kisumu',
      pin: 'P051234570D',
      environment: 'sandbox',
      applicationId: APP.other,
      branches: [
        { id: BR.kisumuMain, name: 'Kisumu Main', authorityBhfId: '00' },
        { id: BR.kisumuKondele, name: 'Kondele', authorityBhfId: '01' },
      ],
      items: [item(I.kisumuRice, 'SKU-RICE-5KG', 'Rice 5kg', 'B', 900, '5016150100')],
    },
  ],
  authority: {
    defaultOutcome: 'accept',
    asyncDelayMs: 1500,
    rules: [
      {
        id: DEMO.rules.asyncFail,
        match: { traderInvoiceNumber: '^ASYNCFAIL-' },
        outcome: 'async',
        asyncOutcome: 'failed',
        errorCode: 'authority_unavailable',
      },
      { id: DEMO.rules.async, match: { traderInvoiceNumber: '^ASYNC-' }, outcome: 'async', asyncOutcome: 'completed' },
      {
        id: DEMO.rules.reject,
        match: { traderInvoiceNumber: '^REJECT-' },
        outcome: 'reject',
        errorCode: 'authority_rejected',
      },
      {
        id: DEMO.rules.flaky,
        match: { traderInvoiceNumber: '^FLAKY-' },
        outcome: 'reject',
        errorCode: 'authority_unavailable',
        times: 1,
        timesPer: 'document',
      },
      { id: DEMO.rules.slow, match: { traderInvoiceNumber: '^SLOW-' }, outcome: 'accept', delayMs: 2000 },
      {
        id: DEMO.rules.invalidPin,
        match: { customerPin: '^P000000000' },
        outcome: 'reject',
        errorCode: 'invalid_customer_pin',
      },
    ],
  },
};

export const defaultComplianceFixture: ComplianceFixture = ComplianceFixtureSchema.parse(defaultComplianceFixtureInput);

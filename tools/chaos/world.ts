/**
 * The sandbox world of a chaos run: three compliance applications served by one fleet, each with its own budget.
 * Built on the demo world (its authority rules, items and two demo merchants), with:
 *
 * - `retail-group`: the demo retail application, its organisation-wide key serving two businesses (Nairobi and
 *   Mombasa), listed in the tenants file;
 * - `lakeside`: the demo's other application, its organisation-wide key serving its one business (Kisumu), not
 *   listed (the key's identity says which businesses it reaches);
 * - `highlands`: an application of its own with one business (Eldoret) and a key bound to that business.
 *
 * Plenty of stock, a few more items per business waiting for registration (so the register route sees traffic
 * under faults), short authority and callback delays, no supplier invoice but those the run adds, and one business
 * of each application taking them in as stock. The catalog is what the driver sells from and what the
 * checker knows about stock tracking and which application serves which business: its own knowledge, not the
 * worker's.
 */
import {
  SCOPE_VALUES,
  type ComplianceFixtureInput,
  type ItemFixtureInput,
} from '../../sandbox/compliance/fixture-schema.js';
import { DEMO, defaultComplianceFixtureInput } from '../../sandbox/default-fixture.js';
import { normalise } from '../../src/contracts/stock-in.js';

export interface CatalogItem {
  itemId: string;
  unitPrice: number;
  stockTracked: boolean;
}

export interface CatalogBusiness {
  businessId: string;
  /** The sandbox application the business belongs to (the one whose budget its requests spend). */
  applicationId: string;
  branchIds: string[];
  items: CatalogItem[];
  /** Takes supplier invoices in as stock (the tenants file's `stockIn`). */
  takesStockIn: boolean;
  /**
   * Items a supplier line may name for the stock-in to pick by name alone: registered (a movement of an item the
   * authority does not know yet is refused), stock tracked, and no other stock-tracked item of the business sharing
   * its normalised name.
   */
  incomingItems: Array<{ itemId: string; name: string }>;
}

/** A compliance application of the run, as the tenants file names it and as the sandbox holds it. */
export interface ChaosApplication {
  /** The tenants file's `application`: what the worker's logs and the run's report call it. */
  name: string;
  /** The sandbox's application id: what its request log and documents carry. */
  applicationId: string;
  /** The environment variable the tenants file names as the key's source, so no key is written to the file. */
  keyVariable: string;
  key: string;
  /** Organisation-wide (sends businessId) or bound to its one business. */
  keyKind: 'organisation-wide' | 'business-bound';
  /** Listed in the tenants file; undefined: the entry serves whatever its key reaches. */
  listedBusinesses: string[] | undefined;
  businesses: string[];
  /** Its limit on the sandbox and its budget in the tenants file: the same number. */
  requestsPerMinute: number;
}

/**
 * Requests per planned sale the budgets are sized for. A sale takes about 4 compliance requests under these faults
 * (filing, stock movements, reads, registrations, retries; measured: 236 for 60 sales), so the budgets leave about
 * four times what the sales need: real limits the fleet must keep, never the bottleneck of a correctness run.
 */
export const BUDGET_REQUESTS_PER_SALE = 16;
const MIN_TOTAL_REQUESTS_PER_MINUTE = 600;

/**
 * The three applications' budgets added up, from the plan's pace: sales per minute while they are being started,
 * times BUDGET_REQUESTS_PER_SALE. 1200 a minute for CI's 60 sales over 48 s, 6000 for 1000 sales over 160 s.
 */
export function totalBudgetFor(sales: number, startSpreadMs: number): number {
  const salesPerMinute = sales / (Math.max(1, startSpreadMs) / 60_000);
  return Math.max(MIN_TOTAL_REQUESTS_PER_MINUTE, Math.ceil(salesPerMinute * BUDGET_REQUESTS_PER_SALE));
}

const STOCK_PER_BRANCH = 1_000_000;
const EXTRA_PENDING_ITEMS = 4;

const HIGHLANDS = {
  applicationId: 'app_chaos_highlands',
  businessId: 'biz_chaos_eldoret',
  // Sandbox-only, like the demo's keys: it unlocks nothing but this run's sandbox.
  key: 'cmp_sk_test_chaos_highlands_eldoret_0001',
  branches: { town: 'br_eldoret_town', langas: 'br_eldoret_langas' },
} as const;

/**
 * Each application's share of the run's total budget. Unequal on purpose, so a check that mixed them up would show;
 * retail-group, with two businesses, gets the most.
 */
const BUDGET_SHARES = { 'retail-group': 0.5, lakeside: 0.25, highlands: 0.25 } as const;

/** Items added to each business: registered on first use, half of them stock tracked. */
function extraItems(prefix: string): ItemFixtureInput[] {
  return Array.from({ length: EXTRA_PENDING_ITEMS }, (_, i) => ({
    id: `itm_chaos_${prefix}_${i + 1}`,
    externalId: `CHAOS-${prefix.toUpperCase()}-${i + 1}`,
    name: `Chaos item ${prefix} ${i + 1}`,
    sku: `CHAOS-${prefix.toUpperCase()}-${i + 1}`,
    taxTypeCode: 'B',
    unitPrice: 100 + 10 * i,
    productTypeCode: '2',
    classificationCode: '5022110000',
    registrationStatus: 'PENDING',
    stockTracked: i % 2 === 0,
  }));
}

/** The third merchant's business: a few registered items, one of them not stock tracked. */
function highlandsBusiness(): NonNullable<ComplianceFixtureInput['businesses']>[number] {
  const registered = (
    id: string,
    name: string,
    taxTypeCode: 'A' | 'B' | 'D',
    unitPrice: number,
    more: Partial<ItemFixtureInput> = {},
  ): ItemFixtureInput => ({
    id,
    externalId: `SKU-${id.toUpperCase()}`,
    name,
    taxTypeCode,
    unitPrice,
    productTypeCode: '2',
    classificationCode: '5016150100',
    registrationStatus: 'REGISTERED',
    ...more,
  });
  return {
    id: HIGHLANDS.businessId,
    name: 'Highlands Hardware Eldoret Ltd',
    pin: 'P051234571E',
    environment: 'sandbox',
    applicationId: HIGHLANDS.applicationId,
    branches: [
      { id: HIGHLANDS.branches.town, name: 'Eldoret Town', authorityBhfId: '00' },
      { id: HIGHLANDS.branches.langas, name: 'Langas', authorityBhfId: '01' },
    ],
    items: [
      registered('itm_eld_cement_50kg', 'Cement 50kg', 'B', 780),
      registered('itm_eld_nails_1kg', 'Nails 1kg', 'B', 260),
      registered('itm_eld_maize_flour_2kg', 'Maize flour 2kg', 'A', 180),
      registered('itm_eld_delivery', 'Delivery service', 'D', 500, { productTypeCode: '3', stockTracked: false }),
    ],
  };
}

/**
 * One business of each application takes stock in; Mombasa does not, so the rule without incoming stock keeps a
 * business of its own beside one with it in the same application.
 */
const BUSINESSES = [
  { businessId: DEMO.businesses.nairobi, prefix: 'nbo', takesStockIn: true },
  { businessId: DEMO.businesses.mombasa, prefix: 'msa', takesStockIn: false },
  { businessId: DEMO.businesses.kisumu, prefix: 'ksm', takesStockIn: true },
  { businessId: HIGHLANDS.businessId, prefix: 'eld', takesStockIn: true },
] as const;

export interface ChaosWorld {
  fixture: ComplianceFixtureInput;
  catalog: CatalogBusiness[];
  applications: ChaosApplication[];
}

/** The three applications, their budgets `totalRequestsPerMinute` split by BUDGET_SHARES. */
function chaosApplications(totalRequestsPerMinute: number): ChaosApplication[] {
  const budget = (name: keyof typeof BUDGET_SHARES) =>
    Math.max(1, Math.round(totalRequestsPerMinute * BUDGET_SHARES[name]));
  return [
    {
      name: 'retail-group',
      applicationId: DEMO.applications.retail,
      keyVariable: 'CHAOS_RETAIL_GROUP_COMPLIANCE_KEY',
      key: DEMO.keys.orgWide,
      keyKind: 'organisation-wide',
      listedBusinesses: [DEMO.businesses.nairobi, DEMO.businesses.mombasa],
      businesses: [DEMO.businesses.nairobi, DEMO.businesses.mombasa],
      requestsPerMinute: budget('retail-group'),
    },
    {
      name: 'lakeside',
      applicationId: DEMO.applications.other,
      keyVariable: 'CHAOS_LAKESIDE_COMPLIANCE_KEY',
      key: DEMO.keys.otherApplication,
      keyKind: 'organisation-wide',
      listedBusinesses: undefined,
      businesses: [DEMO.businesses.kisumu],
      requestsPerMinute: budget('lakeside'),
    },
    {
      name: 'highlands',
      applicationId: HIGHLANDS.applicationId,
      keyVariable: 'CHAOS_HIGHLANDS_COMPLIANCE_KEY',
      key: HIGHLANDS.key,
      keyKind: 'business-bound',
      listedBusinesses: undefined,
      businesses: [HIGHLANDS.businessId],
      requestsPerMinute: budget('highlands'),
    },
  ];
}

/** `totalRequestsPerMinute`: the three applications' budgets added up (what the fleet paces its queue to today). */
export function chaosWorld(options: { totalRequestsPerMinute: number }): ChaosWorld {
  const applications = chaosApplications(options.totalRequestsPerMinute);
  const fixture = structuredClone(defaultComplianceFixtureInput);
  const limits = new Map(applications.map((a) => [a.applicationId, a.requestsPerMinute]));
  fixture.applications = [
    ...(fixture.applications ?? []).map((a) => ({
      ...a,
      requestsPerMinute: limits.get(a.id) ?? a.requestsPerMinute ?? 120,
    })),
    {
      id: HIGHLANDS.applicationId,
      name: 'Highlands Hardware POS',
      requestsPerMinute: limits.get(HIGHLANDS.applicationId)!,
    },
  ];
  fixture.apiKeys = [
    ...(fixture.apiKeys ?? []),
    {
      id: 'key_chaos_highlands_eldoret',
      key: HIGHLANDS.key,
      applicationId: HIGHLANDS.applicationId,
      scopes: [...SCOPE_VALUES],
      businessId: HIGHLANDS.businessId,
    },
  ];
  fixture.businesses = [...(fixture.businesses ?? []), highlandsBusiness()];
  fixture.authority = { ...fixture.authority, asyncDelayMs: 1_000 };
  // Retries soon enough that a callback to a killed worker's port lands once it is back; polling covers the rest.
  fixture.callbacks = {
    retryScheduleMs: [0, 1_000, 3_000, 10_000, 30_000, 60_000],
    timeoutMs: 5_000,
    outOfOrderHoldMs: 3_000,
  };

  const catalog: CatalogBusiness[] = [];
  for (const { businessId, prefix, takesStockIn } of BUSINESSES) {
    const business = fixture.businesses.find((b) => b.id === businessId);
    if (!business) throw new Error(`the chaos world has no business ${businessId}`);
    business.items = [...(business.items ?? []), ...extraItems(prefix)];
    // The demo's supplier invoices (some confirmed, some confirmed at a later pull) would be stock nobody planned:
    // the run adds its own.
    business.purchases = [];
    // Items that still need something would park sales for an operator: not what this run is about.
    const usable = business.items.filter(
      (i) => !i.needs?.productType && !i.needs?.classificationMapping && i.productTypeCode && i.classificationCode,
    );
    const branchIds = business.branches.map((b) => b.id);
    business.stock = usable
      .filter((i) => i.stockTracked !== false)
      .flatMap((i) => branchIds.map((branchId) => ({ itemId: i.id, branchId, quantity: STOCK_PER_BRANCH })));
    catalog.push({
      businessId,
      applicationId: business.applicationId,
      branchIds,
      items: usable.map((i) => ({ itemId: i.id, unitPrice: i.unitPrice, stockTracked: i.stockTracked !== false })),
      takesStockIn,
      incomingItems: takesStockIn ? nameMatchable(business.items, usable) : [],
    });
  }
  for (const application of applications) {
    const served = catalog.filter((b) => b.applicationId === application.applicationId).map((b) => b.businessId);
    if (served.join() !== application.businesses.join())
      throw new Error(`${application.name} serves ${served.join(', ')}, not ${application.businesses.join(', ')}`);
  }
  return { fixture, catalog, applications };
}

/** Of `usable`, the registered stock-tracked items whose name picks them alone among `all`'s stock-tracked ones. */
function nameMatchable(
  all: readonly ItemFixtureInput[],
  usable: readonly ItemFixtureInput[],
): Array<{ itemId: string; name: string }> {
  const tracked = all.filter((i) => i.stockTracked !== false);
  const sharing = (name: string) => tracked.filter((i) => normalise(i.name) === normalise(name)).length;
  return usable
    .filter((i) => i.stockTracked !== false && i.registrationStatus === 'REGISTERED' && sharing(i.name) === 1)
    .map((i) => ({ itemId: i.id, name: i.name }));
}

/** Whether the checker expects stock movements for the item. */
export function stockTrackedIn(catalog: readonly CatalogBusiness[]): (businessId: string, itemId: string) => boolean {
  const tracked = new Set(
    catalog.flatMap((b) => b.items.filter((i) => i.stockTracked).map((i) => `${b.businessId}|${i.itemId}`)),
  );
  return (businessId, itemId) => tracked.has(`${businessId}|${itemId}`);
}

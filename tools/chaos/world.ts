/**
 * The sandbox world of a chaos run: the demo world with the rate limit raised (a correctness run, not a budget
 * run), plenty of stock, a few more items waiting for registration (so the register route sees traffic under
 * faults) and short authority and callback delays. The catalog is what the driver sells from and what the checker
 * knows about stock tracking: its own knowledge, not the worker's.
 */
import type { ComplianceFixtureInput, ItemFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import { DEMO, defaultComplianceFixtureInput } from '../../sandbox/default-fixture.js';

export interface CatalogItem {
  itemId: string;
  unitPrice: number;
  stockTracked: boolean;
}

export interface CatalogBusiness {
  businessId: string;
  branchIds: string[];
  items: CatalogItem[];
}

const STOCK_PER_BRANCH = 1_000_000;
const EXTRA_PENDING_ITEMS = 4;

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

const BUSINESSES = [
  { businessId: DEMO.businesses.nairobi, prefix: 'nbo' },
  { businessId: DEMO.businesses.mombasa, prefix: 'msa' },
] as const;

export interface ChaosWorld {
  fixture: ComplianceFixtureInput;
  catalog: CatalogBusiness[];
}

export function chaosWorld(options: { requestsPerMinute: number }): ChaosWorld {
  const fixture = structuredClone(defaultComplianceFixtureInput);
  fixture.applications = (fixture.applications ?? []).map((a) => ({ ...a, requestsPerMinute: options.requestsPerMinute }));
  fixture.authority = { ...fixture.authority, asyncDelayMs: 1_000 };
  // Retries soon enough that a callback to a killed worker's port lands once it is back; polling covers the rest.
  fixture.callbacks = { retryScheduleMs: [0, 1_000, 3_000, 10_000, 30_000, 60_000], timeoutMs: 5_000, outOfOrderHoldMs: 3_000 };

  const catalog: CatalogBusiness[] = [];
  for (const { businessId, prefix } of BUSINESSES) {
    const business = fixture.businesses?.find((b) => b.id === businessId);
    if (!business) throw new Error(`the demo world has no business ${businessId}`);
    business.items = [...(business.items ?? []), ...extraItems(prefix)];
    // Items that still need something would park sales for an operator: not what this run is about.
    const usable = business.items.filter((i) => !i.needs?.productType && !i.needs?.classificationMapping && i.productTypeCode && i.classificationCode);
    const branchIds = business.branches.map((b) => b.id);
    business.stock = usable
      .filter((i) => i.stockTracked !== false)
      .flatMap((i) => branchIds.map((branchId) => ({ itemId: i.id, branchId, quantity: STOCK_PER_BRANCH })));
    catalog.push({
      businessId,
      branchIds,
      items: usable.map((i) => ({ itemId: i.id, unitPrice: i.unitPrice, stockTracked: i.stockTracked !== false })),
    });
  }
  return { fixture, catalog };
}

/** Whether the checker expects stock movements for the item. */
export function stockTrackedIn(catalog: readonly CatalogBusiness[]): (businessId: string, itemId: string) => boolean {
  const tracked = new Set(catalog.flatMap((b) => b.items.filter((i) => i.stockTracked).map((i) => `${b.businessId}|${i.itemId}`)));
  return (businessId, itemId) => tracked.has(`${businessId}|${itemId}`);
}

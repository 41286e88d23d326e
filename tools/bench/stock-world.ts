/**
 * The stock section's world: per run an application of its own (its own key, the scaled budget, its own
 * line in the sandbox's request log) with one business (so no run's ledger, whose id is the business's, meets
 * another's), each business with a catalogue of 30 registered, stock-tracked items and ample stock of each at its one
 * branch (the service clamps a quantity at 0, which would hide a double deduction: it must never be reached); and the
 * sales the tills ring up, three distinct items each.
 */
import { randomBytes } from 'node:crypto';
import { seededRandom } from '../../sandbox/shared/faults.js';
import { SCOPE_VALUES, type ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { SaleInput } from '../../src/contracts/sale.js';

/** Far above what any run sells of an item (a full run sells a few hundred of each). */
export const STARTING_STOCK = 1_000_000;

/** One run's application and its one business. */
export interface StockTenant {
  application: string;
  /** The application's key (a secret: never printed); handed to its worker process in its environment only. */
  key: string;
  businessId: string;
}

export interface StockWorld {
  tenants: readonly StockTenant[];
  /** Every business's catalogue (the same prices in every business). */
  catalogue: readonly CatalogueItem[];
  fixture: ComplianceFixtureInput;
}

export interface CatalogueItem {
  /** The item's id without its business: `itemId(business, item)` names it in a business. */
  suffix: string;
  unitPrice: number;
}

export const itemId = (businessId: string, item: CatalogueItem) =>
  `itm_${businessId.replace(/^biz_/, '')}_${item.suffix}`;
export const branchOf = (businessId: string) => `br_${businessId.replace(/^biz_/, '')}`;

/** `items` items priced 50, 60, … (a price per item: the ledger groups lines by item and price). */
export function catalogue(items: number): CatalogueItem[] {
  return Array.from({ length: items }, (_, i) => ({
    suffix: `sku${String(i + 1).padStart(2, '0')}`,
    unitPrice: 50 + 10 * i,
  }));
}

const pinOf = (index: number) =>
  `P${String(200_000_000 + index).padStart(9, '0')}${String.fromCharCode(65 + (index % 26))}`;

/** The world of one section: an application per business given, each limited to `requestsPerWindow` per `windowMs`. */
export function stockWorld(options: {
  businesses: readonly string[];
  items: number;
  requestsPerWindow: number;
  windowMs: number;
}): StockWorld {
  const items = catalogue(options.items);
  const tenants = options.businesses.map((businessId) => ({
    application: `app_bench_${businessId.replace(/^biz_/, '')}`,
    key: `cmp_sk_test_bench_${randomBytes(18).toString('base64url')}`,
    businessId,
  }));
  return {
    tenants,
    catalogue: items,
    fixture: {
      rateLimitWindowMs: options.windowMs,
      applications: tenants.map((t) => ({
        id: t.application,
        name: `Bench supermarket ${t.businessId}`,
        requestsPerMinute: options.requestsPerWindow,
      })),
      apiKeys: tenants.map((t) => ({
        id: `key_${t.application}`,
        key: t.key,
        applicationId: t.application,
        scopes: [...SCOPE_VALUES],
      })),
      businesses: tenants.map(({ businessId: id, application }, b) => ({
        id,
        name: `Bench supermarket ${id}`,
        pin: pinOf(b),
        environment: 'sandbox' as const,
        applicationId: application,
        branches: [{ id: branchOf(id), name: 'Main', authorityBhfId: '00' }],
        items: items.map((item) => ({
          id: itemId(id, item),
          externalId: `SKU-${item.suffix.toUpperCase()}`,
          name: `Grocery ${item.suffix}`,
          taxTypeCode: 'B' as const,
          unitPrice: item.unitPrice,
          productTypeCode: '2',
          classificationCode: '5016150100',
          stockTracked: true,
          registrationStatus: 'REGISTERED' as const,
        })),
        stock: items.map((item) => ({ itemId: itemId(id, item), branchId: branchOf(id), quantity: STARTING_STOCK })),
      })),
      callbacks: { retryScheduleMs: [0, 200, 500], timeoutMs: 1_000 },
    },
  };
}

/**
 * The sales of a business's tills: each `lines` distinct items of the catalogue drawn at random (seeded, so a run
 * sale can be made again), 1–3 of each, at the catalogue price; no refund window, so a sale closes once its lines are
 * handed over.
 */
export function saleMaker(
  world: Pick<StockWorld, 'catalogue'>,
  businessId: string,
  options: { lines: number; seed: number; tag: string },
): (n: number) => SaleInput {
  if (options.lines > world.catalogue.length)
    throw new RangeError(`stock: ${options.lines} distinct lines from ${world.catalogue.length} items`);
  return (n) => {
    // A stream per sale: sale n is the same whichever till rings it up first.
    const random = seededRandom(options.seed * 1_000_003 + n);
    const picked = new Set<number>();
    while (picked.size < options.lines) picked.add(Math.floor(random() * world.catalogue.length));
    return {
      businessId,
      traderInvoiceNumber: `BS-${options.tag}-${n}`,
      saleDate: '2026-11-21',
      lines: [...picked].map((i) => ({
        itemId: itemId(businessId, world.catalogue[i]!),
        quantity: 1 + Math.floor(random() * 3),
        unitPrice: world.catalogue[i]!.unitPrice,
      })),
      options: { refundWindowDays: 0 },
    };
  };
}

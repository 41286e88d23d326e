/**
 * The supplier invoices of a chaos run and their review, decided from the seed alone (its own stream, so the sales
 * and the fault plan of a seed stay what they were): per business taking stock in, one invoice per 10 sales spread
 * over those businesses (at least three each), 2–4 lines naming the business's items in a supplier's own spelling
 * (case, spacing, punctuation: the stock-in's unique-name match), each confirmed and then either left confirmed,
 * taken back to `pending_review` and confirmed again, or rejected; plus one invoice dated before the business's start
 * date, confirmed, which must add nothing. The run hands them to the sandbox at the start, reviews them at the planned
 * times during the faults and triggers purchases syncs at others.
 *
 * A sync under these faults can take a minute (an outage, the tills first, an activity lost with a killed worker),
 * so an invoice confirmed and taken back within the faults is often seen only in its last status. Half of those that
 * are taken back therefore arrive confirmed (reviewed before the run), and the run lets the stock-ins take them in
 * before the faults start: their take-back and re-adding then happen under the faults.
 */
import type { PurchaseFixtureInput, PurchaseStatus } from '../../sandbox/compliance/fixture-schema.js';
import { deriveSeed, Dice } from './seed.js';
import type { CatalogBusiness } from './world.js';

export const SALES_PER_INVOICE = 10;
export const MIN_INVOICES_PER_BUSINESS = 3;
/** The businesses take stock in from this many days before the run; the invoices are dated on or after it. */
export const FROM_DAYS_BEFORE = 30;

/**
 * What happens to an invoice during the faults: each is confirmed first. `before-start` is dated before the
 * business's start date (opening stock): confirmed, it adds nothing.
 */
export type InvoiceStory = 'confirmed' | 'reconfirmed' | 'rejected' | 'before-start';
const STORIES: readonly InvoiceStory[] = ['confirmed', 'reconfirmed', 'rejected'];

export interface PlannedReview {
  /** Ms from the faults' start. */
  atMs: number;
  status: Extract<PurchaseStatus, 'confirmed' | 'pending_review' | 'rejected'>;
}

export interface PlannedInvoiceLine {
  /** The item the line names (what the checker counts it as). */
  itemId: string;
  description: string;
  quantity: number;
  unitPrice: number;
}

export interface PlannedInvoice {
  businessId: string;
  branchId: string;
  purchaseId: string;
  supplier: { name: string; pin: string };
  supplierInvoiceNumber: string;
  invoiceDate: string;
  story: InvoiceStory;
  lines: PlannedInvoiceLine[];
  /** Its status when handed to the sandbox. */
  arrives: 'pending_review' | 'confirmed';
  /** During the faults, in order; the last (or `arrives`) is the invoice's final status. */
  reviews: PlannedReview[];
}

export interface PlannedSync {
  atMs: number;
  businessId: string;
}

export interface StockInPlan {
  /** Per business taking stock in: the tenants file's `from`. */
  from: Record<string, string>;
  invoices: PlannedInvoice[];
  /** Syncs asked for (`syncPurchasesNow`, not waited for) on top of the schedules' own. */
  syncs: PlannedSync[];
}

const SUPPLIERS = [
  { name: 'Chaos Wholesalers Ltd', pin: 'P051200001A' },
  { name: 'Chaos Distributors Ltd', pin: 'P051200002B' },
] as const;

/** How suppliers' systems print an item's name: each normalises back to it. */
const SPELLINGS: ReadonlyArray<(name: string) => string> = [
  (n) => n.toUpperCase(),
  (n) => n.toLowerCase().replace(/ /g, '  '),
  (n) => ` ${n.replace(/ /g, '-')}.`,
  (n) => n.toLowerCase().replace(/ /g, '_'),
];

type Windows = Record<InvoiceStory, ReadonlyArray<readonly [number, number]>>;

/**
 * When each review of a story happens, as shares of the fault time, all before its end: the status in between is
 * held long (a confirmation early, its take-back late; a take-back early, the confirmation again at the very end), so
 * a sync stalled by the faults may still see it.
 */
const WINDOWS: Windows = {
  confirmed: [[0.05, 0.6]],
  'before-start': [[0.05, 0.6]],
  rejected: [
    [0.05, 0.35],
    [0.5, 0.9],
  ],
  reconfirmed: [
    [0.05, 0.2],
    [0.25, 0.45],
    [0.8, 0.95],
  ],
};
/** Of an invoice that arrived confirmed (and is in stock when the faults start): its take-back comes first. */
const ARRIVED_WINDOWS: Windows = {
  ...WINDOWS,
  rejected: [[0.02, 0.6]],
  reconfirmed: [
    [0.02, 0.15],
    [0.8, 0.95],
  ],
};
/** Now and then a review follows the one before faster than any sync, so none sees the status between. */
const QUICK_REVIEW_SHARE = 0.2;
const QUICK_REVIEW_GAP_MS = { min: 300, max: 3_000 } as const;
/** Of the invoices taken back, those that arrive confirmed. */
const ARRIVE_CONFIRMED_SHARE = 0.5;
/** Between two syncs asked for one business. */
const SYNC_GAP_MS = { min: 4_000, max: 12_000 } as const;

export function dayBefore(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

/** The review status an invoice ends with. */
export function finalStatus(invoice: Pick<PlannedInvoice, 'arrives' | 'reviews'>): PurchaseStatus {
  return invoice.reviews.at(-1)?.status ?? invoice.arrives;
}

/** Each status the story goes through, from the first confirmation (which `arrived` leaves out) on. */
function reviewsOf(dice: Dice, story: InvoiceStory, arrived: boolean, faultMs: number): PlannedReview[] {
  const statuses: Array<PlannedReview['status']> =
    story === 'reconfirmed'
      ? ['confirmed', 'pending_review', 'confirmed']
      : story === 'rejected'
        ? ['confirmed', 'rejected']
        : ['confirmed'];
  const windows = (arrived ? ARRIVED_WINDOWS : WINDOWS)[story];
  let at = -1;
  return statuses.slice(arrived ? 1 : 0).map((status, n) => {
    const [from, to] = windows[n]!;
    const inWindow = Math.round(faultMs * (from + (to - from) * dice.roll()));
    at =
      n > 0 && dice.chance(QUICK_REVIEW_SHARE)
        ? at + dice.int(QUICK_REVIEW_GAP_MS.min, QUICK_REVIEW_GAP_MS.max)
        : Math.max(at + 1, inWindow);
    return { atMs: at, status };
  });
}

export function plannedStockIn(options: {
  seed: number;
  sales: number;
  faultMs: number;
  catalog: readonly CatalogBusiness[];
  /** The run's date: the invoices are dated up to it. */
  date: string;
}): StockInPlan {
  const { seed, faultMs, catalog, date } = options;
  const dice = new Dice(deriveSeed(seed, 'supplier-invoices'));
  const run = (seed >>> 0).toString(36).toUpperCase();
  const businesses = catalog.filter((b) => b.takesStockIn && b.incomingItems.length > 0);
  const perBusiness = Math.max(
    MIN_INVOICES_PER_BUSINESS,
    Math.ceil(options.sales / SALES_PER_INVOICE / Math.max(1, businesses.length)),
  );
  const from = dayBefore(date, FROM_DAYS_BEFORE);
  const invoices: PlannedInvoice[] = [];
  const syncs: PlannedSync[] = [];
  for (const business of businesses) {
    const branches = [...new Set(business.branchIds)];
    // Every story at least once, then drawn; the invoice before the start date last.
    const stories: InvoiceStory[] = dice.shuffle([
      ...STORIES,
      ...Array.from({ length: perBusiness - STORIES.length }, () => dice.pick(STORIES)),
    ]);
    stories.push('before-start');
    stories.forEach((story, n) => {
      const supplier = dice.pick(SUPPLIERS);
      const lines = Array.from({ length: dice.int(2, 4) }, (): PlannedInvoiceLine => {
        const item = dice.pick(business.incomingItems);
        return {
          itemId: item.itemId,
          description: dice.pick(SPELLINGS)(item.name),
          quantity: dice.int(1, 12),
          unitPrice: dice.int(20, 500),
        };
      });
      // The first on the start date itself (it counts), the one before it a few days earlier, the rest in between.
      const invoiceDate =
        story === 'before-start'
          ? dayBefore(from, dice.int(1, 10))
          : n === 0
            ? from
            : dayBefore(date, dice.int(0, FROM_DAYS_BEFORE - 1));
      const arrived = story !== 'confirmed' && story !== 'before-start' && dice.chance(ARRIVE_CONFIRMED_SHARE);
      invoices.push({
        businessId: business.businessId,
        branchId: dice.pick(branches),
        purchaseId: `pur_chaos_${run}_${business.businessId}_${n + 1}`,
        supplier: { ...supplier },
        supplierInvoiceNumber: `SI-${run}-${invoices.length + 1}`,
        invoiceDate,
        story,
        lines,
        arrives: arrived ? 'confirmed' : 'pending_review',
        reviews: reviewsOf(dice, story, arrived, faultMs),
      });
    });
    for (let at = dice.int(1_000, SYNC_GAP_MS.max); at < faultMs; at += dice.int(SYNC_GAP_MS.min, SYNC_GAP_MS.max))
      syncs.push({ atMs: at, businessId: business.businessId });
  }
  return { from: Object.fromEntries(businesses.map((b) => [b.businessId, from])), invoices, syncs };
}

/** The invoice as the tax authority hands it to the sandbox, fetched by the business's next pull. */
export function purchaseFixture(invoice: PlannedInvoice): PurchaseFixtureInput {
  return {
    id: invoice.purchaseId,
    status: invoice.arrives,
    supplier: { ...invoice.supplier },
    supplierInvoiceNumber: invoice.supplierInvoiceNumber,
    invoiceDate: invoice.invoiceDate,
    branchId: invoice.branchId,
    lines: invoice.lines.map((l) => ({ description: l.description, quantity: l.quantity, unitPrice: l.unitPrice })),
  };
}

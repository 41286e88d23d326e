/**
 * The longevity section's world: one business of a chain in its second year. Pure (given "today"), so the unit tests
 * hold it to what the section's header says.
 *
 * - An application of its own at `requestsPerWindow` per `windowMs` (its key made for the run), one business with
 *   `branches` branches under one PIN, a catalogue of `items` registered, stock-tracked items (`Grocery item 00001`…,
 *   priced 50 + i), ample opening stock of the till's items at the first branch (nothing else on hand).
 * - `suppliers` suppliers, each supplying `mappedPerSupplier` items in its own wording (`MWANGAZA-007 CTN 00345`: no
 *   item's name; the merchant's mappings say which item each is, set before the first sync) and `byNamePerSupplier`
 *   more written as the item's name in the supplier's style (matched through the catalogue's answer). Each supplier
 *   has its own price of an item (the selling price × 0.60…0.79: never a selling price, so a take-back is told from a
 *   sale by its price).
 * - Two years of invoices (`days` days up to yesterday, `invoicesPerDay` a day: every day of the last `denseDays`,
 *   every `stride`-th day before; 3–8 distinct lines each, a branch each), already fetched by the service, their
 *   review status by age: the last day's partly `pulled`, the last week's partly in review, older ones confirmed but
 *   `oldRejectedShare` rejected and `oldPendingShare` still in review.
 * - The day's plan, in sync intervals from the day's start: confirmed invoices of the last year un-confirmed
 *   (`pending_review`) then confirmed again, or then rejected, or rejected at once; late invoices dated weeks back
 *   arriving (held until the next pull) then confirmed; the day's new invoices arriving then (most) confirmed; and
 *   some of last week's invoices in review confirmed.
 */
import { seededRandom } from '../../sandbox/shared/faults.js';
import {
  SCOPE_VALUES,
  type ComplianceFixtureInput,
  type PurchaseFixtureInput,
  type PurchaseStatus,
} from '../../sandbox/compliance/fixture-schema.js';
import type { MappingInput } from '../../src/contracts/stock-in.js';
import type { SaleInput } from '../../src/contracts/sale.js';

export interface LongevityWorldOptions {
  businessId: string;
  tag: string;
  /** The application's key (`cmp_sk_test_…`, made for the run). */
  key: string;
  /** The business's calendar day (Kenyan), YYYY-MM-DD: invoices are dated up to the day before. */
  today: string;
  days: number;
  /** Invoices of a day that has invoices: every day of the last `denseDays`, every `stride`-th day before. */
  invoicesPerDay: number;
  stride: number;
  denseDays: number;
  items: number;
  suppliers: number;
  mappedPerSupplier: number;
  byNamePerSupplier: number;
  branches: number;
  linesMin: number;
  linesMax: number;
  /** Stock-in from this many days back (a year). */
  stockInDaysBack: number;
  oldRejectedShare: number;
  oldPendingShare: number;
  requestsPerWindow: number;
  windowMs: number;
  /** Items the till sells (the first ones of the catalogue), with ample stock at the first branch. */
  tillItems: number;
  seed: number;
  /** The day's plan: its length in sync intervals, and what happens in it (shares of last year's confirmed invoices). */
  plan: {
    intervals: number;
    unconfirmThenConfirm: number;
    unconfirmThenReject: number;
    rejectAtOnce: number;
    /** At least this many of each kind of change, whatever the shares give. */
    atLeast: number;
    lateInvoices: number;
    /** Late invoices are dated this many days back, from–to. */
    lateDaysBack: [number, number];
    newInvoices: number;
    /** Of last week's invoices in review, the share reviewed (confirmed) during the day. */
    recentReviewShare: number;
  };
}

export interface Supplier {
  index: number;
  name: string;
  pin: string;
  /** Its price of an item: the item's selling price × this. */
  priceFactor: number;
  /** Catalogue indexes it supplies in its own wording (mapped), then by the item's name. */
  mapped: number[];
  byName: number[];
}

export interface WorldLine {
  line: number;
  description: string;
  itemId: string;
  quantity: number;
  unitPrice: number;
  /** In the supplier's own wording (a mapping says its item); else the item's name in the supplier's style. */
  mapped: boolean;
}

export interface WorldInvoice {
  id: string;
  supplier: number;
  supplierInvoiceNumber: string;
  invoiceDate: string;
  branchId: string;
  lines: WorldLine[];
  /** Status at the start of the run. */
  status: PurchaseStatus;
  /** Not in the fixture: added during the day (late, or the day's new ones). */
  arrives?: 'late' | 'new';
}

export type ChangeKind =
  | 'unconfirm'
  | 'reconfirm'
  | 'reject_after_unconfirm'
  | 'reject_at_once'
  | 'late_arrival'
  | 'late_confirm'
  | 'new_arrival'
  | 'new_confirm'
  | 'recent_confirm';

/** One thing that happens to one invoice during the day, at `atInterval` sync intervals from its start. */
export interface PlannedChange {
  purchaseId: string;
  kind: ChangeKind;
  atInterval: number;
  /** The status it leaves the invoice in (an arrival: its status on arrival). */
  status: PurchaseStatus;
  /**
   * A status change of an invoice dated before the day, up to a year back (what `oldChangeDelayHours` is about): the
   * un-confirmations and rejections, and the confirmation of a late invoice dated weeks back.
   */
  old: boolean;
}

export interface LongevityWorld {
  application: string;
  /** The application's key (a secret: never printed), given to the worker in its environment only. */
  key: string;
  businessId: string;
  branches: Array<{ id: string; name: string }>;
  catalogue: Array<{ id: string; name: string; unitPrice: number }>;
  suppliers: Supplier[];
  mappings: MappingInput[];
  invoices: WorldInvoice[];
  plan: PlannedChange[];
  /** STOCK_IN_BY_BUSINESS's date: a year back. */
  stockInFrom: string;
  fixture: ComplianceFixtureInput;
}

const DAY_MS = 86_400_000;
export const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const round2 = (x: number) => Math.round(x * 100) / 100;
const NAMES = ['Mwangaza', 'Baraka', 'Tumaini', 'Upendo', 'Neema', 'Jua', 'Simba', 'Amani', 'Faraja', 'Imani'];
const PACKS = ['CTN', 'BALE', 'PKT', 'SACK', 'TRAY', 'DRUM', 'CRATE', 'ROLL', 'TIN', 'JAR'];
/** How suppliers print an item's name: all normalise to the name. */
const STYLES: ReadonlyArray<(name: string) => string> = [
  (n) => n.toUpperCase(),
  (n) => `${n}.`,
  (n) => n.replaceAll(' ', '-'),
  (n) => ` ${n.replaceAll(' ', '  ')} `,
  (n) => n.toUpperCase().replaceAll(' ', '/'),
];

export const itemIdOf = (businessId: string, index: number) =>
  `itm_${businessId.replace(/^biz_/, '')}_${pad(index + 1, 5)}`;
export const itemNameOf = (index: number) => `Grocery item ${pad(index + 1, 5)}`;
export const itemPriceOf = (index: number) => 50 + index;

/** The wording supplier `s` prints for catalogue item `i`: no item's name, unique per supplier and item. */
export const wordingOf = (supplier: Supplier, item: number) =>
  `${supplier.name.split(' ')[0]!.toUpperCase()}-${pad(supplier.index, 3)} ${PACKS[item % PACKS.length]} ${pad(item + 1, 5)}`;

/** Invoices of one day: `perDay` on average, the fraction spread by a seeded draw. */
function countOn(perDay: number, random: () => number): number {
  const whole = Math.floor(perDay);
  return whole + (random() < perDay - whole ? 1 : 0);
}

/** Review statuses of the last day's and the rest of the last week's invoices at the start (older: the options'). */
export const RECENT_STATUS_SHARES = {
  lastDay: { pulled: 0.25, pending_review: 0.5, confirmed: 0.22, rejected: 0.03 },
  lastWeek: { pulled: 0, pending_review: 0.25, confirmed: 0.7, rejected: 0.05 },
} as const;

/** The review status of an invoice `age` days old at the start of the run. */
function statusAt(age: number, options: LongevityWorldOptions, random: () => number): PurchaseStatus {
  const r = random();
  const shares =
    age <= 1
      ? RECENT_STATUS_SHARES.lastDay
      : age <= 7
        ? RECENT_STATUS_SHARES.lastWeek
        : {
            pulled: 0,
            pending_review: options.oldPendingShare,
            rejected: options.oldRejectedShare,
            confirmed: 1 - options.oldPendingShare - options.oldRejectedShare,
          };
  if (r < shares.pulled) return 'pulled';
  if (r < shares.pulled + shares.pending_review) return 'pending_review';
  return r < shares.pulled + shares.pending_review + shares.confirmed ? 'confirmed' : 'rejected';
}

export function longevityWorld(options: LongevityWorldOptions): LongevityWorld {
  const { businessId, tag } = options;
  const short = businessId.replace(/^biz_/, '');
  const application = `app_bench_${short}`;
  const branches = Array.from({ length: options.branches }, (_, b) => ({
    id: `br_${short}_${pad(b + 1, 3)}`,
    name: `Branch ${pad(b + 1, 3)}`,
  }));
  const catalogue = Array.from({ length: options.items }, (_, i) => ({
    id: itemIdOf(businessId, i),
    name: itemNameOf(i),
    unitPrice: itemPriceOf(i),
  }));
  const perSupplier = options.mappedPerSupplier + options.byNamePerSupplier;
  if (perSupplier > options.items)
    throw new RangeError(`longevity: ${perSupplier} items a supplier of ${options.items}`);
  const suppliers: Supplier[] = Array.from({ length: options.suppliers }, (_, s) => {
    const start = (s * options.mappedPerSupplier) % options.items;
    const indexes = Array.from({ length: perSupplier }, (_, j) => (start + j) % options.items);
    return {
      index: s,
      name: `${NAMES[s % NAMES.length]} Wholesale ${s + 1} Ltd`,
      pin: `P05${pad(2_000_000 + s, 7)}${String.fromCharCode(65 + (s % 26))}`,
      priceFactor: round2(0.6 + 0.01 * (s % 20)),
      mapped: indexes.slice(0, options.mappedPerSupplier),
      byName: indexes.slice(options.mappedPerSupplier),
    };
  });
  const mappings: MappingInput[] = suppliers.flatMap((supplier) =>
    supplier.mapped.map((i) => ({
      supplierPin: supplier.pin,
      by: 'description' as const,
      key: wordingOf(supplier, i),
      itemId: catalogue[i]!.id,
      factor: 1,
    })),
  );

  const random = seededRandom(options.seed * 1_000_003 + 17);
  const invoiceOf = (date: string, n: number, status: PurchaseStatus, arrives?: WorldInvoice['arrives']) => {
    const supplier = suppliers[Math.floor(random() * suppliers.length)]!;
    const count = options.linesMin + Math.floor(random() * (options.linesMax - options.linesMin + 1));
    const offered = [...supplier.mapped, ...supplier.byName];
    const picked: number[] = [];
    while (picked.length < count) {
      const next = offered[Math.floor(random() * offered.length)]!;
      if (!picked.includes(next)) picked.push(next);
    }
    const lines: WorldLine[] = picked.map((i, line) => {
      const mapped = supplier.mapped.includes(i);
      return {
        line,
        description: mapped ? wordingOf(supplier, i) : STYLES[supplier.index % STYLES.length]!(itemNameOf(i)),
        itemId: catalogue[i]!.id,
        quantity: 1 + Math.floor(random() * 24),
        unitPrice: round2(itemPriceOf(i) * supplier.priceFactor),
        mapped,
      };
    });
    const compact = date.replaceAll('-', '');
    const invoice: WorldInvoice = {
      id: `pur_lg_${tag}_${compact}_${pad(n, 4)}`,
      supplier: supplier.index,
      supplierInvoiceNumber: `LG-${tag.toUpperCase()}-${compact}-${n}`,
      invoiceDate: date,
      branchId: branches[Math.floor(random() * branches.length)]!.id,
      lines,
      status,
      ...(arrives ? { arrives } : {}),
    };
    return invoice;
  };

  const invoices: WorldInvoice[] = [];
  for (let age = options.days; age >= 1; age--) {
    if (age > options.denseDays && age % options.stride !== 0) continue;
    const date = addDays(options.today, -age);
    const count = countOn(options.invoicesPerDay, random);
    for (let n = 1; n <= count; n++) invoices.push(invoiceOf(date, n, statusAt(age, options, random)));
  }
  const stockInFrom = addDays(options.today, -options.stockInDaysBack);

  // The day's plan.
  const { plan: p } = options;
  const plan: PlannedChange[] = [];
  const touched = new Set<string>();
  const pick = <T extends { id: string }>(from: readonly T[], count: number): T[] => {
    const out: T[] = [];
    const pool = from.filter((v) => !touched.has(v.id));
    while (out.length < count && pool.length > 0) {
      const [next] = pool.splice(Math.floor(random() * pool.length), 1);
      touched.add(next!.id);
      out.push(next!);
    }
    return out;
  };
  // A change lands between two syncs (never on one); a follow-up at least two syncs later, so a sync sees each state.
  const at = (from: number, to: number) => from + 0.1 + random() * Math.max(0, to - from - 0.2);
  const lastYear = invoices.filter((v) => v.status === 'confirmed' && v.invoiceDate >= stockInFrom);
  const count = (share: number) => Math.max(p.atLeast, Math.round(share * lastYear.length));
  const changeEnd = p.intervals * 0.75;
  const followUp = (from: number) => {
    const gap = 2 + random() * Math.max(0, p.intervals * 0.25 - 2);
    return Math.min(from + gap, p.intervals - 0.1);
  };
  for (const v of pick(lastYear, count(p.unconfirmThenConfirm))) {
    const first = at(0, changeEnd);
    plan.push({ purchaseId: v.id, kind: 'unconfirm', atInterval: first, status: 'pending_review', old: true });
    plan.push({ purchaseId: v.id, kind: 'reconfirm', atInterval: followUp(first), status: 'confirmed', old: true });
  }
  for (const v of pick(lastYear, count(p.unconfirmThenReject))) {
    const first = at(0, changeEnd);
    plan.push({ purchaseId: v.id, kind: 'unconfirm', atInterval: first, status: 'pending_review', old: true });
    plan.push({
      purchaseId: v.id,
      kind: 'reject_after_unconfirm',
      atInterval: followUp(first),
      status: 'rejected',
      old: true,
    });
  }
  for (const v of pick(lastYear, count(p.rejectAtOnce)))
    plan.push({
      purchaseId: v.id,
      kind: 'reject_at_once',
      atInterval: at(0, changeEnd),
      status: 'rejected',
      old: true,
    });
  for (let n = 1; n <= p.lateInvoices; n++) {
    const back = p.lateDaysBack[0] + Math.floor(random() * (p.lateDaysBack[1] - p.lateDaysBack[0] + 1));
    const v = invoiceOf(addDays(options.today, -back), 9_000 + n, 'pending_review', 'late');
    invoices.push(v);
    const arrival = at(0, changeEnd);
    plan.push({ purchaseId: v.id, kind: 'late_arrival', atInterval: arrival, status: 'pending_review', old: false });
    plan.push({
      purchaseId: v.id,
      kind: 'late_confirm',
      atInterval: followUp(arrival),
      status: 'confirmed',
      old: true,
    });
  }
  for (let n = 1; n <= p.newInvoices; n++) {
    const v = invoiceOf(options.today, 8_000 + n, 'pending_review', 'new');
    invoices.push(v);
    const arrival = at(0, changeEnd);
    plan.push({ purchaseId: v.id, kind: 'new_arrival', atInterval: arrival, status: 'pending_review', old: false });
    // Four in five are confirmed the same day.
    if (random() < 0.8)
      plan.push({
        purchaseId: v.id,
        kind: 'new_confirm',
        atInterval: followUp(arrival),
        status: 'confirmed',
        old: false,
      });
  }
  const recentInReview = invoices.filter(
    (v) => !v.arrives && v.status === 'pending_review' && v.invoiceDate >= addDays(options.today, -7),
  );
  for (const v of pick(recentInReview, Math.round(p.recentReviewShare * recentInReview.length)))
    plan.push({
      purchaseId: v.id,
      kind: 'recent_confirm',
      atInterval: at(0, changeEnd),
      status: 'confirmed',
      old: false,
    });
  plan.sort((a, b) => a.atInterval - b.atInterval);

  const { key } = options;
  const fixture: ComplianceFixtureInput = {
    rateLimitWindowMs: options.windowMs,
    applications: [
      { id: application, name: `Bench chain ${businessId}`, requestsPerMinute: options.requestsPerWindow },
    ],
    apiKeys: [{ id: `key_${application}`, key, applicationId: application, scopes: [...SCOPE_VALUES] }],
    businesses: [
      {
        id: businessId,
        name: `Bench chain ${businessId}`,
        pin: 'P051999999Z',
        environment: 'sandbox',
        applicationId: application,
        branches: branches.map((b, i) => ({ id: b.id, name: b.name, authorityBhfId: pad(i % 100, 2) })),
        items: catalogue.map((item, i) => ({
          id: item.id,
          externalId: `LG-${pad(i + 1, 5)}`,
          name: item.name,
          taxTypeCode: 'B' as const,
          unitPrice: item.unitPrice,
          productTypeCode: '2',
          classificationCode: '5016150100',
          stockTracked: true,
          registrationStatus: 'REGISTERED' as const,
        })),
        stock: catalogue
          .slice(0, options.tillItems)
          .map((item) => ({ itemId: item.id, branchId: branches[0]!.id, quantity: TILL_OPENING_STOCK })),
        purchases: invoices.filter((v) => !v.arrives).map((v) => purchaseFixture(v, suppliers, false)),
      },
    ],
    callbacks: { retryScheduleMs: [0, 200, 500], timeoutMs: 1_000 },
  };
  return {
    application,
    key,
    businessId,
    branches,
    catalogue,
    suppliers,
    mappings,
    invoices,
    plan,
    stockInFrom,
    fixture,
  };
}

/** Far above what the till sells of an item in a run. */
export const TILL_OPENING_STOCK = 1_000_000;

/** An invoice as the fixture or the inspection API takes it; `held`: not fetched until the next pull. */
export function purchaseFixture(v: WorldInvoice, suppliers: readonly Supplier[], held: boolean): PurchaseFixtureInput {
  const supplier = suppliers[v.supplier]!;
  return {
    id: v.id,
    status: v.status,
    supplier: { name: supplier.name, pin: supplier.pin },
    supplierInvoiceNumber: v.supplierInvoiceNumber,
    invoiceDate: v.invoiceDate,
    branchId: v.branchId,
    lines: v.lines.map((l) => ({ description: l.description, quantity: l.quantity, unitPrice: l.unitPrice })),
    ...(held ? { pendingPull: true } : {}),
  };
}

/** The till's sale `n`: `lines` distinct items of the till's, 1–3 each, at the first branch (the business's default). */
export function tillSale(
  world: Pick<LongevityWorld, 'businessId' | 'catalogue'>,
  options: { tillItems: number; tag: string; today: string },
) {
  const { tillItems, tag, today } = options;
  return (n: number, lines = 3): SaleInput => {
    const random = seededRandom(7_919 * (n + 1));
    const picked = new Set<number>();
    while (picked.size < Math.min(lines, tillItems)) picked.add(Math.floor(random() * tillItems));
    return {
      businessId: world.businessId,
      traderInvoiceNumber: `LG-${tag}-${n}`,
      saleDate: today,
      lines: [...picked].map((i) => ({
        itemId: world.catalogue[i]!.id,
        quantity: 1 + Math.floor(random() * 3),
        unitPrice: world.catalogue[i]!.unitPrice,
      })),
      options: { refundWindowDays: 0 },
    };
  };
}

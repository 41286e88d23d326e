/**
 * The stock-in section's world: one business of an application of its own (the stock world's: 30 registered,
 * stock-tracked items named `Grocery skuNN` at one branch, ample stock of each), five suppliers, and the supplier
 * invoices the section hands the sandbox: five lines each, four of them worded as the item's name in the supplier's own
 * style (case, spacing, punctuation: the stock-in matches them by the normalised name) and, on every other block of
 * five invoices, one line in the supplier's own wording that matches no item (a person must map it once; the stock-in
 * learns it). Pure, so the unit tests hold it to what docs/benchmarks.md says.
 */
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { seededRandom } from '../../sandbox/shared/faults.js';
import type { PurchaseFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import { branchOf, itemId, stockWorld, type CatalogueItem, type StockTenant, type StockWorld } from './stock-world.js';

export interface Supplier {
  index: number;
  name: string;
  pin: string;
  /** Its price of an item is the item's selling price times this (below 1: never a selling price). */
  priceFactor: number;
}

export interface PlannedLine {
  /** Position on the invoice, from 0 (mapLine's `line`). */
  line: number;
  description: string;
  itemId: string;
  quantity: number;
  unitPrice: number;
  /** In the supplier's own wording: matches no item's name, so it waits for a mapping (or a learned one). */
  wording?: string;
}

export interface PlannedInvoice {
  /** The invoice's position in the run (0-based). */
  index: number;
  id: string;
  /** First half: confirmed before the mapping is made; second half: after it. */
  half: 'first' | 'second';
  supplier: Supplier;
  supplierInvoiceNumber: string;
  invoiceDate: string;
  lines: PlannedLine[];
  /** Unconfirmed (back to pending review) in the third pass: what it added is taken back. */
  takenBack: boolean;
}

export interface StockInWorldOptions {
  businessId: string;
  items: number;
  invoices: number;
  linesPerInvoice: number;
  suppliers: number;
  /** Distinct unmatched wordings of each supplier; each must occur in the first half (checked). */
  wordingsPerSupplier: number;
  /** One invoice of the first half in this many is unconfirmed in the third pass. */
  takeBackEvery: number;
  requestsPerWindow: number;
  windowMs: number;
  seed: number;
  tag: string;
}

export interface StockInWorld {
  tenant: StockTenant;
  branchId: string;
  catalogue: readonly CatalogueItem[];
  suppliers: readonly Supplier[];
  invoices: readonly PlannedInvoice[];
  /** The stock world's fixture (the invoices are added at run time, through the inspection API). */
  fixture: StockWorld['fixture'];
  world: StockWorld;
}

/** The date the business takes stock in from; every invoice is dated after it. */
export const STOCK_IN_FROM = '2026-01-01';
/** Yesterday in Kenya: within the window every sync lists, as a delivery received this week is. */
const INVOICE_DATE = addDays(todayInKenya(Date.now()), -1);

/** Five styles of writing an item's name, as five suppliers' systems print it: all normalise to the name. */
const STYLES: ReadonlyArray<(name: string) => string> = [
  (n) => n.toUpperCase(),
  (n) => `${n}.`,
  (n) => n.replace(' ', '-'),
  (n) => `  ${n.replace(' ', '   ')} `,
  (n) => n.toUpperCase().replace(' ', '/'),
];
const PACKS = ['BALE', 'CTN', 'PKT', 'SACK', 'TRAY', 'DRUM', 'CRATE', 'ROLL', 'TIN', 'JAR'];

/** The item's name as the stock world gives it (`Grocery sku01`): what a supplier line's name must match. */
export const itemName = (item: CatalogueItem) => `Grocery ${item.suffix}`;

/** The wording `w` of supplier `s`: its own trade name for a pack of one of the items, matching no item's name. */
export function wordingOf(supplier: Supplier, w: number): string {
  return `${supplier.name.split(' ')[0]!.toUpperCase()} ${PACKS[w % PACKS.length]} NO.${w + 1}`;
}

/** The item a wording stands for (what the person maps it to). */
export const wordingItem = (supplier: Supplier, w: number, items: number) => (supplier.index * 7 + w * 11 + 3) % items;

/** Invoice `i` has a line in its supplier's own wording on every other block of `suppliers` invoices. */
export const hasWording = (i: number, suppliers: number) => Math.floor(i / suppliers) % 2 === 0;
/** Which of its supplier's wordings: the next one every two blocks, so the first half meets every wording. */
export const wordingIndex = (i: number, suppliers: number, wordings: number) =>
  Math.floor(i / (2 * suppliers)) % wordings;

const round2 = (x: number) => Math.round(x * 100) / 100;

export function stockInWorld(options: StockInWorldOptions): StockInWorld {
  const world = stockWorld({
    businesses: [options.businessId],
    items: options.items,
    requestsPerWindow: options.requestsPerWindow,
    windowMs: options.windowMs,
  });
  const tenant = world.tenants[0]!;
  const businessId = tenant.businessId;
  const suppliers: Supplier[] = Array.from({ length: options.suppliers }, (_, s) => ({
    index: s,
    name: `${['Mwangaza', 'Baraka', 'Tumaini', 'Upendo', 'Neema', 'Jua', 'Simba'][s % 7]} Wholesale ${s + 1} Ltd`,
    pin: `P05${String(1_100_000 + s).padStart(7, '0')}${String.fromCharCode(65 + (s % 26))}`,
    priceFactor: round2(0.6 + 0.04 * s),
  }));
  const half = Math.ceil(options.invoices / 2);
  const invoices: PlannedInvoice[] = Array.from({ length: options.invoices }, (_, i) => {
    const random = seededRandom(options.seed * 1_000_003 + i);
    const supplier = suppliers[i % suppliers.length]!;
    const priceOf = (index: number) => round2(world.catalogue[index]!.unitPrice * supplier.priceFactor);
    const picked: number[] = [];
    let wording: { text: string; item: number } | undefined;
    if (hasWording(i, suppliers.length)) {
      const w = wordingIndex(i, suppliers.length, options.wordingsPerSupplier);
      wording = { text: wordingOf(supplier, w), item: wordingItem(supplier, w, options.items) };
      picked.push(wording.item);
    }
    while (picked.length < options.linesPerInvoice) {
      const next = Math.floor(random() * options.items);
      if (!picked.includes(next)) picked.push(next);
    }
    // The wording's line somewhere on the invoice, not always first.
    const wordingLine = wording ? Math.floor(random() * options.linesPerInvoice) : -1;
    if (wording) [picked[0], picked[wordingLine]] = [picked[wordingLine]!, picked[0]!];
    const lines: PlannedLine[] = picked.map((index, line) => {
      const item = world.catalogue[index]!;
      const own = line === wordingLine;
      return {
        line,
        description: own ? wording!.text : STYLES[supplier.index % STYLES.length]!(itemName(item)),
        itemId: itemId(businessId, item),
        quantity: 1 + Math.floor(random() * 24),
        unitPrice: priceOf(index),
        ...(own ? { wording: wording!.text } : {}),
      };
    });
    return {
      index: i,
      id: `pur_sin_${options.tag}_${String(i + 1).padStart(4, '0')}`,
      half: i < half ? 'first' : 'second',
      supplier,
      supplierInvoiceNumber: `SIN-${options.tag.toUpperCase()}-${i + 1}`,
      invoiceDate: INVOICE_DATE,
      lines,
      takenBack: i < half && i % options.takeBackEvery === options.takeBackEvery - 1,
    };
  });
  // Every wording met in the first half, so the mapping made half-way through covers every wording the second meets.
  const firstHalf = new Set(invoices.filter((v) => v.half === 'first').flatMap((v) => wordingKeys(v)));
  const missing = invoices.flatMap((v) => wordingKeys(v)).filter((k) => !firstHalf.has(k));
  if (missing.length > 0)
    throw new RangeError(`stock-in: ${options.invoices} invoices leave wordings out of the first half: ${missing[0]}`);
  return {
    tenant,
    branchId: branchOf(businessId),
    catalogue: world.catalogue,
    suppliers,
    invoices,
    fixture: world.fixture,
    world,
  };
}

/** A (supplier, wording) pair names one mapping. */
export const wordingKey = (supplierPin: string, wording: string) => `${supplierPin}|${wording}`;

const wordingKeys = (invoice: PlannedInvoice) =>
  invoice.lines.flatMap((l) => (l.wording ? [wordingKey(invoice.supplier.pin, l.wording)] : []));

/** The invoice as the tax authority hands it over: held until the business's next pull, under review. */
export function purchaseFixture(invoice: PlannedInvoice, branchId: string): PurchaseFixtureInput {
  return {
    id: invoice.id,
    status: 'pending_review',
    supplier: { name: invoice.supplier.name, pin: invoice.supplier.pin },
    supplierInvoiceNumber: invoice.supplierInvoiceNumber,
    invoiceDate: invoice.invoiceDate,
    branchId,
    lines: invoice.lines.map((l) => ({ description: l.description, quantity: l.quantity, unitPrice: l.unitPrice })),
    pendingPull: true,
  };
}

/**
 * The lines a person maps, half-way through: for each (supplier, wording), its first line in the first half. The
 * stock-in learns each; every other line of that wording (waiting then, or on a later invoice) must match without a
 * person.
 */
export function linesToMap(invoices: readonly PlannedInvoice[]): Array<{ invoice: PlannedInvoice; line: PlannedLine }> {
  const seen = new Set<string>();
  const out: Array<{ invoice: PlannedInvoice; line: PlannedLine }> = [];
  for (const invoice of invoices.filter((v) => v.half === 'first'))
    for (const line of invoice.lines) {
      if (!line.wording) continue;
      const key = wordingKey(invoice.supplier.pin, line.wording);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ invoice, line });
    }
  return out;
}

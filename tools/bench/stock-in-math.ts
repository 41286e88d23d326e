/**
 * The stock-in section's arithmetic, pure so the unit tests hold it to the definitions in docs/benchmarks.md: what
 * the sandbox should hold after the run (every line of every invoice added once, the invoices unconfirmed taken back
 * once), what it holds twice, which items' quantity on hand is exact, each added line's lag (matched to the movement
 * that carried it by quantity, as the stock section does), the compliance requests of the stock-in, and the share of
 * lines a learned mapping matched.
 */
import type { InvoiceStock } from '../../src/contracts/stock-in.js';
import { carryLines, lagSummary, type LagSummary, type RecordedMovement, type SoldLine } from './stock-math.js';
import { wordingKey, type PlannedInvoice } from './stock-in-world.js';

/** A movement as the sandbox recorded it, its time as epoch ms. */
export interface StockInMovement {
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  unitPrice: number | null;
  referenceId: string | null;
  at: number;
}

/** Each item's selling price: a sale's movement carries it. */
export type SalePrices = ReadonlyMap<string, number>;

/**
 * The ledger merges lines of one item, one action and one price: a stock-in movement is told apart from a sale's by
 * its action (sales only deduct; the tills refund nothing) or, for a take-back, by its price (a supplier's price of
 * an item is never its selling price in this world). Probes (quantity 0) belong to neither.
 */
export function isStockIn(
  m: Pick<StockInMovement, 'itemId' | 'action' | 'quantity' | 'unitPrice'>,
  salePrices: SalePrices,
): boolean {
  return m.quantity > 0 && (m.action === 'ADD' || salePrices.get(m.itemId) !== m.unitPrice);
}

const groupKey = (itemId: string, action: string, unitPrice: number | null) => `${itemId}|${action}|${unitPrice}`;

export interface StockInGroup {
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  unitPrice: number;
  expected: number;
  recorded: number;
}

/** Per item, action and price: what the invoices should have moved (every line added; taken back where unconfirmed). */
export function expectedGroups(invoices: readonly PlannedInvoice[]): Map<string, StockInGroup> {
  const groups = new Map<string, StockInGroup>();
  const add = (itemId: string, action: 'ADD' | 'DEDUCT', unitPrice: number, quantity: number) => {
    const key = groupKey(itemId, action, unitPrice);
    const g = groups.get(key) ?? { itemId, action, unitPrice, expected: 0, recorded: 0 };
    g.expected = round4(g.expected + quantity);
    groups.set(key, g);
  };
  for (const invoice of invoices)
    for (const line of invoice.lines) {
      add(line.itemId, 'ADD', line.unitPrice, line.quantity);
      if (invoice.takenBack) add(line.itemId, 'DEDUCT', line.unitPrice, line.quantity);
    }
  return groups;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

export interface StockInExactlyOnce {
  /** Every (item, action, price) the invoices or the stock-in's movements touched, expected against recorded. */
  groups: StockInGroup[];
  /** Recorded more than expected: a line added (or taken back) twice. */
  over: StockInGroup[];
  /** Recorded less: a line not (yet) added. */
  under: StockInGroup[];
  /** referenceIds the sandbox recorded more than once, of every movement of the business. */
  duplicateReferenceIds: string[];
}

export function stockInExactlyOnce(
  invoices: readonly PlannedInvoice[],
  movements: readonly StockInMovement[],
  salePrices: SalePrices,
): StockInExactlyOnce {
  const groups = expectedGroups(invoices);
  for (const m of movements) {
    if (!isStockIn(m, salePrices)) continue;
    const key = groupKey(m.itemId, m.action, m.unitPrice);
    const g = groups.get(key) ?? {
      itemId: m.itemId,
      action: m.action,
      unitPrice: m.unitPrice ?? Number.NaN,
      expected: 0,
      recorded: 0,
    };
    g.recorded = round4(g.recorded + m.quantity);
    groups.set(key, g);
  }
  const seen = new Map<string, number>();
  for (const m of movements) if (m.referenceId !== null) seen.set(m.referenceId, (seen.get(m.referenceId) ?? 0) + 1);
  const all = [...groups.values()];
  return {
    groups: all,
    over: all.filter((g) => g.recorded > g.expected),
    under: all.filter((g) => g.recorded < g.expected),
    duplicateReferenceIds: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
  };
}

/** `stockIn.duplicates`: references recorded twice, and (item, action, price) groups holding more than their lines. */
export const duplicatesOf = (e: StockInExactlyOnce) => e.duplicateReferenceIds.length + e.over.length;

/** Every item's quantity on hand as it should be: opening + stocked purchases − sales + restocks. */
export function expectedOnHand(options: {
  items: readonly string[];
  opening: (itemId: string) => number;
  invoices: readonly PlannedInvoice[];
  sold: ReadonlyArray<{ itemId: string; quantity: number }>;
  restocked?: ReadonlyArray<{ itemId: string; quantity: number }>;
}): Map<string, number> {
  const out = new Map(options.items.map((id) => [id, options.opening(id)]));
  const move = (itemId: string, quantity: number) => out.set(itemId, round4((out.get(itemId) ?? 0) + quantity));
  for (const invoice of options.invoices)
    if (!invoice.takenBack) for (const line of invoice.lines) move(line.itemId, line.quantity);
  for (const line of options.sold) move(line.itemId, -line.quantity);
  for (const line of options.restocked ?? []) move(line.itemId, line.quantity);
  return out;
}

export interface QuantityCheck {
  itemId: string;
  expected: number;
  onHand: number | undefined;
}

/** `stockIn.quantityExact`: items whose quantity on hand at the service is the expected one, as a share of items. */
export function quantityExact(
  expected: ReadonlyMap<string, number>,
  onHand: ReadonlyMap<string, number>,
): { share: number; off: QuantityCheck[] } {
  const checks = [...expected].map(([itemId, e]) => ({ itemId, expected: e, onHand: onHand.get(itemId) }));
  const off = checks.filter((c) => c.onHand === undefined || Math.abs(c.onHand - c.expected) > 1e-6);
  return { share: checks.length === 0 ? Number.NaN : (checks.length - off.length) / checks.length, off };
}

/**
 * When the stock-in could first add each line: the pass whose sync first told its invoice confirmed, or, for a line
 * that waited for a person, the moment the mapping of its wording was made (the bench's `mapLine` call).
 */
export function seenTimes(
  invoices: readonly PlannedInvoice[],
  toldAt: (invoice: PlannedInvoice) => number,
  mappedAt: ReadonlyMap<string, number>,
): Array<{ invoice: PlannedInvoice; line: PlannedInvoice['lines'][number]; seenAt: number }> {
  return invoices.flatMap((invoice) =>
    invoice.lines.map((line) => {
      const told = toldAt(invoice);
      const mapped = line.wording ? mappedAt.get(wordingKey(invoice.supplier.pin, line.wording)) : undefined;
      return { invoice, line, seenAt: mapped === undefined ? told : Math.max(told, mapped) };
    }),
  );
}

/**
 * `stockIn.lagP99Seconds`: each added line, from when it could be added to the movement carrying it recorded, in
 * scaled seconds. Lines are carried as the stock section carries sold lines (by quantity, per item and action, in
 * order), here per price too: the ledger merges only lines of one price.
 */
export function addedLag(
  lines: ReadonlyArray<{ line: { itemId: string; quantity: number; unitPrice: number }; seenAt: number }>,
  movements: readonly StockInMovement[],
  k: number,
): LagSummary {
  const keyed = (itemId: string, price: number | null) => `${itemId}@${price}`;
  const sold: SoldLine[] = lines.map(({ line, seenAt }) => ({
    saleWorkflowId: '',
    itemId: keyed(line.itemId, line.unitPrice),
    action: 'ADD',
    quantity: line.quantity,
    signedAt: seenAt,
  }));
  const recorded: RecordedMovement[] = movements
    .filter((m) => m.action === 'ADD' && m.quantity > 0)
    .map((m) => ({ ...m, itemId: keyed(m.itemId, m.unitPrice) }));
  return lagSummary(carryLines(sold, recorded), k);
}

export interface StockInRequests {
  /** POST /v1/stock/adjustments in the window, less the sales' movements recorded in it, plus the item lists. */
  attributed: number;
  /** The stock-in's movements recorded, plus the item lists: what it cost at the least. */
  recorded: number;
  adjustments: number;
  saleMovements: number;
  stockInMovements: number;
  probes: number;
  itemLists: number;
}

/**
 * The stock-in's compliance requests from the sandbox's log and records over one window: every stock adjustment
 * request that was not a sale's recorded movement (so its probes, retries and refusals count as the stock-in's: an
 * upper bound), plus the item lists it reads to match names (`GET /v1/items`; a sale's worker reads the list once
 * per process, after the kill too: counted here, so again an upper bound).
 */
export function stockInRequests(
  log: ReadonlyArray<{ method: string; route: string; at: number }>,
  movements: readonly StockInMovement[],
  salePrices: SalePrices,
): StockInRequests {
  const adjustments = log.filter((r) => r.method === 'POST' && r.route === '/v1/stock/adjustments').length;
  const itemLists = log.filter((r) => r.method === 'GET' && r.route === '/v1/items').length;
  const stockInMovements = movements.filter((m) => isStockIn(m, salePrices)).length;
  const probes = movements.filter((m) => m.quantity === 0).length;
  const saleMovements = movements.length - stockInMovements - probes;
  return {
    attributed: adjustments - saleMovements + itemLists,
    recorded: stockInMovements + itemLists,
    adjustments,
    saleMovements,
    stockInMovements,
    probes,
    itemLists,
  };
}

export interface LearnedMatches {
  /** Lines in a wording the stock-in had learned from a person's mapping of another line (the share's denominator). */
  lines: number;
  /** Those it matched without a person (a learned or merchant mapping). */
  matched: number;
  /** Of them: lines that waited when the mapping was made, and lines of invoices confirmed after it. */
  waitingThen: number;
  arrivedAfter: number;
  /** Lines the person mapped (one per wording). */
  mappedByPerson: number;
}

/** `stockIn.learnedMatchShare`, from the stock-in's own state at the end (how each line was matched). */
export function learnedMatches(
  invoices: readonly PlannedInvoice[],
  mapped: ReadonlyArray<{ invoice: PlannedInvoice; line: { line: number } }>,
  state: ReadonlyArray<Pick<InvoiceStock, 'purchaseId' | 'lines'>>,
): LearnedMatches {
  const byPerson = new Set(mapped.map((m) => `${m.invoice.id}#${m.line.line}`));
  const stateOf = new Map(state.map((s) => [s.purchaseId, s]));
  const out: LearnedMatches = { lines: 0, matched: 0, waitingThen: 0, arrivedAfter: 0, mappedByPerson: byPerson.size };
  for (const invoice of invoices)
    for (const line of invoice.lines) {
      if (!line.wording || byPerson.has(`${invoice.id}#${line.line}`)) continue;
      out.lines += 1;
      const match = stateOf.get(invoice.id)?.lines[line.line]?.match;
      if (match && 'by' in match && (match.by === 'learned' || match.by === 'merchant')) {
        out.matched += 1;
        if (invoice.half === 'first') out.waitingThen += 1;
        else out.arrivedAfter += 1;
      }
    }
  return out;
}

/**
 * Supplier invoice lines for stock that comes in, built from a business's items so tests, the bench and the demo
 * exercise the three ways a line meets the catalogue: `exact` (its description is an item's name, written the
 * supplier's way), `mapped` (the supplier's own wording, which only a mapping turns into an item) and `unknown` (a
 * fee or a product the merchant does not stock). Each line comes with what it should become, so a caller can
 * install the mapping and predict the stock it adds.
 */
import type { PurchaseLineFixtureInput } from './fixture-schema.js';
import { TAX_BANDS, isTaxTypeCode, roundHalfUp } from './tax.js';

/**
 * What the lines need of an item: a fixture's (input or parsed) or one GET /v1/items lists, as the worker's client
 * reads it (null where the service said nothing).
 */
export interface CatalogueItem {
  id: string;
  name: string;
  /** Absent: lines are priced as if the item sold at 100. */
  unitPrice?: number | null;
  taxTypeCode?: string | null;
  /** The fixture's defaults when absent: tracked, `PENDING`, by the piece (`U`), not deleted. */
  stockTracked?: boolean | null;
  registrationStatus?: string | null;
  unitCode?: string | null;
  deleted?: boolean;
}

const UNKNOWN_PRICE = 100;

export interface ExactLine {
  kind: 'exact';
  line: PurchaseLineFixtureInput;
  /** The one item whose name the description is. */
  itemId: string;
  factor: 1;
}

export interface MappedLine {
  kind: 'mapped';
  line: PurchaseLineFixtureInput;
  /** The item a mapping should name. */
  itemId: string;
  /** Units of the item in one unit of the line: 24 for a carton of 24. */
  factor: number;
}

export interface UnknownLine {
  kind: 'unknown';
  line: PurchaseLineFixtureInput;
  itemId: null;
}

export type SupplierLine = ExactLine | MappedLine | UnknownLine;

/** A mapping of a supplier line, in the shape the stock-in's mappings take. */
export type SupplierLineMapping = { supplierPin: string; by: 'description' | 'code'; key: string } & (
  { itemId: string; factor: number } | { notStock: true }
);

export interface LineOptions {
  quantity?: number;
  unitPrice?: number;
  taxRate?: number;
  hsCode?: string | null;
  /** The supplier's own code of the line. */
  itemCode?: string;
}

/**
 * Case, spacing and punctuation aside, as a stock-in compares names. The sandbox's own reading of "a unique
 * normalised name": it emulates from the contract, not from the worker's code.
 */
export function normaliseName(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** An item's name as a supplier's system prints it: upper case, words two spaces apart. */
function supplierSpelling(name: string): string {
  const spelled = name.trim().split(/\s+/).join('  ').toUpperCase();
  // Upper-casing can change a letter's normal form (ß becomes SS): then the name as it is still matches.
  return normaliseName(spelled) === normaliseName(name) ? spelled : name;
}

function taxRateOf(item: CatalogueItem): number {
  return typeof item.taxTypeCode === 'string' && isTaxTypeCode(item.taxTypeCode)
    ? TAX_BANDS[item.taxTypeCode].rate
    : 16;
}

function itemOf(items: readonly CatalogueItem[], itemId: string): CatalogueItem {
  const item = items.find((i) => i.id === itemId);
  if (!item) throw new Error(`${itemId} is not one of the items given`);
  return item;
}

/** Throws unless `description` names none of the items: a mapped or unknown line must not match by name. */
function matchingNoItem(items: readonly CatalogueItem[], description: string): string {
  const name = normaliseName(description);
  const same = items.find((i) => !i.deleted && normaliseName(i.name) === name);
  if (same) throw new Error(`"${description}" is the name of item ${same.id}: it would match by name`);
  return description;
}

function lineOf(
  description: string,
  defaults: { quantity: number; unitPrice: number; taxRate: number },
  options: LineOptions,
): PurchaseLineFixtureInput {
  return {
    description,
    hsCode: options.hsCode ?? null,
    quantity: options.quantity ?? defaults.quantity,
    unitPrice: options.unitPrice ?? defaults.unitPrice,
    taxRate: options.taxRate ?? defaults.taxRate,
    ...(options.itemCode === undefined ? {} : { itemCode: options.itemCode }),
  };
}

/** A line whose description is the item's name in the supplier's spelling; the name must pick that item alone. */
export function exactLine(items: readonly CatalogueItem[], itemId: string, options: LineOptions = {}): ExactLine {
  const item = itemOf(items, itemId);
  const name = normaliseName(item.name);
  const namesakes = items.filter((i) => !i.deleted && normaliseName(i.name) === name);
  if (namesakes.length !== 1) {
    throw new Error(`the name of ${itemId} is shared by ${namesakes.map((i) => i.id).join(', ')}: not an exact line`);
  }
  // A supplier buys in below the shelf price.
  const defaults = {
    quantity: 10,
    unitPrice: roundHalfUp((item.unitPrice ?? UNKNOWN_PRICE) * 0.8),
    taxRate: taxRateOf(item),
  };
  return { kind: 'exact', line: lineOf(supplierSpelling(item.name), defaults, options), itemId, factor: 1 };
}

/** A pack of `factor` of the item in the supplier's wording (default "CTN 24x <NAME>"), matching no item's name. */
export function mappedLine(
  items: readonly CatalogueItem[],
  itemId: string,
  options: LineOptions & { factor?: number; description?: string } = {},
): MappedLine {
  const item = itemOf(items, itemId);
  const factor = options.factor ?? 24;
  if (!(factor > 0)) throw new Error(`factor must be more than 0, got ${factor}`);
  const description = matchingNoItem(items, options.description ?? `CTN ${factor}x ${item.name.toUpperCase()}`);
  const defaults = {
    quantity: 2,
    unitPrice: roundHalfUp((item.unitPrice ?? UNKNOWN_PRICE) * factor * 0.75),
    taxRate: taxRateOf(item),
  };
  return { kind: 'mapped', line: lineOf(description, defaults, options), itemId, factor };
}

/** A line that is no item (default "Delivery charge"): a fee, or a product the merchant does not stock. */
export function unknownLine(
  items: readonly CatalogueItem[],
  options: LineOptions & { description?: string } = {},
): UnknownLine {
  const description = matchingNoItem(items, options.description ?? 'Delivery charge');
  return {
    kind: 'unknown',
    line: lineOf(description, { quantity: 1, unitPrice: 500, taxRate: 16 }, options),
    itemId: null,
  };
}

/** Items a stock-in can add to: registered, stock tracked, not deleted. */
function stockable(items: readonly CatalogueItem[]): CatalogueItem[] {
  return items.filter((i) => !i.deleted && (i.stockTracked ?? true) && i.registrationStatus === 'REGISTERED');
}

/**
 * One line of each case an invoice meets: two exact lines, a carton of 24 of an item sold by the piece (mapped),
 * and a delivery charge (unknown). The three items differ, so each line's stock can be told apart. With
 * `codePrefix`, the stock lines carry the supplier's code (`itemCode`) and the fee none.
 */
export function supplierLines(
  items: readonly CatalogueItem[],
  options: { codePrefix?: string } = {},
): [ExactLine, ExactLine, MappedLine, UnknownLine] {
  const candidates = stockable(items).filter((i) => {
    const name = normaliseName(i.name);
    return items.filter((other) => !other.deleted && normaliseName(other.name) === name).length === 1;
  });
  const byThePiece = candidates.find((i) => (i.unitCode ?? 'U') === 'U');
  const [first, second] = candidates.filter((i) => i !== byThePiece);
  if (!byThePiece || !first || !second) {
    throw new Error(
      'supplier lines need three registered stock-tracked items with distinct names, one sold by the piece',
    );
  }
  const code = (item: CatalogueItem, suffix = '') =>
    options.codePrefix === undefined
      ? {}
      : { itemCode: `${options.codePrefix}-${normaliseName(item.name).replaceAll(' ', '-').toUpperCase()}${suffix}` };
  return [
    exactLine(items, first.id, code(first)),
    exactLine(items, second.id, { quantity: 6, ...code(second) }),
    mappedLine(items, byThePiece.id, code(byThePiece, '-CTN24')),
    unknownLine(items),
  ];
}

/** The lines as a purchase takes them (the fixture's `lines`, or the inspector's addPurchase). */
export function purchaseLines(lines: readonly SupplierLine[]): PurchaseLineFixtureInput[] {
  return lines.map((l) => ({ ...l.line }));
}

/** Units each item gains once every line is settled (mapped lines mapped, unknown ones not stock): quantity × factor. */
export function unitsAdded(lines: readonly SupplierLine[]): Record<string, number> {
  const added: Record<string, number> = {};
  for (const l of lines) {
    if (l.kind === 'unknown') continue;
    added[l.itemId] = roundHalfUp((added[l.itemId] ?? 0) + l.line.quantity * l.factor, 4);
  }
  return added;
}

/**
 * The mapping that settles a mapped line (to its item) or an unknown one (not stock): by the supplier's code when
 * the line carries one, else by its description, unless `by` says.
 */
export function mappingFor(
  supplierPin: string,
  line: MappedLine | UnknownLine,
  by: 'description' | 'code' = line.line.itemCode === undefined ? 'description' : 'code',
): SupplierLineMapping {
  const key = by === 'code' ? line.line.itemCode : line.line.description;
  if (key === undefined) throw new Error(`"${line.line.description}" carries no itemCode to map by`);
  const target = line.kind === 'mapped' ? { itemId: line.itemId, factor: line.factor } : { notStock: true as const };
  return { supplierPin, by, key, ...target };
}

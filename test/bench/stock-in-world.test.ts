/**
 * The stock-in section's world: a fixture the sandbox accepts, invoices whose lines the stock-in matches by name but
 * for a tenth in the suppliers' own wordings (which match no item), every wording met before the mapping is made.
 */
import { namesOf } from '../helpers/item-names.js';
import { describe, expect, it } from 'vitest';
import { parseFixture } from '../../sandbox/fixture.js';
import { PurchaseFixtureSchema } from '../../sandbox/compliance/fixture-schema.js';
import { MappingTable, matchLine, normalise } from '../../workflows/stock-in/matching.js';
import {
  linesToMap,
  purchaseFixture,
  stockInWorld,
  wordingKey,
  type StockInWorldOptions,
} from '../../tools/bench/stock-in-world.js';
import { itemId } from '../../tools/bench/stock-world.js';

const options = (invoices: number, wordingsPerSupplier: number): StockInWorldOptions => ({
  businessId: 'biz_stockin_t',
  items: 30,
  invoices,
  linesPerInvoice: 5,
  suppliers: 5,
  wordingsPerSupplier,
  takeBackEvery: 20,
  requestsPerWindow: 120,
  windowMs: 15_000,
  seed: 29,
  tag: 't',
});

describe.each([
  ['quick', 40, 2],
  ['full', 200, 4],
])('the %s world', (_name, invoices, wordings) => {
  const world = stockInWorld(options(invoices, wordings));
  const catalogue = world.catalogue.map((c) => ({
    id: itemId(world.tenant.businessId, c),
    name: `Grocery ${c.suffix}`,
  }));
  const lines = world.invoices.flatMap((v) => v.lines.map((l) => ({ invoice: v, line: l })));

  it('is a fixture the sandbox accepts, its items named as the lines are', () => {
    const fixture = parseFixture({ compliance: world.fixture }).compliance;
    const business = fixture.businesses[0]!;
    expect(business.items.map((i) => ({ id: i.id, name: i.name }))).toEqual(catalogue);
    expect(business.branches.map((b) => b.name)).toEqual(['Main']);
  });

  it('has invoices of five distinct items, a tenth of the lines in a supplier’s own wording', () => {
    expect(world.invoices).toHaveLength(invoices);
    for (const v of world.invoices) {
      expect(v.lines).toHaveLength(5);
      expect(new Set(v.lines.map((l) => l.itemId)).size).toBe(5);
      expect(PurchaseFixtureSchema.safeParse(purchaseFixture(v, world.branchId)).success).toBe(true);
    }
    expect(lines.filter((l) => l.line.wording).length).toBe(lines.length / 10);
  });

  it('words every other line as its item’s name (matched by it), and the suppliers’ own wordings as none', () => {
    const none = new MappingTable();
    for (const { invoice, line } of lines) {
      const match = matchLine(none, namesOf(catalogue), invoice.supplier.pin, { ...line, code: null });
      if (line.wording) {
        expect(match).toBeUndefined();
        expect(catalogue.some((c) => normalise(c.name) === normalise(line.description))).toBe(false);
      } else expect(match).toEqual({ itemId: line.itemId, factor: 1, by: 'name' });
    }
    // In the suppliers' several styles, not one.
    expect(new Set(lines.filter((l) => !l.line.wording).map((l) => l.line.description)).size).toBeGreaterThan(30);
  });

  it('prices every line at a supplier’s price, below its item’s selling price', () => {
    const selling = new Map(world.catalogue.map((c) => [itemId(world.tenant.businessId, c), c.unitPrice]));
    expect(lines.every((l) => l.line.unitPrice < selling.get(l.line.itemId)!)).toBe(true);
  });

  it('meets every wording in the first half, maps one line of each, and takes back a twentieth of the first half', () => {
    const toMap = linesToMap(world.invoices);
    expect(toMap).toHaveLength(5 * wordings);
    expect(toMap.every((m) => m.invoice.half === 'first')).toBe(true);
    const mapped = new Set(toMap.map((m) => wordingKey(m.invoice.supplier.pin, m.line.wording!)));
    const second = lines.filter((l) => l.invoice.half === 'second' && l.line.wording);
    expect(second.length).toBeGreaterThan(0);
    expect(second.every((l) => mapped.has(wordingKey(l.invoice.supplier.pin, l.line.wording!)))).toBe(true);
    // A wording stands for one item, whichever invoice carries it.
    const items = new Map<string, string>();
    for (const { invoice, line } of lines.filter((l) => l.line.wording)) {
      const key = wordingKey(invoice.supplier.pin, line.wording!);
      expect(items.get(key) ?? line.itemId).toBe(line.itemId);
      items.set(key, line.itemId);
    }
    expect(world.invoices.filter((v) => v.takenBack)).toHaveLength(invoices / 2 / 20);
    expect(world.invoices.filter((v) => v.takenBack).every((v) => v.half === 'first')).toBe(true);
  });
});

it('refuses a world whose second half meets a wording the first did not', () => {
  expect(() => stockInWorld(options(20, 2))).toThrow(/leave wordings out of the first half/);
});

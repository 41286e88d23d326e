import { namesOf } from '../../helpers/item-names.js';
import { describe, expect, it } from 'vitest';
import { stockInSchemas, type Mapping } from '../../../src/contracts/stock-in.js';
import { ComplianceFixtureSchema } from '../../../sandbox/compliance/fixture-schema.js';
import {
  exactLine,
  mappedLine,
  mappingFor,
  normaliseName,
  purchaseLines,
  supplierLines,
  unitsAdded,
  unknownLine,
  type CatalogueItem,
} from '../../../sandbox/compliance/supplier-lines.js';
import { DEMO, DEMO_STOCK_IN, defaultComplianceFixture } from '../../../sandbox/default-fixture.js';
import { MappingTable, matchLine } from '../../../workflows/stock-in/matching.js';
import { fastFixture } from './harness.js';

const nairobi = defaultComplianceFixture.businesses.find((b) => b.id === DEMO.businesses.nairobi)!;
const items: CatalogueItem[] = nairobi.items;
const PIN = 'P051234567X';
const I = DEMO.items;

describe('supplier lines built from a business’s items', () => {
  it('gives two exact lines, a carton of 24 of an item sold by the piece, and a fee, on three different items', () => {
    const [first, second, mapped, fee] = supplierLines(items);
    expect([first.kind, second.kind, mapped.kind, fee.kind]).toEqual(['exact', 'exact', 'mapped', 'unknown']);
    expect(mapped).toMatchObject({ itemId: I.milk, factor: 24, line: { description: 'CTN 24x FRESH MILK 500ML' } });
    expect(new Set([first.itemId, second.itemId, mapped.itemId]).size).toBe(3);
    expect(fee).toMatchObject({ itemId: null, line: { description: 'Delivery charge', quantity: 1 } });
    // Written the supplier's way, yet the same name once case and spacing are set aside.
    const exactItem = items.find((i) => i.id === first.itemId)!;
    expect(first.line.description).not.toBe(exactItem.name);
    expect(normaliseName(first.line.description)).toBe(normaliseName(exactItem.name));
    // Only registered, stock-tracked items: a stock-in can add to them.
    const chosen = [first, second, mapped].map((l) => nairobi.items.find((i) => i.id === l.itemId)!);
    expect(chosen.every((i) => i.stockTracked && i.registrationStatus === 'REGISTERED')).toBe(true);
  });

  it('carries the supplier’s codes on the stock lines only when asked', () => {
    expect(supplierLines(items).every((l) => l.line.itemCode === undefined)).toBe(true);
    const coded = supplierLines(items, { codePrefix: 'SUP' });
    expect(coded.map((l) => l.line.itemCode)).toEqual([
      'SUP-SUGAR-2KG',
      'SUP-COOKING-OIL-1L',
      'SUP-FRESH-MILK-500ML-CTN24',
      undefined,
    ]);
  });

  it('prices at the tax rate of the item’s band', () => {
    expect(exactLine(items, I.milk).line.taxRate).toBe(0);
    expect(exactLine(items, I.sugar).line.taxRate).toBe(16);
    expect(exactLine(items, I.lpgRefill).line.taxRate).toBe(8);
    expect(exactLine(items, I.sugar, { unitPrice: 199, quantity: 3 }).line).toMatchObject({
      unitPrice: 199,
      quantity: 3,
    });
  });

  it('refuses a mapped or unknown line that would match an item by name, and an exact line of a shared name', () => {
    expect(() => mappedLine(items, I.milk, { description: 'fresh MILK 500ml.' })).toThrow(/would match by name/);
    expect(() => unknownLine(items, { description: 'SUGAR 2KG' })).toThrow(/would match by name/);
    const twins: CatalogueItem[] = [...items, { id: 'itm_twin', name: 'sugar  2KG', unitPrice: 1 }];
    expect(() => exactLine(twins, I.sugar)).toThrow(/shared by/);
    expect(() => exactLine(items, 'itm_nope')).toThrow(/not one of the items/);
    expect(() => supplierLines(items.slice(0, 1))).toThrow(/three registered stock-tracked items/);
  });

  it('says what each item gains once every line is settled', () => {
    const lines = supplierLines(items);
    expect(unitsAdded(lines)).toEqual({
      [lines[0].itemId]: lines[0].line.quantity,
      [lines[1].itemId]: lines[1].line.quantity,
      [I.milk]: lines[2].line.quantity * 24,
    });
  });

  it('builds lines a purchase takes, in the fixture and at run time', () => {
    const fixture = fastFixture((f) => {
      const business = f.businesses!.find((b) => b.id === DEMO.businesses.nairobi)!;
      business.purchases = [
        {
          id: 'pur_lines',
          supplier: { name: 'Supplier', pin: PIN },
          supplierInvoiceNumber: 'S-1',
          invoiceDate: '2025-06-01',
          branchId: DEMO.branches.nairobiCbd,
          lines: purchaseLines(supplierLines(items, { codePrefix: 'S' })),
        },
      ];
    });
    const parsed = ComplianceFixtureSchema.parse(fixture);
    const purchase = fixture.businesses!.find((b) => b.id === DEMO.businesses.nairobi)!.purchases![0]!;
    purchase.lines[0] = { ...purchase.lines[0]!, itemCode: '' };
    expect(ComplianceFixtureSchema.safeParse(fixture).error?.issues[0]?.path.slice(-2)).toEqual([0, 'itemCode']);
    const lines = parsed.businesses.find((b) => b.id === DEMO.businesses.nairobi)!.purchases[0]!.lines;
    expect(lines.map((l) => l.itemCode)).toEqual([
      'S-SUGAR-2KG',
      'S-COOKING-OIL-1L',
      'S-FRESH-MILK-500ML-CTN24',
      undefined,
    ]);
  });
});

describe('the lines as the stock-in’s matcher reads them', () => {
  const catalogue = items.filter((i) => !i.deleted).map(({ id, name }) => ({ id, name }));

  it('matches exact lines by name alone and leaves the others to a mapping, which settles them', () => {
    const [first, second, mapped, fee] = supplierLines(items, { codePrefix: 'SUP' });
    const none = new MappingTable();
    const read = (table: MappingTable, l: (typeof first)['line']) =>
      matchLine(table, namesOf(catalogue), PIN, { description: l.description, code: l.itemCode ?? null });
    expect(read(none, first.line)).toEqual({ itemId: first.itemId, factor: 1, by: 'name' });
    expect(read(none, second.line)).toEqual({ itemId: second.itemId, factor: 1, by: 'name' });
    expect(read(none, mapped.line)).toBeUndefined();
    expect(read(none, fee.line)).toBeUndefined();

    const merchant = (m: ReturnType<typeof mappingFor>): Mapping => ({
      ...stockInSchemas().mapping.parse(m),
      source: 'merchant',
    });
    const table = new MappingTable([merchant(mappingFor(PIN, mapped)), merchant(mappingFor(PIN, fee))]);
    expect(mappingFor(PIN, mapped)).toEqual({
      supplierPin: PIN,
      by: 'code',
      key: 'SUP-FRESH-MILK-500ML-CTN24',
      itemId: I.milk,
      factor: 24,
    });
    expect(mappingFor(PIN, fee)).toEqual({
      supplierPin: PIN,
      by: 'description',
      key: 'Delivery charge',
      notStock: true,
    });
    expect(read(table, mapped.line)).toEqual({ itemId: I.milk, factor: 24, by: 'merchant' });
    expect(read(table, fee.line)).toEqual({ notStock: true, by: 'merchant' });
    expect(() => mappingFor(PIN, fee, 'code')).toThrow(/no itemCode/);
  });

  it('reads the demo’s stock-in invoices the same way', () => {
    for (const invoice of DEMO_STOCK_IN.invoices) {
      const table = new MappingTable();
      const matched = invoice.lines.map((l) =>
        matchLine(table, namesOf(catalogue), DEMO_STOCK_IN.supplier.pin, {
          description: l.line.description,
          code: l.line.itemCode ?? null,
        }),
      );
      expect(matched).toEqual([
        { itemId: I.sugar, factor: 1, by: 'name' },
        { itemId: I.cookingOil, factor: 1, by: 'name' },
        undefined,
        undefined,
      ]);
    }
  });
});

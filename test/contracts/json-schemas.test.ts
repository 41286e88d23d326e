/**
 * The JSON Schema files in docs/schemas/ are what the generator renders from the zod schemas now: a change to a
 * sale's inputs that is not published fails here (run `npx tsx tools/schemas/main.ts`).
 */
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LINE_AMOUNT_MAX, SALE_QUANTITY_MAX, SALE_UNIT_PRICE_MAX } from '../../src/contracts/compliance-rules.js';
import { renderSchemas } from '../../tools/schemas/schemas.js';

const docs = fileURLToPath(new URL('../../docs/schemas/', import.meta.url));

describe('published JSON Schemas of a sale input', () => {
  it.each(renderSchemas().map(({ file, text }) => [file, text]))(
    'docs/schemas/%s is what the generator writes now',
    async (file, text) => {
      expect(await readFile(`${docs}${file}`, 'utf8').catch(() => `(missing ${file})`)).toBe(text);
    },
  );

  it('holds no other file (a schema no longer generated is not left behind)', async () => {
    expect((await readdir(docs)).sort()).toEqual(
      renderSchemas()
        .map((s) => s.file)
        .sort(),
    );
  });

  it('publishes draft 2020-12 with an id, a title, strict objects and the finite bounds of a line', () => {
    const sale = JSON.parse(renderSchemas().find((s) => s.file === 'sale-input.schema.json')!.text);
    expect(sale).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: expect.stringMatching(/\/sale-input\.schema\.json$/),
      title: expect.any(String),
      additionalProperties: false,
      required: ['businessId', 'traderInvoiceNumber', 'saleDate', 'lines'],
    });
    expect(sale.properties.lines).toMatchObject({ minItems: 1, maxItems: 500, items: { additionalProperties: false } });
    expect(sale.properties.lines.items.properties.quantity).toMatchObject({
      type: 'number',
      exclusiveMinimum: 0,
      maximum: SALE_QUANTITY_MAX,
    });
    expect(sale.properties.lines.items.properties.unitPrice).toMatchObject({
      type: 'number',
      minimum: 0,
      maximum: SALE_UNIT_PRICE_MAX,
    });
    expect(sale.properties.lines.items.properties.unitPrice.description).toContain(String(LINE_AMOUNT_MAX));
  });

  it("publishes the stock-in's mapLine and putMappings arguments: an item or not stock, one branch each, strict", () => {
    const read = (file: string) => JSON.parse(renderSchemas().find((s) => s.file === file)!.text);
    const mapLine = read('stock-in-map-line.schema.json');
    // Strict objects joined by allOf would refuse every value: each branch must be whole on its own.
    expect(mapLine.allOf).toBeUndefined();
    expect(mapLine.anyOf).toMatchObject([
      { additionalProperties: false, required: ['purchaseId', 'line', 'itemId'] },
      { additionalProperties: false, required: ['purchaseId', 'line', 'notStock'] },
    ]);
    expect(mapLine.anyOf[0].properties.factor).toMatchObject({ default: 1, exclusiveMinimum: 0 });
    expect(mapLine.anyOf[1].properties.notStock).toMatchObject({ const: true });

    const mapping = read('stock-in-mapping.schema.json');
    expect(mapping.anyOf.map((branch: { required: string[] }) => branch.required)).toEqual([
      ['supplierPin', 'by', 'key', 'itemId'],
      ['supplierPin', 'by', 'key', 'notStock'],
    ]);
    const put = read('stock-in-put-mappings.schema.json');
    expect(put).toMatchObject({ additionalProperties: false, required: ['mappings'] });
    expect(put.properties.mappings).toMatchObject({ type: 'array', maxItems: 10_000, items: { anyOf: mapping.anyOf } });
    expect(put.properties.replace).toMatchObject({ type: 'boolean', default: false });
  });
});

/**
 * The JSON Schema files of the inputs of a sale and of its refund (docs/schemas/), rendered from the zod schemas the
 * workflows, the sales client and the compliance client check with (src/contracts/sale-input.ts): a caller in another
 * language validates against exactly what the worker accepts. Rules JSON Schema cannot state (a real calendar date, a
 * duration's value, the decimal places, a line's quantity × unitPrice and the sale's total) are in the descriptions;
 * the workflows check them all and name the field they refuse.
 */
import { z } from 'zod';
import { saleSchemas } from '../../src/contracts/sale-input.js';
import { stockLedgerSchemas } from '../../src/contracts/stock-ledger.js';
import { catalogueSchemas } from '../../src/contracts/catalogue-import.js';
import { stockInSchemas } from '../../src/contracts/stock-in.js';
import { fiscalDaySchemas } from '../../src/contracts/fiscal-day.js';

/** Where the files say they live: an address that names them without promising a server. */
const ID_BASE = 'https://example.invalid/etims-temporal-worker/schemas/';

interface PublishedSchema {
  file: string;
  title: string;
  schema: z.ZodType;
}

const { saleInput, refundInput, refundRequest, cancelArgs, itemFixedArgs, awaitReceiptRequest } = saleSchemas();

export const PUBLISHED_SCHEMAS: readonly PublishedSchema[] = [
  { file: 'sale-input.schema.json', title: 'Sale input (saleWorkflow argument)', schema: saleInput },
  { file: 'refund-input.schema.json', title: 'Refund input (refundWorkflow argument)', schema: refundInput },
  { file: 'refund-request.schema.json', title: 'Refund request (refund update argument)', schema: refundRequest },
  { file: 'cancel.schema.json', title: 'Cancel (cancel update argument)', schema: cancelArgs },
  { file: 'item-fixed.schema.json', title: 'Item fixed (itemFixed update argument)', schema: itemFixedArgs },
  {
    file: 'await-receipt.schema.json',
    title: 'Await receipt (awaitReceipt update argument)',
    schema: awaitReceiptRequest,
  },
  {
    file: 'settle-movement.schema.json',
    title: "Settle movement (the stock ledger's settleMovement update argument)",
    schema: stockLedgerSchemas().settleMovementArgs,
  },
  {
    file: 'catalogue-import-input.schema.json',
    title: 'Catalogue import input (catalogueImportWorkflow argument)',
    schema: catalogueSchemas().input,
  },
  {
    file: 'catalogue-chunk.schema.json',
    title: "Catalogue chunk (the catalogue import's addChunk update argument)",
    schema: catalogueSchemas().chunk,
  },
  {
    file: 'stock-in-map-line.schema.json',
    title: "Map a line (the stock-in's mapLine update argument)",
    schema: stockInSchemas().mapLineArgs,
  },
  {
    file: 'stock-in-put-mappings.schema.json',
    title: "Put mappings (the stock-in's putMappings update argument)",
    schema: stockInSchemas().putMappingsArgs,
  },
  {
    file: 'stock-in-mapping.schema.json',
    title: "A mapping (one of putMappings' mappings; a bucket's listMappings answers them with their source)",
    schema: stockInSchemas().mapping,
  },
  {
    file: 'till-close.schema.json',
    title: "A till's close (the day book's matchTillClose update argument)",
    schema: fiscalDaySchemas().tillClose,
  },
];

/** Each file's name and its exact text (2-space JSON, trailing newline), as checked in. */
export function renderSchemas(): Array<{ file: string; text: string }> {
  return PUBLISHED_SCHEMAS.map(({ file, title, schema }) => {
    // The input side: what a caller sends.
    const { $schema, description, ...body } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' });
    const document = { $schema, $id: `${ID_BASE}${file}`, title, description, ...body };
    return { file, text: `${JSON.stringify(document, null, 2)}\n` };
  });
}

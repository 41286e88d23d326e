/** One import workflow per business and file; each chunk of its rows goes to a chunk workflow of its own. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { ITEM_FIELD_MAX_LENGTH } from './compliance-rules.js';
import { nonEmpty } from './sale-input.js';

export const CATALOGUE_IMPORT_WORKFLOW_TYPE = 'catalogueImportWorkflow';
export const CATALOGUE_CHUNK_WORKFLOW_TYPE = 'catalogueChunkWorkflow';

/** Rows per chunk: one update's argument and one chunk workflow's input stay a few tens of kilobytes. */
export const CATALOGUE_CHUNK_ROWS_MAX = 250;
/** 10,000 rows: the import's history holds every chunk it took (a few megabytes at most). */
export const CATALOGUE_IMPORT_CHUNKS_MAX = 40;
export const CATALOGUE_IMPORT_ROWS_MAX = CATALOGUE_IMPORT_CHUNKS_MAX * CATALOGUE_CHUNK_ROWS_MAX;

/** `importId`: a digest of the business and the file's rows, so the same file imported again is the same import. */
export function catalogueImportWorkflowId(businessId: string, importId: string): string {
  return `catalogue-import:${businessId}:${importId}`;
}

export function catalogueChunkWorkflowId(importWorkflowId: string, index: number): string {
  return `${importWorkflowId}:chunk-${index}`;
}

/** At most the characters the service takes of an item field (C66), saying how many the cell has. */
const itemTextMax = (field: keyof typeof ITEM_FIELD_MAX_LENGTH) => {
  const max = ITEM_FIELD_MAX_LENGTH[field];
  return z.string().max(max, {
    error: (issue) => `must be at most ${max} characters (it has ${String(issue.input).length})`,
  });
};

/** Text of an item field the service stores: not empty, and no longer than it takes. */
const itemText = (field: keyof typeof ITEM_FIELD_MAX_LENGTH) =>
  nonEmpty().pipe(itemTextMax(field)).meta({ minLength: 1, maxLength: ITEM_FIELD_MAX_LENGTH[field] });

const catalogueRowSchema = z.strictObject({
  externalId: itemText('externalId').describe(
    "The merchant's own id of the item: one item per business and externalId.",
  ),
  name: itemText('name'),
  sku: itemTextMax('sku').optional(),
  taxTypeCode: nonEmpty().describe("A code of the service's taxType code list."),
  taxCategory: itemText('taxCategory').optional(),
  productTypeCode: itemText('productTypeCode')
    .optional()
    .describe('A code of the productType code list; without it, no registration.'),
  classificationCode: itemText('classificationCode')
    .optional()
    .describe('An item classification of the service; without it, none.'),
  unitCode: itemText('unitCode').optional().describe('A code of the quantityUnit code list.'),
  packagingUnitCode: itemText('packagingUnitCode').optional().describe('A code of the packagingUnit code list.'),
  unitPrice: z.number().min(0, 'must be 0 or more'),
  stockTracked: z.boolean().optional(),
  branchId: nonEmpty().optional().describe('The branch to register for (id or authorityBhfId); default the first.'),
});

const wholeNumber = (min: 0 | 1) => z.number().int('must be a whole number').min(min, `must be ${min} or more`);

const catalogueChunkSchema = z.strictObject({
  index: wholeNumber(0),
  rows: z
    .array(z.strictObject({ line: z.number().int().min(0), row: catalogueRowSchema }))
    .min(1, 'must have at least 1 row')
    .max(CATALOGUE_CHUNK_ROWS_MAX, `must have at most ${CATALOGUE_CHUNK_ROWS_MAX} rows`),
});

const catalogueImportInputSchema = z
  .strictObject({
    businessId: nonEmpty().describe('The business whose catalogue it is.'),
    importId: nonEmpty().describe("The import's own id: the CLI and the TypeScript client use a digest of the rows."),
    items: wholeNumber(1).max(CATALOGUE_IMPORT_ROWS_MAX).describe('Rows of the file.'),
    chunks: wholeNumber(1)
      .max(CATALOGUE_IMPORT_CHUNKS_MAX, `must be at most ${CATALOGUE_IMPORT_CHUNKS_MAX}`)
      .describe(`Chunks of at most ${CATALOGUE_CHUNK_ROWS_MAX} rows the rows come in, through the addChunk update.`),
  })
  .describe(
    'The input of a catalogue import (catalogueImportWorkflow), id catalogue-import:<businessId>:<importId>; ' +
      'its rows follow in chunks through the addChunk update.',
  );

const schemas = { row: catalogueRowSchema, chunk: catalogueChunkSchema, input: catalogueImportInputSchema };

/** Behind a function: the workflow sandbox freezes what a shared module's exports reach (see saleSchemas). */
export function catalogueSchemas(): typeof schemas {
  return schemas;
}

export type CatalogueRow = z.output<typeof catalogueRowSchema>;

/** A row's fields (a CSV file's columns), in the order a template lists them. */
export const CATALOGUE_ROW_FIELDS = Object.keys(catalogueRowSchema.shape) as ReadonlyArray<keyof CatalogueRow>;
export type CatalogueChunk = z.output<typeof catalogueChunkSchema>;

export type CatalogueImportInput = z.output<typeof catalogueImportInputSchema>;

/** An import's budget when its window's rate is not known: the service's 120 requests a minute. */
export const CATALOGUE_DEFAULT_REQUESTS_PER_MINUTE = 120;

/**
 * What a chunk's pace learned, handed to the next chunk (and across the import's continue-as-new): a later version
 * reads what an earlier one wrote, so a field is only ever added, optional, with its default where it is read
 * (docs/catalogue.md, "State carried").
 */
export interface CataloguePace {
  /** The pace the chunk ended at (rows a second): for people reading the history; the next chunk derives its own. */
  rowsPerSecond: number;
  /** Requests a second the rest of the application sent, from the service's window; default 0 (none seen). */
  othersPerSecond?: number;
}

export interface CatalogueChunkInput {
  businessId: string;
  importWorkflowId: string;
  chunk: CatalogueChunk;
  pace?: CataloguePace;
}

export const CATALOGUE_OUTCOMES = [
  'registered',
  'already_registered',
  'needs_product_type',
  'needs_classification',
  'refused',
  'conflict',
] as const;
export type CatalogueOutcome = (typeof CATALOGUE_OUTCOMES)[number];

export interface CatalogueItemResult {
  line: number;
  externalId: string;
  outcome: CatalogueOutcome;
  /** The service's id of the item; null when it was never created (refused). */
  itemId: string | null;
  /** The service's reason (refused), or the fields the service holds otherwise (conflict). */
  reason: string | null;
}

export interface CatalogueChunkResult {
  index: number;
  results: CatalogueItemResult[];
  /** Requests the chunk asked for: creations, item-list reads, and one registration per item it asked to register. */
  requests: number;
  pace?: CataloguePace;
}

/**
 * The import's own state, carried to its next run when it continues as new (the workflow's second argument, never a
 * caller's): only between chunks, so no chunk is in flight. Written by one version and read by a later one: a field is
 * only ever added, optional, with its default where it is read (docs/catalogue.md, "State carried").
 */
export interface CatalogueImportCarried {
  /** Chunks settled: every index below this one. */
  settledChunks: number;
  /** Rows of the settled chunks with an outcome, those among them not registered, and the requests they took. */
  done: number;
  failed: number;
  requests: number;
  outcomes: Partial<Record<CatalogueOutcome, number>>;
  /** When the import's first run started: epoch milliseconds. */
  startedAt: number;
  pace?: CataloguePace;
  /** Chunks taken through the update and not started yet, in no order. */
  waiting?: CatalogueChunk[];
}

export interface CatalogueImportProgress {
  businessId: string;
  importId: string;
  state: 'receiving' | 'importing' | 'done';
  items: number;
  chunks: number;
  chunksReceived: number;
  /** Rows with an outcome, and among them those not registered. */
  done: number;
  failed: number;
  outcomes: Record<CatalogueOutcome, number>;
  requests: number;
  startedAt: string;
  /** From the rows a minute the import has been getting through; null until it has some. */
  secondsLeft: number | null;
}

/** A chunk, idempotent by its index: a caller that died while sending sends them all again. */
export const addCatalogueChunkUpdate = defineUpdate<{ accepted: boolean }, [CatalogueChunk]>('addChunk');
/** Sent by a chunk workflow as each row settles. */
export const catalogueRowsDoneSignal =
  defineSignal<[{ index: number; done: number; failed: number; requests: number }]>('rowsDone');
export const getCatalogueImportProgressQuery = defineQuery<CatalogueImportProgress>('getProgress');

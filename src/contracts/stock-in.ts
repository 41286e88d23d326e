/**
 * Stock that comes in: one workflow per business turns confirmed supplier invoices into `ADD` lines for the ledger of
 * each invoice's branch (docs/stock-in.md). It also keeps the merchant's mappings of supplier lines to items. Workflow
 * code imports this file: no Node APIs.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';

export const STOCK_IN_WORKFLOW_TYPE = 'stockInWorkflow';

/** The queue is in the id, as a ledger's: the stock-in hands its lines to the ledgers of its own fleet. */
export function stockInWorkflowId(taskQueue: string, businessId: string): string {
  return `stock-in:${taskQueue}:${businessId}`;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A business's stock-in settings; a business without them takes no stock in (its ERP may post it). */
const stockInSettingsSchema = z.strictObject({
  /** Invoices dated before it are opening stock: never added. */
  from: z.string().regex(DATE, 'must be a date in the form YYYY-MM-DD'),
  /** An invoice with a line waiting for a mapping adds none of its lines until every line is settled. */
  allOrNothing: z.boolean().default(false),
});
export type StockInSettings = z.output<typeof stockInSettingsSchema>;

/** A supplier line as the stock-in keeps it: what the service lists, less the amounts it does not need. */
export interface SupplierLine {
  description: string;
  /** The supplier's own code of the line, where the service lists one (C69). */
  code: string | null;
  hsCode: string | null;
  quantity: number;
  unitPrice: number;
}

/** A supplier invoice as the purchases sync tells it to the stock-in. */
export interface SeenPurchase {
  id: string;
  status: string;
  supplierPin: string;
  supplierName: string;
  supplierInvoiceNumber: string;
  invoiceDate: string;
  /** The branch as the service names it (its name, C70); null: the business's first branch. */
  branch: string | null;
  lines: SupplierLine[];
}

/** Sent by the purchases sync with signal-with-start: the stock-in starts with the first invoice it is told. */
export interface PurchasesSeen {
  purchases: SeenPurchase[];
  /** As the worker is configured now: the stock-in follows the latest. */
  settings: StockInSettings;
  /** The ledgers' queue (the sync's own). */
  taskQueue: string;
}

const text = (max: number, what: string) =>
  z.string().trim().min(1, `must not be empty`).max(max, `must be at most ${max} characters`).describe(what);

const factorSchema = z
  .number({ error: 'must be a number' })
  .positive('must be more than 0')
  .max(100_000, 'must be at most 100000')
  .default(1);

/** A mapping's key: a supplier (PIN) and one of its lines, by description or by the supplier's code. */
const mappingKeySchema = z.strictObject({
  supplierPin: text(40, "The supplier's tax PIN, as its invoices show it."),
  by: z
    .enum(['description', 'code'], { error: 'must be description or code' })
    .describe('What of the line the key matches: its description (normalised) or the supplier’s code.'),
  key: text(300, 'The line’s description, or its code.'),
});

/** The merchant's item a supplier line is, or that it is not stock (a fee, a service). */
const mappingTargetSchema = z.union(
  [
    z.strictObject({
      itemId: text(100, 'The id of the merchant’s item at the compliance service.'),
      factor: factorSchema.describe(
        'Units of the item in one unit of the line: 24 for a carton of 24 sold by the piece.',
      ),
    }),
    z.strictObject({ notStock: z.literal(true).describe('The line is not stock: a fee, a service.') }),
  ],
  { error: 'must name an item ({"itemId": "…", "factor": 1}) or say {"notStock": true}, not both' },
);

const mappingSchema = z
  .intersection(mappingKeySchema, mappingTargetSchema)
  .describe('One mapping of a supplier line to the merchant’s item (or to not stock).');

export type MappingKey = z.output<typeof mappingKeySchema>;
export type MappingTarget = z.output<typeof mappingTargetSchema>;
export type MappingInput = z.input<typeof mappingSchema>;
export type Mapping = z.output<typeof mappingSchema> & {
  /** `merchant`: set through a door (CSV, CLI, client); `learned`: an operator settled a line once. */
  source: 'merchant' | 'learned';
};

/** Case, spacing and punctuation aside: "MILK  500ml." and "milk 500ML" are one name. */
export function normalise(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** One key per mapping: the supplier's PIN (any case), and the description normalised or the code trimmed. */
export function mappingKeyOf(m: MappingKey): string {
  const key = m.by === 'description' ? normalise(m.key) : m.key.trim();
  return `${m.supplierPin.trim().toUpperCase()}|${m.by}|${key}`;
}

/** Which line of which invoice. */
const lineRef = {
  purchaseId: text(100, 'The supplier invoice’s id at the service.'),
  line: z
    .int('must be a whole number')
    .min(0, 'must be 0 or more')
    .describe('The line’s position on the invoice, from 0.'),
};

const mapLineArgsSchema = z
  .intersection(z.strictObject(lineRef), mappingTargetSchema)
  .describe('Maps one waiting line to an item (or marks it not stock); the mapping is remembered for the supplier.');
const correctLineArgsSchema = z
  .strictObject({
    ...lineRef,
    itemId: mappingTargetSchema.options[0].shape.itemId,
    factor: factorSchema,
    invoiceDate: z
      .string()
      .regex(DATE, 'must be a date in the form YYYY-MM-DD')
      .optional()
      .describe('The invoice’s date: finds an invoice settled over an hour ago in its purchases book.'),
  })
  .describe('Moves what a stocked line added from the item it was mapped to onto another, once.');
const putMappingsArgsSchema = z
  .strictObject({
    mappings: z.array(mappingSchema).max(10_000, 'at most 10000 mappings at once'),
    /** Replace every merchant mapping (learned ones stay), rather than add to and change them. */
    replace: z.boolean().default(false),
  })
  .describe('Adds or changes the merchant’s mappings (an import).');
const removeMappingArgsSchema = mappingKeySchema.describe('Removes one mapping.');

/** What a `purchasesSeen` signal must carry: a signal cannot be refused, so one that is not this is dropped. */
const purchasesSeenSchema = z.looseObject({
  purchases: z.array(
    z.looseObject({
      id: z.string().min(1),
      status: z.string(),
      supplierPin: z.string(),
      supplierName: z.string(),
      supplierInvoiceNumber: z.string(),
      invoiceDate: z.string(),
      branch: z.string().nullable(),
      lines: z.array(
        z.looseObject({
          description: z.string(),
          code: z.string().nullable(),
          hsCode: z.string().nullable(),
          quantity: z.number().finite().min(0),
          unitPrice: z.number().finite().min(0),
        }),
      ),
    }),
  ),
  settings: stockInSettingsSchema,
  taskQueue: z.string().min(1),
});

const schemas = {
  purchasesSeen: purchasesSeenSchema,
  mappingKey: mappingKeySchema,
  mappingTarget: mappingTargetSchema,
  mapping: mappingSchema,
  mapLineArgs: mapLineArgsSchema,
  correctLineArgs: correctLineArgsSchema,
  putMappingsArgs: putMappingsArgsSchema,
  removeMappingArgs: removeMappingArgsSchema,
  settings: stockInSettingsSchema,
};

/**
 * Behind a function, never exported as such: the workflow sandbox freezes what a shared module's exports reach, and a
 * frozen zod schema fails when it first parses (see saleSchemas).
 */
export function stockInSchemas(): typeof schemas {
  return schemas;
}

/** Where an invoice's stock stands. */
export type InvoiceStockState =
  /** Confirmed, every stock line handed to its branch's ledger (lines marked not stock aside). */
  | 'added'
  /** Confirmed, a line waits for a mapping (with all-or-nothing, nothing is added yet). */
  | 'waiting'
  /** Confirmed, no line is stock. */
  | 'not_stock'
  /** Dated before the business's start date: opening stock, never added. */
  | 'before_start'
  /** Added, then left `confirmed`: what it added was taken back. */
  | 'taken_back'
  /** Seen, never confirmed. */
  | 'not_confirmed';

export interface InvoiceLineState {
  line: number;
  description: string;
  code: string | null;
  hsCode: string | null;
  quantity: number;
  unitPrice: number;
  /** How it was matched; absent while it waits. */
  match?: { itemId: string; factor: number; by: 'merchant' | 'learned' | 'name' | 'operator' } | { notStock: true };
  /** Units of the item handed to the ledger in this confirmation (quantity × factor), net of corrections. */
  added: number;
  /** While it waits: items whose name resembles the line's, best first. */
  candidates?: Array<{ itemId: string; name: string }>;
}

export interface InvoiceStock {
  purchaseId: string;
  supplierPin: string;
  supplierName: string;
  supplierInvoiceNumber: string;
  invoiceDate: string;
  branch: string | null;
  /** The review status last seen. */
  status: string;
  state: InvoiceStockState;
  /** Times it reached `confirmed` (each round's references differ). */
  round: number;
  lines: InvoiceLineState[];
  /** Movements of the invoice handed over, by reference, for corrections and their derivation. */
  corrections: number;
  updatedAt: string;
}

export interface StockInTotals {
  invoicesAdded: number;
  linesAdded: number;
  linesWaiting: number;
  linesTakenBack: number;
  matchedBy: { merchant: number; learned: number; name: number; operator: number };
}

export interface StockInState {
  businessId: string;
  settings: StockInSettings | null;
  invoices: InvoiceStock[];
  totals: StockInTotals;
}

/** The schema of StockInCarry; how it may change: docs/stock-in.md, "What a run carries to the next". */
export const STOCK_IN_CARRY_SCHEMA = 2;

export interface StockInCarry {
  schema: number;
  settings: StockInSettings | null;
  taskQueue: string;
  invoices: InvoiceStock[];
  /** Carried until schema 2; since, in their buckets (empty): a run handed some writes them there first. */
  mappings: Mapping[];
  /** Mappings each bucket held at its last write (schema 2). */
  mappingCounts?: Record<number, number>;
  totals: StockInTotals;
}

export interface StockInInput {
  businessId: string;
  carried?: StockInCarry;
  /**
   * A settled invoice stays in the stock-in `minutes` after its last change, then goes to its purchases book, in
   * batches of at least `batch` (default 60 minutes, 25): what the stock-in holds is the last hour's invoices.
   */
  settledKept?: { minutes: number; batch: number };
  /** How far it runs ahead of its ledgers, where not as `STOCK_PACE` (src/contracts/stock-ledger.ts) says. */
  pace?: { ledgerLines?: number; handOverLines?: number; waitMs?: number };
}

export const purchasesSeenSignal = defineSignal<[PurchasesSeen]>('purchasesSeen');
export const mapLineUpdate = defineUpdate<InvoiceStock, [z.input<typeof mapLineArgsSchema>]>('mapLine');
export const correctLineUpdate = defineUpdate<InvoiceStock, [z.input<typeof correctLineArgsSchema>]>('correctLine');
export const putMappingsUpdate = defineUpdate<{ mappings: number }, [z.input<typeof putMappingsArgsSchema>]>(
  'putMappings',
);
export const removeMappingUpdate = defineUpdate<{ removed: boolean }, [z.input<typeof removeMappingArgsSchema>]>(
  'removeMapping',
);
export const getStockInStateQuery = defineQuery<StockInState>('getState');

/** `AttentionReason` while an invoice's line waits for a mapping. */
export const STOCK_IN_NEEDS_MAPPING = 'stock_in_needs_mapping';

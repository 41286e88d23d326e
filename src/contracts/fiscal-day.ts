// The day book of a control unit, and a till's close matched against it: docs/fiscal-day.md. Workflows import it.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';

export const FISCAL_DAY_WORKFLOW_TYPE = 'fiscalDayWorkflow';

/** Africa/Nairobi keeps UTC+3 the whole year: no daylight saving moves a day's end. */
const NAIROBI_OFFSET_MS = 3 * 3_600_000;
/** Documents still on their way when the day ends (an answer or a callback behind): a day closes this long after. */
export const DEFAULT_FISCAL_DAY_GRACE = '30 minutes';
/** A closed day takes late documents (as amendments) this long, then ends; a later one is delivered by itself. */
export const DEFAULT_FISCAL_DAY_KEEP_OPEN = '7 days';

/** Per tax type letter (`-` where the service names none), in cents: summed as integers, never as floats. */
export type TaxBands = Record<string, { taxable: number; tax: number; total: number }>;

export interface TaxedLine {
  taxTypeCode?: string | null;
  taxableAmount: number;
  taxAmount: number;
  total: number;
}

const cents = (amount: number) => Math.round(amount * 100);

export function taxBandsOf(lines: readonly TaxedLine[]): TaxBands {
  const bands: TaxBands = {};
  for (const line of lines)
    addBand(bands, line.taxTypeCode ?? '-', {
      taxable: cents(line.taxableAmount),
      tax: cents(line.taxAmount),
      total: cents(line.total),
    });
  return bands;
}

export function addBands(into: TaxBands, from: TaxBands, sign = 1): void {
  for (const [letter, band] of Object.entries(from))
    addBand(into, letter, { taxable: sign * band.taxable, tax: sign * band.tax, total: sign * band.total });
}

function addBand(into: TaxBands, letter: string, band: TaxBands[string]): void {
  const sum = (into[letter] ??= { taxable: 0, tax: 0, total: 0 });
  sum.taxable += band.taxable;
  sum.tax += band.tax;
  sum.total += band.total;
}

/** `DD/MM/YYYY` as the receipt prints it, to `YYYY-MM-DD`; undefined for anything else. */
export function isoDateOf(scuDate: string | null | undefined): string | undefined {
  const match = scuDate ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(scuDate) : null;
  return match ? `${match[3]}-${match[2]}-${match[1]}` : undefined;
}

/** The Nairobi date of an instant. */
export function nairobiDate(ms: number): string {
  return new Date(ms + NAIROBI_OFFSET_MS).toISOString().slice(0, 10);
}

/** When a Nairobi day ends (its next midnight), in ms. */
export function dayEndMs(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) + 86_400_000 - NAIROBI_OFFSET_MS;
}

/** The queue is in the id, as the stock ledger's: another fleet keeps a book of its own. */
export function fiscalDayWorkflowId(taskQueue: string, day: FiscalDayKey): string {
  return `fiscal-day:${taskQueue}:${day.businessId}:${day.scuId}:${day.date}`;
}

/** The `FiscalDay` search attribute of a signed document and of its day's book. */
export function fiscalDayAttribute(day: Pick<FiscalDayKey, 'scuId' | 'date'>): string {
  return `${day.date}/${day.scuId}`;
}

export interface FiscalDayKey {
  businessId: string;
  /** The control unit's id as the receipt prints it (`scuId`). */
  scuId: string;
  /** The receipt's `scuDate` as `YYYY-MM-DD`: the day the authority signed it, whatever the sale's own date. */
  date: string;
}

/** One signed document, as its day book counts it: aggregates only, no customer, no lines. */
export interface DayEntry {
  documentId: string;
  traderInvoiceNumber: string;
  /** `NS` sale, `NC` credit note, or what the service says; `?` where it says nothing. */
  label: string;
  receiptNumber: number | null;
  cuInvoiceNo: string | null;
  branchId?: string;
  taxes: TaxBands;
}

/** What signs a document into its day book: the day it belongs to and the entry. */
export interface FiscalDayEntry extends FiscalDayKey {
  entry: DayEntry;
}

/** Documents of one day signed into its book at once: a sale's or refund's own, or those a worker gathered. */
export interface FiscalDayEntries extends FiscalDayKey {
  entries: DayEntry[];
}

/**
 * A day book's workflow task may take this long (the Temporal default is 10 s): after a burst of entries that outran
 * its tasks, the server fails each task it had started, and the one that follows takes every entry since the last
 * task completed (docs/fiscal-day.md, "A burst of entries").
 */
export const FISCAL_DAY_TASK_TIMEOUT = '1 minute';

/** The most entries one signal carries: about 300 bytes each with four tax letters. */
export const DAY_ENTRIES_PER_SIGNAL = 100;

/** What the close's look at the evidence found: the day's signed documents, and the sales sent to the book again. */
export interface DayRecovery {
  signed: number;
  sent: number;
}

/** The signed document's entry, or undefined when its receipt names no control unit (C74: counted nowhere, logged). */
export function fiscalDayEntryOf(
  businessId: string,
  document: {
    id: string;
    traderInvoiceNumber: string;
    taxes?: TaxBands | undefined;
    receipt: {
      scuId: string | null;
      scuDate: string | null;
      receiptNumber: number | null;
      receiptLabel: string | null;
      cuInvoiceNo: string | null;
    } | null;
  },
  signedAtMs: number,
  branchId?: string,
): FiscalDayEntry | undefined {
  const { receipt } = document;
  if (!receipt?.scuId) return undefined;
  return {
    businessId,
    scuId: receipt.scuId,
    date: isoDateOf(receipt.scuDate) ?? nairobiDate(signedAtMs),
    entry: {
      documentId: document.id,
      traderInvoiceNumber: document.traderInvoiceNumber,
      label: receipt.receiptLabel ?? '?',
      receiptNumber: receipt.receiptNumber,
      cuInvoiceNo: receipt.cuInvoiceNo,
      ...(branchId ? { branchId } : {}),
      taxes: document.taxes ?? {},
    },
  };
}

/** How a day is run: set by the worker, carried by the book. */
export interface FiscalDaySettings {
  grace: string;
  keepOpen: string;
  /** `control-unit`: one numbering for NS and NC together (C73); `label`: each label its own. */
  numbering: 'control-unit' | 'label';
  /** `off`: no document is entered in a day book (a fleet whose merchants close their days elsewhere). */
  books?: 'off';
  /**
   * How far the receipts' dates run ahead of this worker's clock: absent in production. The bench and the demo move
   * the sandbox's clock so that its midnight comes within the run, and tell the worker by this much.
   */
  clockAhead?: string;
}

export const DEFAULT_FISCAL_DAY_SETTINGS: FiscalDaySettings = {
  grace: DEFAULT_FISCAL_DAY_GRACE,
  keepOpen: DEFAULT_FISCAL_DAY_KEEP_OPEN,
  numbering: 'control-unit',
};

export interface FiscalDayInput extends FiscalDayKey {
  settings: FiscalDaySettings;
  carried?: FiscalDayCarry;
}

/** A range of receipt numbers, both ends in. */
export interface NumberRange {
  from: number;
  to: number;
}

/** The day's figures: the `getFiscalDay` query, the close and each amendment delivered. Bounded by gaps, not sales. */
export interface FiscalDaySummary extends FiscalDayKey {
  status: 'open' | 'closed';
  closesAt: string;
  closedAt: string | null;
  branchIds: string[];
  /** Documents counted, by label. */
  receipts: Record<string, number>;
  /** Per numbering (`all`, or each label): the first and last receipt number seen, and those never seen between. */
  numbering: Record<string, { first: number; last: number; gaps: NumberRange[]; missing: number }>;
  /** Documents whose receipt carried no number: counted, not placed in the numbering. */
  unnumbered: number;
  taxes: TaxBands;
  amendments: number;
}

/** A day with nothing counted yet. */
export function emptyDay(key: FiscalDayKey, closesAt: string): FiscalDaySummary {
  return {
    businessId: key.businessId,
    scuId: key.scuId,
    date: key.date,
    status: 'open',
    closesAt,
    closedAt: null,
    branchIds: [],
    receipts: {},
    numbering: {},
    unnumbered: 0,
    taxes: {},
    amendments: 0,
  };
}

/**
 * What a book's run hands to the next (continue-as-new): the counted numbers as ranges, written compactly (each range
 * as base-36 `<gap since the last>.<length - 1>`, comma-separated: `2.0` a range of one, two after the last), the
 * unnumbered by id.
 */
export interface FiscalDayCarry {
  schema: 1;
  summary: FiscalDaySummary;
  counted: Record<string, string>;
  unnumberedIds: string[];
  /** Counted after the close and not delivered yet. */
  amendment: { receipts: Record<string, number>; taxes: TaxBands } | null;
}

/** Delivered to the worker's sink; a redelivery of the same fact carries the same `id`. */
export interface FiscalDayEvent {
  id: string;
  type: 'fiscal_day.closed' | 'fiscal_day.amended';
  businessId: string;
  day: FiscalDaySummary;
  /** On `fiscal_day.amended`: what the late documents added. */
  amendment?: { number: number; receipts: Record<string, number>; taxes: TaxBands };
}

/** The close; an amendment by its number; a document delivered by itself (its book ended) by its document id. */
export function fiscalDayEventId(day: FiscalDayKey, amendment?: number | { lateDocumentId: string }): string {
  const stem = `fiscal_day.${day.businessId}.${day.scuId}.${day.date}`;
  if (amendment === undefined) return `${stem}.closed`;
  return typeof amendment === 'number' ? `${stem}.amended.${amendment}` : `${stem}.late.${amendment.lateDocumentId}`;
}

function fiscalDaySchemasOf() {
  const amount = z.number().refine(Number.isFinite, 'a finite number');
  const band = z.strictObject({ taxable: amount, tax: amount, total: amount });
  const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD');
  const tillClose = z.strictObject({
    businessId: z.string().min(1),
    scuId: z.string().min(1),
    date,
    /** Receipts the till issued, by label (`NS`, `NC`). */
    receipts: z.record(z.string().min(1), z.number().int().nonnegative()),
    /** Per tax type letter, in the currency (not cents), as the till's Z report prints them. */
    taxes: z.record(z.string().min(1).max(2), band),
    /** The trader invoice numbers of the till's sales, when it can list them (up to 20,000). */
    invoiceNumbers: z.array(z.string().min(1)).max(20_000).optional(),
  });
  return { tillClose, band };
}

let schemas: ReturnType<typeof fiscalDaySchemasOf> | undefined;
export const fiscalDaySchemas = () => (schemas ??= fiscalDaySchemasOf());

export type TillClose = z.output<ReturnType<typeof fiscalDaySchemasOf>['tillClose']>;

/** Where a till's sale stands when no signed document of the day has its number. */
export type UnsignedState = 'on_its_way' | 'waiting_for_a_person' | 'never_started' | 'signed_another_day' | 'ended';

export interface TillMatch extends FiscalDayKey {
  matched: boolean;
  /** Counts per label that differ (the till's against the book's). */
  receipts: Array<{ label: string; till: number; authority: number }>;
  /** Per letter and amount (in the currency) that differ by a cent or more. */
  taxes: Array<{ letter: string; amount: 'taxable' | 'tax' | 'total'; till: number; authority: number }>;
  /** Invoice numbers the till sold that no signed document of this day has, with where each sale stands. */
  notSigned: Array<{ traderInvoiceNumber: string; state: UnsignedState; detail: string }>;
  /** Signed documents of this day that the till does not list (only when it listed its invoice numbers). */
  notOnTill: Array<{ traderInvoiceNumber: string; cuInvoiceNo: string | null; label: string }>;
  /** Lists cut at this many names each; the counts are whole. */
  listedAtMost: number;
  notSignedCount: number;
  notOnTillCount: number;
}

/** What only Temporal's records tell: the till's invoice numbers against the day's signed sales. */
export type TillSales = Pick<
  TillMatch,
  'notSigned' | 'notOnTill' | 'listedAtMost' | 'notSignedCount' | 'notOnTillCount'
>;

export const fiscalDayEntrySignal = defineSignal<[FiscalDayEntries]>('fiscalDayEntry');
export const getFiscalDayQuery = defineQuery<FiscalDaySummary>('getFiscalDay');
/** An operator closes the day before its time (the demo, an accountant); later documents are amendments. */
export const closeFiscalDayUpdate = defineUpdate<FiscalDaySummary>('closeFiscalDay');
export const matchTillCloseUpdate = defineUpdate<TillMatch, [TillClose]>('matchTillClose');

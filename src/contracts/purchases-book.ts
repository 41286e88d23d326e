/**
 * The purchases books: the supplier invoices of one business dated one day (one of a few shards of them, by id), with
 * what was last delivered of each, the status last told to the stock-in, and what each stocked. They hold, partitioned
 * by date, what the purchases sync and the stock-in would otherwise carry for every invoice a business ever had
 * (docs/purchases-sync.md, "The books"). Workflow code imports this file: no Node APIs.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { LedgerEntry } from './purchases-sync.js';
import type { InvoiceStock } from './stock-in.js';
import { fnv1a } from './stock-in-mappings.js';

export const PURCHASES_BOOK_WORKFLOW_TYPE = 'purchasesBookWorkflow';

/**
 * Books per business and day. Part of every book's id: changing it would lose what the books hold. Four keep a book of
 * a chain receiving 300 stocked invoices a day near 90 KB.
 */
export const PURCHASES_BOOK_SHARDS = 4;

/** Invoices dated longer ago than this are not followed (default of the sync's `horizonDays`). */
export const DEFAULT_PURCHASES_HORIZON_DAYS = 730;

export function purchasesBookShard(purchaseId: string): number {
  return fnv1a(purchaseId) % PURCHASES_BOOK_SHARDS;
}

/** The queue is in the id, as the stock-in's: a fleet's books are its own. */
export function purchasesBookId(taskQueue: string, businessId: string, invoiceDate: string, purchaseId: string) {
  return `purchases-book:${taskQueue}:${businessId}:${invoiceDate}:${purchasesBookShard(purchaseId)}`;
}

/** One invoice as a book holds it; each part absent until first written. */
export interface BookedPurchase {
  /** What was last delivered of it (the sync's ledger entry). */
  entry?: LedgerEntry;
  /** The status last told to the stock-in. */
  told?: string;
  /** The stock-in's record of it, once settled (stocked, not stock, before the start date, taken back). */
  stock?: InvoiceStock;
}

/** A write: each part given replaces the one held; `stock: null` drops the stock record. */
export interface BookWrite {
  id: string;
  invoiceDate: string;
  entry?: LedgerEntry;
  told?: string;
  stock?: InvoiceStock | null;
}

export interface BookRead {
  id: string;
  invoiceDate: string;
}

export const PURCHASES_BOOK_CARRY_SCHEMA = 1;

export interface PurchasesBookInput {
  businessId: string;
  /** The invoice date of the book's invoices (YYYY-MM-DD). */
  date: string;
  /** The book ends once its date is older than this many days: nothing follows such invoices any more. */
  horizonDays: number;
  carried?: { schema: number; records: Record<string, BookedPurchase> };
}

export interface ReadBookArgs {
  ids: string[];
  /** Also the stock records (the stock-in's read); the sync reads entries and statuses told only. */
  stock?: boolean;
}

export const readBookUpdate = defineUpdate<Record<string, BookedPurchase>, [ReadBookArgs]>('read');
export const writeBookUpdate = defineUpdate<{ records: number }, [{ records: Omit<BookWrite, 'invoiceDate'>[] }]>(
  'write',
);
export const getBookQuery = defineQuery<{ date: string; records: number; stocked: number }>('getBook');

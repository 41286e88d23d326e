/** The purchases (supplier invoices) sync's contract. Workflow code imports this file: no Node APIs. */
import { defineQuery } from '@temporalio/workflow';
import type { Purchase } from '../compliance/schemas.js';
import { WORKFLOW_TASK_QUEUE } from './task-queues.js';

export const PURCHASES_SYNC_WORKFLOW_TYPE = 'purchasesSyncWorkflow';

/** The service's maximum page size (1 to 100): the fewest calls per run. */
export const PURCHASES_PAGE_SIZE = 100;

/** A page costs about 120 KB of history (listed, then delivered): ten keep a run near 1 MB, quick to replay. */
export const PURCHASES_PAGES_PER_RUN = 10;

export function purchasesScheduleId(businessId: string, taskQueue: string = WORKFLOW_TASK_QUEUE): string {
  return taskQueue === WORKFLOW_TASK_QUEUE
    ? `purchases-sync:${businessId}`
    : `purchases-sync:${taskQueue}:${businessId}`;
}

export type PurchaseDocument = Purchase;

export interface ListedPurchase {
  purchase: PurchaseDocument;
  /** Short hash of status, confirmationError and totals: it changes exactly when an event is due. */
  fingerprint: string;
}

/** A redelivery of the same fact carries the same `id` (`purchaseEventId`): docs/purchases-sync.md, "Events". */
export interface PurchaseEvent {
  id: string;
  type: 'purchase.received' | 'purchase.status_changed';
  businessId: string;
  purchase: PurchaseDocument;
  /** On `purchase.status_changed`: the status last delivered. */
  previousStatus?: string;
}

/** What was last delivered for one invoice: a tuple keeps the ledger (by purchase id) compact. */
export type LedgerEntry = [fingerprint: string, version: number, status: string];
export type PurchaseLedger = Record<string, LedgerEntry>;

export function purchaseEventId(purchaseId: string, version: number, fingerprint: string): string {
  return `purchase.${purchaseId}.v${version}.${fingerprint}`;
}

export interface PurchasesSyncOptions {
  /** Deliver events to the worker's sink (default true); false where a sync only feeds the stock-in. */
  deliver?: boolean;
  pageSize?: number;
  pagesPerRun?: number;
  /** Attempts of one delivery batch in a run before its events wait for the next run (default 8, about 3 minutes). */
  deliveryAttempts?: number;
  /** First delay between delivery attempts, doubling up to 30 s (default '1 second'). */
  deliveryRetryInterval?: string;
  /** Invoices dated this many days back or less are listed in every sync (default 7). */
  windowDays?: number;
  /** Invoices dated longer ago are not followed (default 730, DEFAULT_PURCHASES_HORIZON_DAYS). */
  horizonDays?: number;
  /** The sweep lists every invoice of the horizon once in this many hours of syncs (default 24). */
  sweepHours?: number;
}

export interface PurchasesSyncCounts {
  pages: number;
  seen: number;
  /** Invoices not delivered before. */
  newInvoices: number;
  statusChanges: number;
  delivered: number;
  /** Left to the next run. */
  pending: number;
}

/**
 * One listing of a sync: the open review statuses, the recent window, a slice of the sweep, or (a business's first
 * sync, or the first after an upgrade from a ledger carried whole) every invoice of the horizon.
 */
export interface ListingPass {
  name: 'pulled' | 'pending_review' | 'recent' | 'sweep' | 'full' | 'left_review' | 'pending';
  status?: string;
  fromDate?: string;
  toDate?: string;
}

/** Where the sweep stands, handed from sync to sync: it walks the horizon back from the window, one slice a sync. */
export interface SweepState {
  /** The newest invoice date of the next slice; null: start again from the window's edge. */
  next: string | null;
  /** When the sweep last reached the horizon's end (the workflow's clock, ISO). */
  completedAt: string | null;
  /** When this sync started (the workflow's clock, ISO): the next one sizes its slice by the time since. */
  syncedAt: string;
}

export interface PurchasesSyncCarry {
  pulled: boolean;
  passes: ListingPass[];
  /** The pass being listed, and its cursor. */
  pass: number;
  cursor: string | null;
  counts: PurchasesSyncCounts;
  /** A delivery of this sync gave up: the remaining events wait for the next one. */
  sinkDown: boolean;
  runs: number;
  /** The sweep as this sync hands it on. */
  sweep: SweepState;
  /**
   * Invoices in review (`pulled`, `pending_review`) by invoice date: as the previous sync left them, and as this one
   * finds them. One that left review is listed again by its date in this sync, so its new status is seen at once.
   */
  inReview: { before: InReview; now: InReview };
  /**
   * Invoices whose event this sync could not deliver (the sink down), by invoice date: the next sync lists their dates
   * again. `overflow`: more than it remembers, so the next sync lists the whole horizon.
   */
  pending?: { now: InReview; overflow: boolean };
  /** The business takes no stock in (its settings say so): not asked again in this sync. */
  stockInOff?: boolean;
  /**
   * A ledger and statuses told handed over whole (a result of shape `{ledger, told}`): moved into the books as this
   * sync lists their invoices, then gone.
   */
  migrating?: { ledger: PurchaseLedger; told: Record<string, string> };
}

export interface PurchasesSyncInput {
  businessId: string;
  options?: PurchasesSyncOptions;
  /** Set by the workflow when it continues as new. */
  carry?: PurchasesSyncCarry;
}

/** Purchase ids by invoice date. */
export type InReview = Record<string, string[]>;

/** The schedule hands it to the next sync as `workflowInfo().lastResult`: what each invoice was is in the books. */
export interface PurchasesSyncResult {
  businessId: string;
  counts: PurchasesSyncCounts;
  sweep: SweepState;
  inReview: InReview;
  /** Invoices whose event is still to be delivered, by date (absent: none). */
  pending?: InReview;
  pendingOverflow?: boolean;
}

export type PurchasesSyncProgress = { businessId: string; pass: string | null } & Pick<
  PurchasesSyncCarry,
  'counts' | 'cursor' | 'sinkDown' | 'runs'
>;

export const getPurchasesSyncProgressQuery = defineQuery<PurchasesSyncProgress>('getProgress');

export interface PullPurchasesInput {
  businessId: string;
}

export interface PullPurchasesResult {
  pulled: number | null;
}

export interface ListPurchasesPageInput {
  businessId: string;
  cursor: string | null;
  pageSize: number;
  /** The review status and invoice dates to list (absent: all). */
  status?: string;
  fromDate?: string;
  toDate?: string;
}

export interface ListPurchasesPageResult {
  purchases: ListedPurchase[];
  nextCursor: string | null;
}

export interface DeliverPurchaseEventsInput {
  events: PurchaseEvent[];
}

/** Events delivered, in order. */
export interface DeliverPurchaseEventsResult {
  delivered: number;
}

/** Heartbeat details of the delivery activity and of its failures. */
export type DeliveryProgress = DeliverPurchaseEventsResult;

/** The events a delivery's progress (a heartbeat's or a failure's details) counts as delivered of `total`; else 0. */
export function deliveredOf(details: unknown, total: number): number {
  const delivered = (details as Partial<DeliveryProgress> | undefined)?.delivered;
  return typeof delivered === 'number' && Number.isInteger(delivered) && delivered >= 0 && delivered <= total
    ? delivered
    : 0;
}

export const PURCHASE_DELIVERY_FAILURES = {
  /** 5xx, timeout, network: retried, then left to the next sync. */
  unavailable: 'sink_unavailable',
  /** A 4xx other than 408 / 429: not retried in this sync. */
  refused: 'sink_refused',
  notConfigured: 'sink_not_configured',
} as const;

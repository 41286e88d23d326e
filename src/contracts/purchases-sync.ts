/**
 * What the purchases (supplier invoices) sync shares between its workflow, its activities, the sinks, the schedule
 * and the client: inputs, the ledger, events, the result, its query. Workflow code imports this file, so it holds
 * only types, constants and `@temporalio/workflow` definitions: no zod, no Node APIs.
 */
import { defineQuery } from '@temporalio/workflow';
import { WORKFLOW_TASK_QUEUE } from './task-queues.js';

export const PURCHASES_SYNC_WORKFLOW_TYPE = 'purchasesSyncWorkflow';

/** The service's maximum page size (1 to 100): the fewest calls per run. */
export const PURCHASES_PAGE_SIZE = 100;

/**
 * Pages listed by one run before it continues as new. A page of 100 supplier invoices is about 60 KB in the list
 * activity's result, and the same records go again into the delivery activity's input when they are new: about
 * 120 KB and a dozen events per page. Ten pages keep a run's history near 1 MB, quick to replay when a worker
 * loses its cache, far below the 4 MB at which the server suggests continuing and the 50 MB at which it
 * terminates. What a run carries over (cursor, two halves of the ledger, counts) is small by comparison.
 */
export const PURCHASES_PAGES_PER_RUN = 10;

/** One Temporal Schedule per business (and per deployment, when a deployment uses its own task queue). */
export function purchasesScheduleId(businessId: string, taskQueue: string = WORKFLOW_TASK_QUEUE): string {
  return taskQueue === WORKFLOW_TASK_QUEUE
    ? `purchases-sync:${businessId}`
    : `purchases-sync:${taskQueue}:${businessId}`;
}

// ---------------------------------------------------------------------------------------------------------
// The supplier invoice as it is passed on
// ---------------------------------------------------------------------------------------------------------

export interface PurchaseLine {
  description: string;
  hsCode: string | null;
  quantity: number;
  unitPrice: number;
  taxRate: number;
  taxAmount: number;
  total: number;
}

/** A supplier invoice as the compliance service lists it (fields the service adds are passed on too). */
export interface PurchaseDocument {
  /** The service's document id: the only key the sync trusts (supplier invoice numbers collide across suppliers). */
  id: string;
  status: string;
  supplier: { name: string | null; pin: string | null };
  supplierInvoiceNumber: string;
  invoiceDate: string;
  branch: string | null;
  totals: { subtotal: number; vat: number; total: number };
  lines: PurchaseLine[];
  confirmationError: string | null;
  [extra: string]: unknown;
}

/** A listed invoice with the fingerprint of what the sync reports about it (computed in the activity). */
export interface ListedPurchase {
  purchase: PurchaseDocument;
  /** Short hash of status, confirmationError and totals: it changes exactly when an event is due. */
  fingerprint: string;
}

// ---------------------------------------------------------------------------------------------------------
// Events and the ledger
// ---------------------------------------------------------------------------------------------------------

export type PurchaseEventType = 'purchase.received' | 'purchase.status_changed';

/**
 * What the business's own system receives. `id` is stable: a redelivery of the same fact carries the same id, so
 * the receiver de-duplicates on it; `purchase.<purchaseId>.v<n>.<fingerprint>`, where n counts the invoice's
 * reported states (0 = received). The version keeps a status that goes back (A → B → A) from reusing A's id.
 */
export interface PurchaseEvent {
  id: string;
  type: PurchaseEventType;
  businessId: string;
  purchase: PurchaseDocument;
  /** On `purchase.status_changed`: the status last delivered. */
  previousStatus?: string;
}

/** What was last delivered for one invoice: [fingerprint, version, status]. A tuple keeps the ledger compact. */
export type LedgerEntry = [fingerprint: string, version: number, status: string];

/** Delivered state per purchase id; about 40 bytes an invoice in a payload. */
export type PurchaseLedger = Record<string, LedgerEntry>;

export function purchaseEventId(purchaseId: string, version: number, fingerprint: string): string {
  return `purchase.${purchaseId}.v${version}.${fingerprint}`;
}

// ---------------------------------------------------------------------------------------------------------
// Input, progress and result
// ---------------------------------------------------------------------------------------------------------

export interface PurchasesSyncOptions {
  /** 1 to 100 (default 100). */
  pageSize?: number;
  /** Pages per run before continuing as new (default PURCHASES_PAGES_PER_RUN). */
  pagesPerRun?: number;
  /** Attempts of one delivery batch in a run before its events wait for the next run (default 8, about 3 minutes). */
  deliveryAttempts?: number;
  /** First delay between delivery attempts, doubling up to 30 s (default '1 second'). */
  deliveryRetryInterval?: string;
}

export interface PurchasesSyncCounts {
  pages: number;
  /** Invoices listed. */
  seen: number;
  /** Invoices not delivered before (delivered or not in this run). */
  newInvoices: number;
  /** Invoices whose status, confirmation error or totals differ from what was delivered. */
  statusChanges: number;
  delivered: number;
  /** Events that could not be delivered in this run: the next run delivers them. */
  pending: number;
}

/** What one run carries to the next when it continues as new. */
export interface PurchasesSyncCarry {
  pulled: boolean;
  cursor: string | null;
  /** The previous sync's ledger, less the invoices this sync has listed so far. */
  previous: PurchaseLedger;
  /** The ledger this sync builds: every invoice listed so far, at its delivered state. */
  ledger: PurchaseLedger;
  counts: PurchasesSyncCounts;
  /** A delivery of this sync gave up: the remaining events wait for the next sync. */
  sinkDown: boolean;
  /** Runs of this sync so far (continue-as-new). */
  runs: number;
}

export interface PurchasesSyncInput {
  businessId: string;
  options?: PurchasesSyncOptions;
  /** Set only by the workflow itself when it continues as new. */
  carry?: PurchasesSyncCarry;
}

/**
 * The completion result, which the schedule hands to the next sync as `workflowInfo().lastResult`: the ledger
 * persists between syncs without any store of its own.
 */
export interface PurchasesSyncResult {
  businessId: string;
  ledger: PurchaseLedger;
  counts: PurchasesSyncCounts;
}

export interface PurchasesSyncProgress {
  businessId: string;
  counts: PurchasesSyncCounts;
  /** Where the listing stands (null: at the first page, or done). */
  cursor: string | null;
  sinkDown: boolean;
  runs: number;
}

export const getPurchasesSyncProgressQuery = defineQuery<PurchasesSyncProgress>('getProgress');

// ---------------------------------------------------------------------------------------------------------
// Activities' inputs and results
// ---------------------------------------------------------------------------------------------------------

export interface PullPurchasesInput {
  businessId: string;
}

export interface PullPurchasesResult {
  /** Invoices the service fetched from the authority, when it says. */
  pulled: number | null;
}

export interface ListPurchasesPageInput {
  businessId: string;
  cursor: string | null;
  pageSize: number;
}

export interface ListPurchasesPageResult {
  purchases: ListedPurchase[];
  nextCursor: string | null;
}

export interface DeliverPurchaseEventsInput {
  events: PurchaseEvent[];
}

export interface DeliverPurchaseEventsResult {
  /** Events delivered, in order: always all of them when the activity completes. */
  delivered: number;
}

/** Heartbeat details of the delivery activity, and the details of its failures: how many events are delivered. */
export interface DeliveryProgress {
  delivered: number;
}

/** Failure types of the delivery activity. */
export const PURCHASE_DELIVERY_FAILURES = {
  /** The sink did not take an event (5xx, timeout, network); retried, then left to the next sync. */
  unavailable: 'sink_unavailable',
  /** The sink refused an event (a 4xx other than 408 / 429): not retried in this sync. */
  refused: 'sink_refused',
  /** The worker has no sink configured (PURCHASES_SINK). */
  notConfigured: 'sink_not_configured',
} as const;

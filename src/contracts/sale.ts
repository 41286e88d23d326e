/**
 * The sale process's contract; its inputs are the zod schemas of ./sale-input.ts. A sale closes once signed and its
 * stock handed to the ledger: its result (a SaleState) is the signed record a refund (./refund.ts) reads.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { z } from 'zod';
import type { FiscalDocumentSchema } from '../compliance/schemas.js';
import type { ItemRegistrationOutcome } from './item-registration.js';
import type { StockMove } from './stock-ledger.js';
import type { SaleInput, SaleSchemas } from './sale-input.js';

export const SALE_WORKFLOW_TYPE = 'saleWorkflow';

export type { SaleInput };
export type SaleLineInput = SaleInput['lines'][number];
export type RefundRequest = z.output<SaleSchemas['refundRequest']>;
/** `input` must equal the sale's own, so an update-with-start that found another sale cannot print its receipt. */
export type AwaitReceiptRequest = z.output<SaleSchemas['awaitReceiptRequest']>;

export type SaleStep =
  | 'registering_items'
  | 'creating_sale'
  | 'awaiting_outcome'
  | 'retrying'
  | 'waiting_out_outage'
  | 'awaiting_business'
  | 'parked'
  | 'reporting_stock'
  | 'finding_sale'
  | 'refunding'
  | 'completed'
  | 'cancelled'
  | 'failed';

/** A sale or credit note as the workflow keeps it (without its callback URL). */
export type FiscalDocument = z.output<typeof FiscalDocumentSchema>;
export type ReceiptSummary = NonNullable<FiscalDocument['receipt']>;

/** Operator updates that move a parked sale on. */
export type ParkedAction = 'retry' | 'cancel' | 'itemFixed';

export interface ParkedReason {
  /** e.g. `item_needs_fixing`, `authority_rejected`, `outcome_timeout`. */
  code: string;
  message: string;
  since: string;
  actions: ParkedAction[];
  itemIds?: string[];
}

/** An outage waited out with nobody needing to act: the service's (5xx, 408, 429, timeouts) or the authority's. */
export interface OutageWait {
  side: 'service' | 'authority';
  /** The failure's type or the authority's cause, e.g. `service_unavailable`, `authority_unavailable`. */
  cause: string;
  message: string;
  since: string;
  attempts: number;
}

/** A business no application of the worker's tenants serves yet: the sale waits, sending nothing, until one does. */
export interface BusinessWait {
  /** Why placement refused, e.g. `business biz_x is served by no compliance application of tenants.json`. */
  message: string;
  since: string;
  /** Placements refused so far. */
  attempts: number;
}

export interface StockMovementState extends StockMove {
  referenceId: string;
  /** `handed_over` to the branch's stock ledger, then `reported` once it recorded the line. */
  status: 'pending' | 'reported' | 'handed_over';
  movementId?: string;
  /** The stock ledger's workflow id (absent in sales from before the ledger). */
  ledger?: string;
  /** The `referenceId` of the ledger's movement that carried the line. */
  carriedBy?: string;
}

/** A line as sold: what a refund checks against the service's items and puts back in stock. */
export interface SoldLine {
  itemId: string;
  quantity: number;
  unitPrice: number;
}

export interface SaleState {
  step: SaleStep;
  businessId: string;
  traderInvoiceNumber: string;
  /** The branch the sale was filed for, when it named one: a refund restocks there. */
  branchId?: string;
  /** The sale's lines (a refund's are the sale's it reverses). */
  lines?: SoldLine[];
  sale: FiscalDocument | null;
  creditNote: FiscalDocument | null;
  parked: ParkedReason | null;
  /** Optional so that every recorded state parses: absent reads as null. */
  outage?: OutageWait | null;
  /** Optional so that every recorded state parses: absent reads as null. */
  awaitingBusiness?: BusinessWait | null;
  stockMovements: StockMovementState[];
  /** The creation and every retry. */
  submissions: number;
  /** When the sale was signed (workflow time): its refund window counts from here. */
  signedAt: string | null;
  /** Until when it can be refunded (a refund workflow checks), once signed. */
  refundDeadline: string | null;
  history: Array<{ at: string; event: string }>;
}

export interface RefundResult {
  creditNote: FiscalDocument;
  stockMovements: StockMovementState[];
}

/** A hint to re-read the document, never the source of truth. */
export interface CallbackHint {
  /** Null when the body names no document: the workflow reads its document anyway. */
  documentId: string | null;
  event: string | null;
  callbackId: string | null;
}

export const callbackReceivedSignal = defineSignal<[CallbackHint]>('callbackReceived');
/** Sent by a worker whose tenants now serve more businesses: a sale waiting for its business tries placement again. */
export const businessServedSignal = defineSignal('businessServed');
/** Sent by the item-registration workflow to every sale waiting on the item. */
export const itemRegistrationSettledSignal = defineSignal<[ItemRegistrationOutcome]>('itemRegistrationSettled');

export const getSaleStateQuery = defineQuery<SaleState>('getState');
/** The input the sale was started with: how a repeated start is told apart from a conflict. */
export const getSaleInputQuery = defineQuery<SaleInput>('getInput');

export const retryUpdate = defineUpdate<SaleState, []>('retry');
export const cancelUpdate = defineUpdate<SaleState, [z.output<SaleSchemas['cancelArgs']>]>('cancel');
export const itemFixedUpdate = defineUpdate<SaleState, [z.output<SaleSchemas['itemFixedArgs']>]>('itemFixed');

/** The answer of `awaitReceipt`: the receipt values once signed; otherwise the state says why not yet. */
export interface ReceiptAnswer {
  signed: boolean;
  receipt: ReceiptSummary | null;
  /** Why not signed yet, when the sale is parked or waiting out an outage; null otherwise. */
  reason?: string | null;
  state: SaleState;
}

/** Declared with its argument required, as the SDKs' typed overloads need; the sale also takes none (`{}` then). */
export const awaitReceiptUpdate = defineUpdate<ReceiptAnswer, [AwaitReceiptRequest]>('awaitReceipt');

/** One execution per sale: starting it twice finds the existing one. */
export function saleWorkflowId(businessId: string, traderInvoiceNumber: string): string {
  return `sale:${businessId}:${traderInvoiceNumber}`;
}

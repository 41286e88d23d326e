/**
 * The sale process's contract, shared by its workflow, activities, the callback receiver, the client API and the
 * CLIs: type name, id scheme, inputs, state, signals, queries and updates, declared once. The inputs are the zod
 * schemas of ./sale-input.ts; their types are inferred here. Workflow code imports this file: no Node APIs.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { z } from 'zod';
import type { ItemRegistrationOutcome } from './item-registration.js';
import type {
  awaitReceiptRequestSchema,
  cancelArgsSchema,
  itemFixedArgsSchema,
  refundRequestSchema,
  saleInputSchema,
} from './sale-input.js';

/** The workflow type name, for starting by name where importing the workflow function is not wanted. */
export const SALE_WORKFLOW_TYPE = 'saleWorkflow';

// ---------------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------------

export type SaleInput = z.output<typeof saleInputSchema>;
export type CustomerInput = NonNullable<SaleInput['customer']>;
export type SaleLineInput = SaleInput['lines'][number];
export type RefundRequest = z.output<typeof refundRequestSchema>;
/**
 * What a till asks with `awaitReceipt`, alone or as the update of an update-with-start (any SDK): wait up to `wait`
 * for the signed receipt values. `input`, when given, must equal the input the sale was started with: a sale
 * already started under the same invoice number with another input is refused (`sale_input_conflict`, the
 * differing fields named), so an update-with-start that found an existing sale cannot print someone else's receipt.
 */
export type AwaitReceiptRequest = z.output<typeof awaitReceiptRequestSchema>;

// ---------------------------------------------------------------------------------------------------------
// State (the query's answer; plain data, no secrets: callback URLs never appear here)
// ---------------------------------------------------------------------------------------------------------

export type SaleStep =
  | 'registering_items'
  | 'creating_sale'
  | 'awaiting_outcome'
  | 'retrying'
  | 'parked'
  | 'reporting_stock'
  | 'refund_window'
  | 'refunding'
  | 'completed'
  | 'cancelled'
  | 'failed';

export interface ReceiptSummary {
  cuInvoiceNo: string | null;
  receiptNumber: number | null;
  receiptLabel: string | null;
  scuId: string | null;
  scuDate: string | null;
  scuTime: string | null;
  totalReceiptCounter: string | null;
  signature: string | null;
  internalData: string | null;
  verificationUrl: string | null;
  originalCuInvoiceNo: string | null;
}

/** What the workflow keeps of a sale or credit note read from the service. */
export interface FiscalDocument {
  id: string;
  type: string;
  status: string;
  traderInvoiceNumber: string;
  totals: { total: number; taxableAmount: number; taxAmount: number };
  receipt: ReceiptSummary | null;
  error: string | null;
}

/** Operator updates that move a parked sale on (a stock movement waits for its own updates, not a park). */
export type ParkedAction = 'retry' | 'cancel' | 'itemFixed';

export interface ParkedReason {
  /** Stable machine code, e.g. `item_needs_fixing`, `authority_rejected`, `outcome_timeout`. */
  code: string;
  message: string;
  since: string;
  /** Operator updates that can move the sale on. */
  actions: ParkedAction[];
  itemIds?: string[];
}

/**
 * `handed_over`: the line is with its branch's stock ledger, which alone moves stock; it becomes `reported`,
 * naming the movement that carried it (`carriedBy`), once the service recorded that movement.
 */
export type StockMovementStatus = 'pending' | 'reported' | 'handed_over';

export interface StockMovementState {
  referenceId: string;
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  unitPrice: number;
  status: StockMovementStatus;
  movementId?: string;
  /** Since 0.8: the stock ledger the line was handed to (its workflow id). */
  ledger?: string;
  /** Since 0.8: the `referenceId` of the ledger's movement that carried the line, once recorded. */
  carriedBy?: string;
}

export interface SaleState {
  step: SaleStep;
  businessId: string;
  traderInvoiceNumber: string;
  sale: FiscalDocument | null;
  creditNote: FiscalDocument | null;
  parked: ParkedReason | null;
  stockMovements: StockMovementState[];
  /** Submissions of the sale to the authority: the creation and every retry. */
  submissions: number;
  refundDeadline: string | null;
  history: Array<{ at: string; event: string }>;
}

export interface RefundResult {
  creditNote: FiscalDocument;
  stockMovements: StockMovementState[];
}

// ---------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------

/** A result callback reached the receiver: a hint to re-read the document, never the source of truth. */
export interface CallbackHint {
  /**
   * Null when the callback's body names no document: any body is a hint, and the workflow reads its document anyway.
   */
  documentId: string | null;
  event: string | null;
  callbackId: string | null;
}

export const callbackReceivedSignal = defineSignal<[CallbackHint]>('callbackReceived');
/** Sent by the item-registration workflow to every sale waiting on the item. */
export const itemRegistrationSettledSignal = defineSignal<[ItemRegistrationOutcome]>('itemRegistrationSettled');

export const getSaleStateQuery = defineQuery<SaleState>('getState');
/**
 * The input the sale was started with, as the workflow received it: how a repeated start is told apart from a conflict.
 */
export const getSaleInputQuery = defineQuery<SaleInput>('getInput');

export const refundUpdate = defineUpdate<RefundResult, [RefundRequest]>('refund');
export const retryUpdate = defineUpdate<SaleState, []>('retry');
export const cancelUpdate = defineUpdate<SaleState, [z.output<typeof cancelArgsSchema>]>('cancel');
export const itemFixedUpdate = defineUpdate<SaleState, [z.output<typeof itemFixedArgsSchema>]>('itemFixed');

/** The answer of `awaitReceipt`: the receipt values once signed; otherwise why not yet (the state says). */
export interface ReceiptAnswer {
  /** True when the sale is signed: `receipt` then holds the values to print. */
  signed: boolean;
  receipt: ReceiptSummary | null;
  /** The sale's state when the wait ended: in flight, parked (and why), cancelled or failed. */
  state: SaleState;
}

/** Declared with its argument required, as the SDKs' typed overloads need; the sale also takes none (`{}` then). */
export const awaitReceiptUpdate = defineUpdate<ReceiptAnswer, [AwaitReceiptRequest]>('awaitReceipt');

// ---------------------------------------------------------------------------------------------------------
// Identifiers
// ---------------------------------------------------------------------------------------------------------

/** One execution per sale: starting the same sale twice finds the existing execution. */
export function saleWorkflowId(businessId: string, traderInvoiceNumber: string): string {
  return `sale:${businessId}:${traderInvoiceNumber}`;
}

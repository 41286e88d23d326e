/**
 * Inputs and results of the activities: plain data only (workflow code imports these types and every value crosses
 * the payload converter). Callback URLs never appear here: they carry a capability token.
 */
import type { AuthorityError, ItemNeeds } from '../src/compliance/schemas.js';
import type { CreditNoteReason } from '../src/contracts/compliance-rules.js';
import type { FiscalDocument, SaleInput } from '../src/contracts/sale.js';
import type { ItemRegistrationInput } from '../src/contracts/item-registration.js';
import type { StockLine, StockMove } from '../src/contracts/stock-ledger.js';

/** One reason the tax authority gave for refusing a document (`error.errors[]` of a 422). */
export type AuthorityCause = Pick<AuthorityError, 'code' | 'message' | 'itemId' | 'field'>;

/** Completed with a receipt → signed; pending, ready_to_submit, retrying → in_flight; failed → rejected. */
export type SubmissionOutcome = 'signed' | 'in_flight' | 'rejected' | 'unknown';

/** What a creation or a retry of a sale or credit note led to. */
export interface SubmissionResult {
  outcome: SubmissionOutcome;
  httpStatus: number;
  /** The service answered a repeated Idempotency-Key with the document already filed. */
  replayed: boolean;
  document: FiscalDocument;
  causes: AuthorityCause[];
  /** A result callback URL went with the request: the service will announce the outcome. */
  outcomeAnnounced?: boolean;
}

export interface ItemCheck {
  itemId: string;
  registered: boolean;
  stockTracked: boolean;
  unitPrice: number | null;
}

export interface CheckItemsInput {
  businessId: string;
  itemIds: string[];
  /** Read the service's item list now, not the worker's cache (after a rejection: the list decides). */
  fresh?: boolean;
}

/** What an item still lacks; only an operator can supply it. */
export type RegisterItemResult =
  | { outcome: 'registered' }
  | { outcome: 'needs_fixing'; needs: Pick<ItemNeeds, 'productType' | 'classificationMapping'> };

/** The sale as the compliance service takes it: the workflow's SaleInput without its business and options. */
export type SaleRequest = Omit<SaleInput, 'businessId' | 'options'>;

export interface CreateSaleInput {
  businessId: string;
  /** The sale's workflow id: the callback URL is minted for it. */
  workflowId: string;
  request: SaleRequest;
  idempotencyKey: string;
  /**
   * Fixed once by the workflow for every attempt of this filing: the callback URL's expiry counts from it, so the
   * URL, part of the body the service fingerprints, is the same whichever activity or worker files it. Absent in
   * filings scheduled before it existed: the activity's first scheduled time then.
   */
  callbackAnchorMs?: number;
}

/**
 * `itemIds`: the sale's distinct items, checked (from the worker's registry when it can) before it is filed.
 * `handOver`: once the sale is signed, its lines of stock-tracked items go to the branch's stock ledger from the same
 * activity, so the receipt reaches the workflow with its stock already handed over.
 */
export interface SignSaleInput extends CreateSaleInput {
  itemIds: string[];
  handOver?: SigningHandOver;
}

/** Every line of the sale as its deduction; the activity hands over those of stock-tracked items. */
export interface SigningHandOver {
  lines: StockLine[];
  /** The sale's own task queue: its ledger runs beside it. */
  taskQueue: string;
}

/** Without `submission` nothing was filed; `handedOver` names the ledger that took the signed sale's stock lines. */
export interface SignSaleResult {
  items: ItemCheck[];
  submission?: SubmissionResult;
  handedOver?: { ledgerWorkflowId: string };
}

/** A sale or credit note already filed with the service. */
export interface DocumentRef {
  businessId: string;
  documentId: string;
}

export interface AdjustStockInput extends StockMove {
  businessId: string;
  branchId?: string;
  referenceId: string;
}

export interface AdjustStockResult {
  movementId: string;
  quantityOnHand: number;
  /** How long the attempt waited in the compliance queue before it started: the stock ledger's sense of contention. */
  queuedMs?: number;
}

export interface CreateCreditNoteInput {
  businessId: string;
  /** The sale's workflow id: the callback URL is minted for it. */
  workflowId: string;
  saleId: string;
  /** The credit note's own trader invoice number. */
  traderInvoiceNumber: string;
  returnDate: string;
  reason: CreditNoteReason;
  idempotencyKey: string;
  /** As CreateSaleInput's. */
  callbackAnchorMs?: number;
}

export interface RequestItemRegistrationInput extends ItemRegistrationInput {
  /** The sale to signal when the registration settles. */
  waiterWorkflowId: string;
  /** The registration workflow's task queue: the caller's own; default WORKFLOW_TASK_QUEUE. */
  taskQueue?: string;
}

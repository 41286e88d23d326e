/** Plain data only (workflows import these, values cross the payload converter); never a callback URL (a token). */
import type { AuthorityError, ItemNeeds } from '../src/compliance/schemas.js';
import type { CreditNoteReason } from '../src/contracts/compliance-rules.js';
import type { FiscalDocument, SaleInput, SoldLine, StockMovementState } from '../src/contracts/sale.js';
import type { ItemRegistrationInput } from '../src/contracts/item-registration.js';
import type { ItemCheck } from './item-registry.js';
import type { StockLine, StockMove } from '../src/contracts/stock-ledger.js';

export type { ItemCheck };

/** One reason the tax authority gave for refusing a document (`error.errors[]` of a 422). */
export type AuthorityCause = Pick<AuthorityError, 'code' | 'message' | 'itemId' | 'field'>;

export interface SubmissionResult {
  /** Completed with a receipt → signed; pending, ready_to_submit, retrying → in_flight; failed → rejected. */
  outcome: 'signed' | 'in_flight' | 'rejected' | 'unknown';
  httpStatus: number;
  /** The service answered a repeated Idempotency-Key with the document already filed. */
  replayed: boolean;
  document: FiscalDocument;
  causes: AuthorityCause[];
  /** A result callback URL went with the request: the service will announce the outcome. */
  outcomeAnnounced?: boolean;
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

/** A document filed with a result callback URL, minted for the sale's `workflowId`. */
interface Filing {
  businessId: string;
  workflowId: string;
  idempotencyKey: string;
  /** The callback URL's expiry counts from it, so every attempt sends one body; older filings: first scheduled time. */
  callbackAnchorMs?: number;
}

export interface CreateSaleInput extends Filing {
  request: SaleRequest;
}

/** `handOver`: once signed, the stock-tracked lines go to the branch's ledger from the same activity. */
export interface SignSaleInput extends CreateSaleInput {
  itemIds: string[];
  handOver?: { lines: StockLine[]; taskQueue: string };
  /** Signed in the answer: its day book's entry is sent from here, after the answer. */
  dayBook?: { taskQueue: string };
}

/** Without `submission` nothing was filed; `handedOver` names the ledger that took the signed sale's stock lines. */
export interface SignSaleResult {
  items: ItemCheck[];
  submission?: SubmissionResult;
  handedOver?: { ledgerWorkflowId: string };
  /** The day book the signed sale's entry was sent to; absent: the sale enters it itself. */
  dayBook?: { workflowId: string };
}

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

export interface CreateCreditNoteInput extends Filing {
  saleId: string;
  traderInvoiceNumber: string;
  returnDate: string;
  reason: CreditNoteReason;
}

export interface RequestItemRegistrationInput extends ItemRegistrationInput {
  /** The sale to signal when the registration settles. */
  waiterWorkflowId: string;
  /** The registration workflow's task queue: the caller's own; default WORKFLOW_TASK_QUEUE. */
  taskQueue?: string;
}

export interface FindSignedSaleInput {
  businessId: string;
  traderInvoiceNumber: string;
}

/** What a refund learns of its sale from the sale's workflow: its signed record, a refusal, or no record at all. */
export type FoundSale =
  | {
      found: 'record';
      sale: FiscalDocument;
      lines: SoldLine[];
      signedAt: string | null;
      refundDeadline: string | null;
      branchId?: string;
      stockMovements: StockMovementState[];
    }
  /** `openForRefund`: the sale takes the refund itself (it keeps a refund window open). */
  | { found: 'refused'; reason: string; openForRefund?: true }
  /** Never started, or past the namespace's retention: only the service can say (with the sale's id). */
  | { found: 'no_record' };

/** The service's record of a sale: the document, the day it was sold and its lines. */
export interface ServiceSaleRecord {
  document: FiscalDocument;
  saleDate: string | null;
  lines: SoldLine[];
}

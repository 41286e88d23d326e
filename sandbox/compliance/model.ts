import { randomBytes } from 'node:crypto';
import type { ReceiptValues } from './receipts.js';

/**
 * The sandbox's records. Each API resource is kept in exactly the shape the API returns (the `view`
 * objects), next to the internal facts the inspection API shows and the API never does.
 */

export type DocumentStatus = 'pending' | 'ready_to_submit' | 'retrying' | 'completed' | 'failed' | 'cancelled';
type CallbackStatus = 'awaiting_outcome' | 'pending' | 'delivered' | 'failed';
export type CallbackEvent = 'sale.completed' | 'sale.failed';

interface Customer {
  name: string | null;
  pin: string | null;
  phone: string | null;
  email: string | null;
}

export interface SaleLine {
  id: string;
  itemId: string;
  name: string | null;
  description: string | null;
  quantity: number;
  unitPrice: number;
  total: number;
  taxableAmount: number;
  taxAmount: number;
  taxRate: number;
  taxTypeCode: string | null;
}

interface Totals {
  total: number;
  taxableAmount: number;
  taxAmount: number;
}

export interface CallbackView {
  url: string;
  status: CallbackStatus;
  event: CallbackEvent | null;
  attempts: number;
  lastAttemptAt: string | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
}

/** A sale or credit note as the API returns it (extra fields beyond the document: businessId … updatedAt). */
export interface SaleView {
  id: string;
  type: 'sale' | 'credit_note';
  status: DocumentStatus;
  traderInvoiceNumber: string;
  saleDate: string | null;
  paymentTypeCode: string | null;
  customer: Customer;
  lines: SaleLine[];
  totals: Totals;
  receipt: ReceiptValues | null;
  originalSaleId: string | null;
  error: string | null;
  callback: CallbackView | null;
  businessId: string;
  branchId: string;
  /** Credit note reason code (01–06); null on a sale. */
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One cause of a refusal, as listed in `error.errors` (C33, C37). */
export interface AuthorityCause {
  code: string;
  message: string;
  field?: string;
  itemId?: string;
}

export interface DocumentRecord {
  view: SaleView;
  applicationId: string;
  /** Idempotency keys that filed or replayed this document. */
  idempotencyKeys: string[];
  /** How many times the document was sent to the simulated authority (creation and retries). */
  submissions: number;
  /** Causes of the latest refusal; empty unless failed. */
  causes: AuthorityCause[];
  /** Every status the document went through, oldest first. */
  history: Array<{ at: string; status: DocumentStatus }>;
  /** On a sale: the credit note issued against it (C38). */
  creditNoteId: string | null;
}

export interface ItemNeeds {
  productType: boolean;
  classificationMapping: boolean;
}

export interface ItemView {
  id: string;
  externalId: string;
  name: string;
  sku: string;
  taxCategory: string;
  taxTypeCode: string;
  productTypeCode: string | null;
  classificationCode: string | null;
  unitCode: string;
  packagingUnitCode: string;
  unitPrice: number;
  stockTracked: boolean;
  registrationStatus: 'PENDING' | 'REGISTERED';
  needs: ItemNeeds;
}

export interface ItemRecord {
  view: ItemView;
  businessId: string;
  deleted: boolean;
  /** Branches the item was registered for. */
  registeredBranchIds: string[];
  /** Registrations sent to the authority (a repeat of a registered item sends none, C23). */
  registrations: number;
}

export interface StockMovement {
  movementId: string;
  businessId: string;
  branchId: string;
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  unitPrice: number | null;
  referenceId: string | null;
  quantityBefore: number;
  quantityOnHand: number;
  at: string;
}

/**
 * A supplier invoice line as the service shows it: compliance-api.md, "Purchase (supplier invoice)", `lines`. The
 * worker's PurchaseLine (src/contracts/purchases-sync.ts) has the same fields on purpose but is not imported: the
 * sandbox emulates the service from the contract alone, so a misreading in one is caught by the other.
 */
interface PurchaseLineView {
  description: string;
  hsCode: string | null;
  quantity: number;
  unitPrice: number;
  taxRate: number;
  taxAmount: number;
  total: number;
  /** The supplier's own code: beyond the contract's fields, which a service may add to; only when the line has one. */
  itemCode?: string;
}

export interface PurchaseView {
  id: string;
  status: string;
  supplier: { name: string; pin: string };
  supplierInvoiceNumber: string;
  invoiceDate: string;
  branch: string;
  totals: { subtotal: number; vat: number; total: number };
  lines: PurchaseLineView[];
  confirmationError: string | null;
}

export interface PurchaseRecord {
  view: PurchaseView;
  businessId: string;
  /** False until a pull fetched it from the authority. */
  visible: boolean;
}

/** A fresh opaque id such as `sale_3f9c…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}

/** A deep copy for answers, so later changes to a record never leak into an answer already built. */
export function snapshot<T>(value: T): T {
  return structuredClone(value);
}

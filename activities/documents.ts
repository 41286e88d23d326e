/** Copied field by field: the service's document carries `callback.url`, whose token must never leave. */
import type { AuthorityError, Receipt, Sale } from '../src/compliance/index.js';
import { isInFlight, isSigned } from '../src/contracts/compliance-rules.js';
import type { FiscalDocument, ReceiptSummary } from '../src/contracts/sale.js';
import type { AuthorityCause, SubmissionOutcome } from './types.js';

function toReceiptSummary(receipt: Receipt): ReceiptSummary {
  return {
    cuInvoiceNo: receipt.cuInvoiceNo,
    receiptNumber: receipt.receiptNumber,
    receiptLabel: receipt.receiptLabel,
    scuId: receipt.scuId,
    scuDate: receipt.scuDate,
    scuTime: receipt.scuTime,
    totalReceiptCounter: receipt.totalReceiptCounter,
    signature: receipt.signature,
    internalData: receipt.internalData,
    verificationUrl: receipt.verificationUrl,
    originalCuInvoiceNo: receipt.originalCuInvoiceNo,
  };
}

export function toFiscalDocument(sale: Sale): FiscalDocument {
  return {
    id: sale.id,
    type: sale.type,
    status: sale.status,
    traderInvoiceNumber: sale.traderInvoiceNumber,
    totals: { total: sale.totals.total, taxableAmount: sale.totals.taxableAmount, taxAmount: sale.totals.taxAmount },
    receipt: sale.receipt ? toReceiptSummary(sale.receipt) : null,
    error: sale.error,
  };
}

/** `completed` counts as signed only with the receipt values that prove it (C4: never guess "signed"). */
export function submissionOutcome(sale: Sale): SubmissionOutcome {
  if (isSigned(sale)) return 'signed';
  if (isInFlight(sale.status)) return 'in_flight';
  if (sale.status === 'failed') return 'rejected';
  return 'unknown';
}

export function toAuthorityCause(cause: AuthorityError): AuthorityCause {
  return {
    code: cause.code,
    ...(cause.message === undefined ? {} : { message: cause.message }),
    ...(cause.itemId === undefined ? {} : { itemId: cause.itemId }),
    ...(cause.field === undefined ? {} : { field: cause.field }),
  };
}

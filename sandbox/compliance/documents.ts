import { emptyCallback } from './callbacks.js';
import type { CreditNoteRequest, SaleRequest } from './requests.js';
import {
  newId,
  type DocumentRecord,
  type DocumentStatus,
  type ItemRecord,
  type SaleLine,
  type SaleView,
} from './model.js';
import type { BranchRecord, BusinessRecord } from './state.js';
import { lineAmounts, sumTotals } from './tax.js';

/** A new sale from a validated request (C10, C30, C31); every item has been checked to belong to the business. */
export function newSale(input: {
  request: SaleRequest;
  business: BusinessRecord;
  branch: BranchRecord;
  items: ReadonlyMap<string, ItemRecord>;
  applicationId: string;
  now: number;
}): DocumentRecord {
  const { request } = input;
  const lines: SaleLine[] = request.lines.map((line) => {
    const item = input.items.get(line.itemId);
    if (!item) throw new Error(`item ${line.itemId} was not checked before building the sale`);
    return {
      id: newId('line'),
      itemId: line.itemId,
      name: item.view.name,
      description: line.description ?? null,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      ...lineAmounts(line.quantity, line.unitPrice, item.view.taxTypeCode),
      taxTypeCode: item.view.taxTypeCode,
    };
  });
  const customer = request.customer ?? {};
  return newRecord(input.applicationId, input.now, {
    id: newId('sale'),
    type: 'sale',
    traderInvoiceNumber: request.traderInvoiceNumber,
    saleDate: request.saleDate,
    paymentTypeCode: request.paymentTypeCode ?? null,
    customer: {
      name: customer.name ?? null,
      pin: customer.pin ?? null,
      phone: customer.phone ?? null,
      email: customer.email ?? null,
    },
    lines,
    totals: sumTotals(lines),
    originalSaleId: null,
    businessId: input.business.id,
    branchId: input.branch.id,
    reason: null,
    callbackUrl: request.callbackUrl,
  });
}

const negate = (value: number) => (value === 0 ? 0 : -value);

/** The full reversal of a sale (C31): buyer and lines copied, every quantity and amount negated. */
export function newCreditNote(input: {
  sale: SaleView;
  request: CreditNoteRequest;
  applicationId: string;
  now: number;
}): DocumentRecord {
  const { sale, request } = input;
  const lines = sale.lines.map((line) => ({
    ...line,
    id: newId('line'),
    quantity: negate(line.quantity),
    total: negate(line.total),
    taxableAmount: negate(line.taxableAmount),
    taxAmount: negate(line.taxAmount),
  }));
  return newRecord(input.applicationId, input.now, {
    id: newId('crn'),
    type: 'credit_note',
    traderInvoiceNumber: request.traderInvoiceNumber,
    saleDate: request.returnDate,
    paymentTypeCode: sale.paymentTypeCode,
    customer: { ...sale.customer },
    lines,
    totals: {
      total: negate(sale.totals.total),
      taxableAmount: negate(sale.totals.taxableAmount),
      taxAmount: negate(sale.totals.taxAmount),
    },
    originalSaleId: sale.id,
    businessId: sale.businessId,
    branchId: sale.branchId,
    reason: request.reason,
    callbackUrl: request.callbackUrl,
  });
}

type NewDocumentFields = Omit<SaleView, 'status' | 'receipt' | 'error' | 'callback' | 'createdAt' | 'updatedAt'> & {
  callbackUrl: string | undefined;
};

function newRecord(applicationId: string, now: number, fields: NewDocumentFields): DocumentRecord {
  const { callbackUrl, ...rest } = fields;
  const at = new Date(now).toISOString();
  const status: DocumentStatus = 'pending';
  return {
    view: {
      ...rest,
      status,
      receipt: null,
      error: null,
      callback: callbackUrl === undefined ? null : emptyCallback(callbackUrl),
      createdAt: at,
      updatedAt: at,
    },
    applicationId,
    idempotencyKeys: [],
    submissions: 0,
    causes: [],
    history: [{ at, status }],
    creditNoteId: null,
  };
}

import { describe, expect, it } from 'vitest';
import {
  ErrorBodySchema,
  ItemSchema,
  PurchasePageEnvelopeSchema,
  SaleSchema,
  StockAdjustmentResultSchema,
  authorityErrorsFromError,
  isRegistered,
  itemFromError,
  saleFromError,
} from '../../src/compliance/schemas.js';
import { isInFlight, isSigned } from '../../src/contracts/compliance-rules.js';
import { ApiError } from '../../src/http/errors.js';

const minimalSale = () => ({
  id: 'sale_1',
  type: 'sale',
  status: 'completed',
  traderInvoiceNumber: 'INV-1',
  lines: [
    {
      id: 'l1',
      itemId: 'item_1',
      quantity: 2,
      unitPrice: 58,
      total: 116,
      taxableAmount: 100,
      taxAmount: 16,
      taxRate: 16,
    },
  ],
  totals: { total: 116, taxableAmount: 100, taxAmount: 16 },
});

const minimalItem = () => ({ id: 'item_1', externalId: 'sku-1', name: 'Flour', registrationStatus: 'PENDING' });

describe('schemas parse leniently forward', () => {
  it('keeps unknown enum values and unknown fields', () => {
    const sale = SaleSchema.parse({
      ...minimalSale(),
      type: 'debit_note',
      status: 'queued_at_authority',
      futureField: { nested: true },
      receipt: { cuInvoiceNo: 'KRACU0100000001/7', receiptLabel: 'XS', extra: 1 },
      callback: { url: 'https://h.example.com/cb', status: 'throttled', event: 'sale.voided' },
    });
    expect(sale.type).toBe('debit_note');
    expect(sale.status).toBe('queued_at_authority');
    expect((sale as Record<string, unknown>).futureField).toEqual({ nested: true });
    expect(sale.receipt?.receiptLabel).toBe('XS');
    expect((sale.receipt as Record<string, unknown>).extra).toBe(1);
    expect(sale.callback).toMatchObject({ status: 'throttled', event: 'sale.voided', attempts: 0 });
  });

  it('reads missing and null "string or null" fields as null', () => {
    const sale = SaleSchema.parse({ ...minimalSale(), saleDate: null });
    expect(sale).toMatchObject({
      saleDate: null,
      paymentTypeCode: null,
      receipt: null,
      originalSaleId: null,
      error: null,
      callback: null,
      customer: { name: null, pin: null, phone: null, email: null },
    });
    expect(sale.lines[0]).toMatchObject({ name: null, description: null, taxTypeCode: null });
    const receipt = SaleSchema.parse({ ...minimalSale(), receipt: {} }).receipt;
    expect(receipt).toMatchObject({ cuInvoiceNo: null, receiptNumber: null, verificationUrl: null });
  });

  it('accepts null item code fields (C1) and an unknown registration status', () => {
    const item = ItemSchema.parse({
      ...minimalItem(),
      taxTypeCode: null,
      unitCode: null,
      registrationStatus: 'SUSPENDED',
    });
    expect(item).toMatchObject({ taxTypeCode: null, unitCode: null, needs: null, registrationStatus: 'SUSPENDED' });
    expect(isRegistered(item)).toBe(false);
    expect(isRegistered({ registrationStatus: 'REGISTERED' })).toBe(true);
  });

  it('keeps a fiscal status other than ok', () => {
    const result = StockAdjustmentResultSchema.parse({
      itemId: 'i',
      branchId: 'b',
      movementId: 'm',
      quantityOnHand: 3,
      fiscal: { stockIo: { status: 'queued' }, stockMaster: { status: 'ok' } },
    });
    expect(result.fiscal.stockIo?.status).toBe('queued');
  });

  it.each([
    ['id', 'id'],
    ['status', 'status'],
    ['type', 'type'],
    ['traderInvoiceNumber', 'traderInvoiceNumber'],
    ['lines', 'lines'],
    ['totals', 'totals'],
  ] as const)('a sale without %s fails at that path', (field, path) => {
    const body: Record<string, unknown> = minimalSale();
    delete body[field];
    const parsed = SaleSchema.safeParse(body);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toContain(path);
  });

  it('a wrongly typed amount fails', () => {
    const body = minimalSale();
    (body.lines[0] as Record<string, unknown>).total = '116.00';
    expect(SaleSchema.safeParse(body).success).toBe(false);
  });

  it('a purchases page needs pagination.pageSize; nextCursor may be missing', () => {
    const page = PurchasePageEnvelopeSchema.parse({ data: { purchases: [] }, pagination: { pageSize: 20 } });
    expect(page.pagination.nextCursor).toBeNull();
    expect(PurchasePageEnvelopeSchema.safeParse({ data: { purchases: [] } }).success).toBe(false);
  });

  it('the error body keeps extras', () => {
    const body = ErrorBodySchema.parse({
      error: { code: 'brand_new_code', message: 'x', creditNoteId: 'cn_1', hint: 'kept' },
    });
    expect(body.error.code).toBe('brand_new_code');
    expect((body.error as Record<string, unknown>).hint).toBe('kept');
  });
});

describe('status helpers', () => {
  it('isInFlight knows the three in-flight states and nothing else', () => {
    expect(['pending', 'ready_to_submit', 'retrying'].every(isInFlight)).toBe(true);
    expect(['completed', 'failed', 'cancelled', 'unknown_new_state', ''].some(isInFlight)).toBe(false);
  });

  it('isSigned needs completed AND a receipt', () => {
    const sale = SaleSchema.parse(minimalSale());
    expect(isSigned(sale)).toBe(false);
    const receipt = SaleSchema.parse({ ...minimalSale(), receipt: {} }).receipt;
    expect(isSigned({ ...sale, receipt })).toBe(true);
    expect(isSigned({ ...sale, status: 'failed', receipt })).toBe(false);
    expect(isSigned({ ...sale, status: 'mystery', receipt })).toBe(false);
  });
});

describe('error extractors', () => {
  const apiError = (details: Record<string, unknown>) =>
    new ApiError({
      service: 'compliance',
      operation: 'createSale',
      method: 'POST',
      path: '/v1/sales',
      status: 422,
      code: 'authority_rejected',
      message: 'rejected',
      details,
      retry: 'final',
      requestSent: true,
    });

  it('read sale, item, errors and creditNoteId when well-formed', () => {
    const err = apiError({
      sale: { ...minimalSale(), status: 'failed', error: 'item not registered' },
      item: minimalItem(),
      errors: [{ code: 'item_not_registered', field: 'lines[0].itemId', itemId: 'item_1' }, { nonsense: true }],
      creditNoteId: 'cn_9',
    });
    expect(saleFromError(err)).toMatchObject({ id: 'sale_1', status: 'failed', error: 'item not registered' });
    expect(itemFromError(err)?.id).toBe('item_1');
    expect(authorityErrorsFromError(err)).toEqual([
      { code: 'item_not_registered', field: 'lines[0].itemId', itemId: 'item_1' },
    ]);
  });

  it('return nothing for malformed extras or other errors', () => {
    const err = apiError({ sale: { id: 'sale_1' }, item: 'x', errors: 'x', creditNoteId: 3 });
    expect(saleFromError(err)).toBeUndefined();
    expect(itemFromError(err)).toBeUndefined();
    expect(authorityErrorsFromError(err)).toEqual([]);
    expect(saleFromError(new Error('boom'))).toBeUndefined();
    expect(saleFromError(undefined)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import {
  BillPaymentPageSchema,
  BillPaymentSchema,
  CompanyPageSchema,
  ProcessSyncBatchResponseSchema,
} from '../../src/accounting/schemas.js';

describe('accounting response schemas', () => {
  it('needs only id, totalAmount, currency and date on a bill payment (A4) and keeps extras', () => {
    const parsed = BillPaymentSchema.parse({
      id: 'bp_1',
      totalAmount: 10.5,
      currency: 'KES',
      date: '2025-01-01',
      vendorField: { x: 1 },
    });
    expect(parsed).toEqual({
      id: 'bp_1',
      totalAmount: 10.5,
      currency: 'KES',
      date: '2025-01-01',
      vendorField: { x: 1 },
    });
    for (const missing of ['id', 'totalAmount', 'currency', 'date']) {
      const body: Record<string, unknown> = { id: 'bp_1', totalAmount: 1, currency: 'KES', date: '2025-01-01' };
      delete body[missing];
      const result = BillPaymentSchema.safeParse(body);
      expect(result.success, missing).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual([missing]);
    }
  });

  it('keeps unknown enum values and accepts null for optional parts', () => {
    const parsed = BillPaymentSchema.parse({
      id: 'bp_1',
      totalAmount: 1,
      currency: 'KES',
      date: '2025-01-01',
      paymentMethod: 'mpesa',
      status: 'archived',
      supplierRef: null,
      lines: [{ amount: 1, links: [{ billId: 'b1', amount: 1 }], extra: true }],
    });
    expect(parsed.paymentMethod).toBe('mpesa');
    expect(parsed.status).toBe('archived');
    expect(parsed.lines?.[0]).toMatchObject({ extra: true });
  });

  it('requires the documented envelope fields', () => {
    const envelope = {
      data: [],
      total: 0,
      page: 1,
      limit: 20,
      totalPages: 0,
      hasNextPage: false,
      hasPreviousPage: false,
    };
    expect(BillPaymentPageSchema.parse(envelope)).toEqual(envelope);
    const { hasNextPage: _dropped, ...withoutNext } = envelope;
    expect(BillPaymentPageSchema.safeParse(withoutNext).success).toBe(false);
  });

  it('accepts companies as an envelope or a bare array (A8, lenient)', () => {
    expect(CompanyPageSchema.parse([{ id: 'c1' }, { id: 'c2', name: 'Two' }])).toMatchObject({
      data: [{ id: 'c1' }, { id: 'c2', name: 'Two' }],
      total: 2,
      totalPages: 1,
      hasNextPage: false,
    });
    expect(CompanyPageSchema.safeParse([{ name: 'no id' }]).success).toBe(false);
  });

  it('needs a message from the process call', () => {
    expect(ProcessSyncBatchResponseSchema.parse({ message: 'ok', batchId: 'sb' })).toEqual({
      message: 'ok',
      batchId: 'sb',
    });
    expect(ProcessSyncBatchResponseSchema.safeParse({}).success).toBe(false);
  });
});

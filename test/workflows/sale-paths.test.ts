import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestEnv } from '../helpers/temporal.js';
import { DEMO, invoiceNumber, saleInput, startSaleHarness, type SaleHarness } from './harness.js';

let h: SaleHarness;

beforeAll(async () => {
  h = await startSaleHarness({ callbacks: true });
});
afterAll(async () => {
  await h?.close();
  await closeTestEnv();
});

describe('saleWorkflow paths', () => {
  it('signs an immediate sale, reports stock once per tracked line, and closes', async () => {
    const handle = await h.start(saleInput());
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.sale?.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    expect(state.stockMovements.map((m) => [m.itemId, m.action, m.status])).toEqual([
      [DEMO.items.sugar, 'DEDUCT', 'reported'],
      [DEMO.items.milk, 'DEDUCT', 'reported'],
    ]);
    const docs = await h.sandbox.inspector.documents({ businessId: DEMO.businesses.nairobi, traderInvoiceNumber: state.traderInvoiceNumber });
    expect(docs).toHaveLength(1);
  });

  it('waits for an async sale by callback or polling', async () => {
    const handle = await h.start(saleInput({ traderInvoiceNumber: invoiceNumber('ASYNC-') }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
  });
});

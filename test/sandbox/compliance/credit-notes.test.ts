import { describe, expect, it } from 'vitest';
import { DEMO, errorOf, invoiceNumber, saleOf, saleRequest, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

const creditNoteRequest = (saleId: string, overrides: Record<string, unknown> = {}) => ({
  traderInvoiceNumber: invoiceNumber('CN-'),
  returnDate: '2025-06-03',
  saleId,
  reason: '03',
  ...overrides,
});

/** Negation as JSON carries it: a credit note never shows -0. */
const neg = (value: number) => (value === 0 ? 0 : -value);

async function completedSale(overrides: Record<string, unknown> = {}) {
  return saleOf(
    await client.post('/v1/sales', saleRequest({ customer: { name: 'Amina', pin: 'A123456789B' }, ...overrides })),
  );
}

describe('POST /v1/credit-notes', () => {
  it('reverses the sale in full: buyer and lines copied, every quantity and amount negative', async () => {
    const sale = await completedSale({ branchId: '01', paymentTypeCode: '06' });
    const answer = await client.post('/v1/credit-notes', creditNoteRequest(sale.id));
    expect(answer.status).toBe(201);
    const note = saleOf(answer);
    expect(note).toMatchObject({
      type: 'credit_note',
      status: 'completed',
      originalSaleId: sale.id,
      customer: sale.customer,
      paymentTypeCode: '06',
      saleDate: '2025-06-03',
      totals: {
        total: neg(sale.totals.total),
        taxableAmount: neg(sale.totals.taxableAmount),
        taxAmount: neg(sale.totals.taxAmount),
      },
    });
    expect(
      note.lines.map((l) => [l.itemId, l.quantity, l.unitPrice, l.total, l.taxableAmount, l.taxAmount, l.taxRate]),
    ).toEqual(
      sale.lines.map((l) => [
        l.itemId,
        neg(l.quantity),
        l.unitPrice,
        neg(l.total),
        neg(l.taxableAmount),
        neg(l.taxAmount),
        l.taxRate,
      ]),
    );
    expect(note.receipt).toMatchObject({
      receiptLabel: 'NC',
      originalCuInvoiceNo: sale.receipt?.cuInvoiceNo,
      scuId: sale.receipt?.scuId, // same branch, same control unit
      cuInvoiceNo: `${sale.receipt?.scuId}/2`,
    });
    expect(note).toMatchObject({ reason: '03', branchId: DEMO.branches.nairobiWestlands });
  });

  it('credits a sale once: 422 already_credited naming the credit note', async () => {
    const sale = await completedSale();
    const note = saleOf(await client.post('/v1/credit-notes', creditNoteRequest(sale.id)));
    const again = await client.post('/v1/credit-notes', creditNoteRequest(sale.id));
    expect(again.status).toBe(422);
    expect(errorOf(again)).toMatchObject({ code: 'already_credited', creditNoteId: note.id });
  });

  it('counts a rejected credit note as the credit note: it is retried, not issued again (C38)', async () => {
    const sale = await completedSale();
    const refused = await client.post(
      '/v1/credit-notes',
      creditNoteRequest(sale.id, { traderInvoiceNumber: invoiceNumber('FLAKY-') }),
    );
    expect(refused.status).toBe(422);
    const noteId = errorOf(refused).sale?.id ?? '';
    expect(errorOf(await client.post('/v1/credit-notes', creditNoteRequest(sale.id)))).toMatchObject({
      code: 'already_credited',
      creditNoteId: noteId,
    });
    const retried = await client.post(`/v1/sales/${noteId}/retry`);
    expect(retried.status).toBe(200);
    expect(saleOf(retried).receipt?.receiptLabel).toBe('NC');
  });

  it('credits only completed sales (422 sale_not_completed)', async () => {
    const pending = saleOf(
      await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') })),
    );
    const answer = await client.post('/v1/credit-notes', creditNoteRequest(pending.id));
    expect(answer.status).toBe(422);
    expect(errorOf(answer).code).toBe('sale_not_completed');
    const rejected = errorOf(
      await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('REJECT-') })),
    ).sale;
    expect(errorOf(await client.post('/v1/credit-notes', creditNoteRequest(rejected?.id ?? ''))).code).toBe(
      'sale_not_completed',
    );
  });

  it('refuses to credit a credit note (400 naming saleId)', async () => {
    const sale = await completedSale();
    const note = saleOf(await client.post('/v1/credit-notes', creditNoteRequest(sale.id)));
    const answer = await client.post('/v1/credit-notes', creditNoteRequest(note.id));
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message).toMatch(/^saleId: /);
  });

  it("answers 404 for an unknown sale or another business's", async () => {
    const sale = await completedSale();
    expect((await client.post('/v1/credit-notes', creditNoteRequest('sale_unknown'))).status).toBe(404);
    const mombasa = sbx.client(DEMO.keys.mombasa);
    expect((await mombasa.post('/v1/credit-notes', creditNoteRequest(sale.id))).status).toBe(404);
  });

  it('takes businessId from the query or, failing that, the body (C18)', async () => {
    const orgWide = sbx.client(DEMO.keys.orgWide);
    const sale = saleOf(
      await orgWide.post('/v1/sales', saleRequest(), { query: { businessId: DEMO.businesses.nairobi } }),
    );
    const inBody = await orgWide.post(
      '/v1/credit-notes',
      creditNoteRequest(sale.id, { businessId: DEMO.businesses.nairobi }),
    );
    expect(inBody.status).toBe(201);
    const missing = await orgWide.post('/v1/credit-notes', creditNoteRequest(sale.id));
    expect(errorOf(missing).message).toMatch(/^businessId: /);
    const wrongInBody = await client.post(
      '/v1/credit-notes',
      creditNoteRequest(sale.id, { businessId: DEMO.businesses.mombasa }),
    );
    expect(wrongInBody.status).toBe(403);
  });

  it.each([
    ['reason', { reason: '07' }],
    ['reason', { reason: undefined }],
    ['returnDate', { returnDate: '03/06/2025' }],
    ['traderInvoiceNumber', { traderInvoiceNumber: 'N'.repeat(51) }],
    ['callbackUrl', { callbackUrl: 'http://example.com/hook' }],
  ])('refuses a bad %s with 400 naming it', async (field, overrides) => {
    const answer = await client.post('/v1/credit-notes', creditNoteRequest('sale_any', overrides));
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message.startsWith(`${field}: `)).toBe(true);
  });

  it('goes through the authority like a sale: async credit notes answer 202', async () => {
    const sale = await completedSale();
    const answer = await client.post(
      '/v1/credit-notes',
      creditNoteRequest(sale.id, { traderInvoiceNumber: invoiceNumber('ASYNC-') }),
    );
    expect(answer.status).toBe(202);
    const done = await sbx.sandbox.inspector.waitForDocument(saleOf(answer).id, (d) => d.sale.status === 'completed');
    expect(done.sale.receipt?.originalCuInvoiceNo).toBe(sale.receipt?.cuInvoiceNo);
    expect((await sbx.sandbox.inspector.document(sale.id)).creditNoteId).toBe(done.sale.id);
  });
});

import { describe, expect, it } from 'vitest';
import { DEMO, errorOf, invoiceNumber, saleOf, saleRequest, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

const I = DEMO.items;

describe('issuing a sale', () => {
  it('computes every band per line from the tax-inclusive total and sums the lines (C31)', async () => {
    const answer = await client.post(
      '/v1/sales',
      saleRequest({
        lines: [
          { itemId: I.sugar, quantity: 2, unitPrice: 250 }, // B 16 %
          { itemId: I.milk, quantity: 3, unitPrice: 65 }, // A exempt
          { itemId: I.lpgRefill, quantity: 1, unitPrice: 1250 }, // E 8 %
          { itemId: I.maizeSeed, quantity: 1, unitPrice: 520 }, // C zero-rated
          { itemId: I.giftVoucher, quantity: 1, unitPrice: 1000 }, // D non-VAT
          { itemId: I.cookingOil, quantity: 3, unitPrice: 389.99, description: 'promo' }, // B 16 %
        ],
      }),
    );
    expect(answer.status).toBe(201);
    const sale = saleOf(answer);
    expect(sale.lines.map((l) => [l.taxTypeCode, l.taxRate, l.total, l.taxableAmount, l.taxAmount])).toEqual([
      ['B', 16, 500, 431.03, 68.97],
      ['A', 0, 195, 195, 0],
      ['E', 8, 1250, 1157.41, 92.59],
      ['C', 0, 520, 520, 0],
      ['D', 0, 1000, 1000, 0],
      ['B', 16, 1169.97, 1008.59, 161.38],
    ]);
    expect(sale.totals).toEqual({ total: 4634.97, taxableAmount: 4312.03, taxAmount: 322.94 });
    expect(sale.lines[0]).toMatchObject({
      itemId: I.sugar,
      name: 'Sugar 2kg',
      description: null,
      quantity: 2,
      unitPrice: 250,
    });
    expect(sale.lines[5]?.description).toBe('promo');
    expect(sale).toMatchObject({
      type: 'sale',
      status: 'completed',
      originalSaleId: null,
      error: null,
      callback: null,
    });
  });

  it('returns signed receipt values in the documented formats (C32)', async () => {
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    const receipt = sale.receipt;
    expect(receipt).toMatchObject({
      cuInvoiceNo: 'KRACU0100000001/1',
      receiptNumber: 1,
      receiptLabel: 'NS',
      scuId: 'KRACU0100000001',
      totalReceiptCounter: '1',
      originalCuInvoiceNo: null,
    });
    expect(receipt?.scuDate).toMatch(/^\d{2}\/\d{2}\/\d{4}$/);
    expect(receipt?.scuTime).toMatch(/^\d{2}:\d{2}:\d{2}$/);
    expect(receipt?.signature).toMatch(/^[A-Z2-7]{16}$/);
    expect(receipt?.internalData).toMatch(/^[A-Z2-7]{26}$/);
    expect(receipt?.verificationUrl).toBe(
      `https://etims-sbx.kra.go.ke/common/link/etims/receipt/indexEtimsReceiptData?Data=P051234567A00${receipt?.signature}`,
    );
  });

  it('numbers receipts per branch and counts the total per business; branches by id or authorityBhfId', async () => {
    const cbd1 = saleOf(await client.post('/v1/sales', saleRequest()));
    const west = saleOf(await client.post('/v1/sales', saleRequest({ branchId: '01' })));
    const cbd2 = saleOf(await client.post('/v1/sales', saleRequest({ branchId: DEMO.branches.nairobiCbd })));
    expect([cbd1, west, cbd2].map((s) => s.receipt?.cuInvoiceNo)).toEqual([
      'KRACU0100000001/1',
      'KRACU0100000002/1',
      'KRACU0100000001/2',
    ]);
    expect([cbd1, west, cbd2].map((s) => s.receipt?.totalReceiptCounter)).toEqual(['1', '2', '3']);
    expect(west.receipt?.verificationUrl).toContain(`Data=P051234567A01${west.receipt?.signature}`);
    expect(west).toMatchObject({ branchId: DEMO.branches.nairobiWestlands });
  });

  it('refuses an unknown branch with 400 listing the valid ones, filing nothing', async () => {
    const request = saleRequest({ branchId: '07' });
    const answer = await client.post('/v1/sales', request);
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.message).toMatch(/^branchId: /);
    expect(error.branches?.map((b) => b.authorityBhfId)).toEqual(['00', '01']);
    expect(await sbx.sandbox.inspector.documents({ traderInvoiceNumber: String(request.traderInvoiceNumber) })).toEqual(
      [],
    );
  });

  it.each([
    ['an unknown item', 'itm_nope'],
    ["another business's item", DEMO.items.mombasaWater],
  ])('refuses %s with 400 naming the line (C34), filing nothing', async (_what, itemId) => {
    const request = saleRequest({
      lines: [
        { itemId: I.sugar, quantity: 1, unitPrice: 250 },
        { itemId, quantity: 1, unitPrice: 10 },
      ],
    });
    const answer = await client.post('/v1/sales', request);
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message).toMatch(/^lines\[1\]\.itemId: /);
    expect(await sbx.sandbox.inspector.documents({ traderInvoiceNumber: String(request.traderInvoiceNumber) })).toEqual(
      [],
    );
  });

  it.each([
    ['traderInvoiceNumber', { traderInvoiceNumber: 'X'.repeat(51) }],
    ['saleDate', { saleDate: '2025-02-30' }],
    ['lines', { lines: [] }],
    ['lines', { lines: Array.from({ length: 501 }, () => ({ itemId: I.sugar, quantity: 1, unitPrice: 1 })) }],
    ['lines[0].quantity', { lines: [{ itemId: I.sugar, quantity: 0, unitPrice: 1 }] }],
    ['lines[0].unitPrice', { lines: [{ itemId: I.sugar, quantity: 1, unitPrice: -1 }] }],
    ['customer.pin', { customer: { pin: 42 } }],
    ['callbackUrl', { callbackUrl: 'http://hooks.example.com/x' }],
    ['callbackUrl', { callbackUrl: 'https://user:secret@hooks.example.com/x' }],
    ['callbackUrl', { callbackUrl: 'https://10.1.2.3/x' }],
    ['callbackUrl', { callbackUrl: 'https://intranet/x' }],
    ['callbackUrl', { callbackUrl: '/relative' }],
    ['callbackUrl', { callbackUrl: `https://hooks.example.com/${'x'.repeat(2048)}` }],
  ])('refuses a bad %s with 400 naming it', async (field, overrides) => {
    const answer = await client.post('/v1/sales', saleRequest(overrides));
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.message.startsWith(`${field}: `)).toBe(true);
    expect(error.errors?.[0]?.field).toBe(field);
  });

  it('names a missing field as required', async () => {
    const { traderInvoiceNumber: _omit, ...rest } = saleRequest();
    const answer = await client.post('/v1/sales', rest);
    expect(errorOf(answer).message).toBe('traderInvoiceNumber: is required');
  });
});

describe('the simulated authority', () => {
  it('refuses a sale with an unregistered item, files it as failed, and accepts the retry once registered (C33, C35)', async () => {
    const answer = await client.post(
      '/v1/sales',
      saleRequest({ lines: [{ itemId: I.bathSoap, quantity: 1, unitPrice: 120 }] }),
    );
    expect(answer.status).toBe(422);
    const error = errorOf(answer);
    expect(error.code).toBe('authority_rejected');
    expect(error.errors).toEqual([
      { code: 'item_not_registered', field: 'lines[0].itemId', itemId: I.bathSoap, message: expect.any(String) },
    ]);
    expect(error.sale).toMatchObject({ status: 'failed', receipt: null, error: expect.stringContaining(I.bathSoap) });
    const id = error.sale?.id ?? '';
    expect(saleOf(await client.get(`/v1/sales/${id}`)).status).toBe('failed');

    const again = await client.post(`/v1/sales/${id}/retry`);
    expect(again.status).toBe(422);

    expect((await client.post(`/v1/items/${I.bathSoap}/register`)).status).toBe(200);
    const retried = await client.post(`/v1/sales/${id}/retry`);
    expect(retried.status).toBe(200);
    const sale = saleOf(retried);
    expect(sale).toMatchObject({ id, status: 'completed', error: null });
    expect(sale.receipt?.receiptLabel).toBe('NS');
    const inspected = await sbx.sandbox.inspector.document(id);
    expect(inspected.history.map((h) => h.status)).toEqual([
      'pending',
      'failed',
      'retrying',
      'failed',
      'retrying',
      'completed',
    ]);
    expect(inspected.submissions).toBe(3);
  });

  it('answers 202 pending for an async document that completes later (ASYNC-)', async () => {
    const answer = await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') }));
    expect(answer.status).toBe(202);
    const pending = saleOf(answer);
    expect(pending).toMatchObject({ status: 'pending', receipt: null });
    const settled = await sbx.sandbox.inspector.waitForDocument(pending.id, (d) => d.sale.status !== 'pending');
    expect(settled.sale.status).toBe('completed');
    expect(saleOf(await client.get(`/v1/sales/${pending.id}`)).receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
  });

  it('fails an async document later (ASYNCFAIL-); its retry goes async again', async () => {
    const pending = saleOf(
      await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNCFAIL-') })),
    );
    const failed = await sbx.sandbox.inspector.waitForDocument(pending.id, (d) => d.sale.status !== 'pending');
    expect(failed.sale.status).toBe('failed');
    expect(failed.causes).toEqual([{ code: 'authority_unavailable', message: expect.any(String) }]);
    expect(failed.sale.error).toBe(failed.causes[0]?.message);

    const retried = await client.post(`/v1/sales/${pending.id}/retry`);
    expect(retried.status).toBe(200);
    expect(saleOf(retried).status).toBe('retrying');
    expect((await client.post(`/v1/sales/${pending.id}/retry`)).status).toBe(409);
    await sbx.sandbox.inspector.waitForDocument(pending.id, (d) => d.sale.status === 'failed');
  });

  it('rejects every submission of REJECT- documents', async () => {
    const answer = await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('REJECT-') }));
    expect(answer.status).toBe(422);
    expect(errorOf(answer).errors?.map((e) => e.code)).toEqual(['authority_rejected']);
    const id = errorOf(answer).sale?.id ?? '';
    const retried = await client.post(`/v1/sales/${id}/retry`);
    expect(retried.status).toBe(422);
    expect(errorOf(retried).code).toBe('authority_rejected');
  });

  it('refuses a FLAKY- document once per document as authority_unavailable; the retry succeeds', async () => {
    for (let round = 0; round < 2; round++) {
      const answer = await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('FLAKY-') }));
      expect(answer.status).toBe(422);
      expect(errorOf(answer).errors?.[0]?.code).toBe('authority_unavailable');
      const retried = await client.post(`/v1/sales/${errorOf(answer).sale?.id}/retry`);
      expect(retried.status).toBe(200);
      expect(saleOf(retried).status).toBe('completed');
    }
  });

  it('refuses an unregistered customer PIN with the invalid_customer_pin cause', async () => {
    const answer = await client.post(
      '/v1/sales',
      saleRequest({ customer: { name: 'Jane', pin: DEMO.invalidCustomerPin } }),
    );
    expect(answer.status).toBe(422);
    expect(errorOf(answer).errors).toEqual([
      { code: 'invalid_customer_pin', field: 'customer.pin', message: expect.any(String) },
    ]);
    expect(errorOf(answer).sale?.customer).toEqual({
      name: 'Jane',
      pin: DEMO.invalidCustomerPin,
      phone: null,
      email: null,
    });
  });

  it('holds the request while a slow authority answers (SLOW-); the document is pending meanwhile', async () => {
    const traderInvoiceNumber = invoiceNumber('SLOW-');
    const started = Date.now();
    const creating = client.post('/v1/sales', saleRequest({ traderInvoiceNumber }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [inFlight] = await sbx.sandbox.inspector.documents({ traderInvoiceNumber });
    expect(inFlight?.sale.status).toBe('pending');
    const answer = await creating;
    expect(answer.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('follows authority rules added at run time, before the fixture rules', async () => {
    await sbx.sandbox.inspector.addAuthorityRule({
      match: { itemId: I.lpgRefill },
      outcome: 'reject',
      errorCode: 'authority_rejected',
      message: 'LPG paused',
      times: 1,
    });
    const request = () => saleRequest({ lines: [{ itemId: I.lpgRefill, quantity: 1, unitPrice: 1250 }] });
    const refused = await client.post('/v1/sales', request());
    expect(refused.status).toBe(422);
    expect(errorOf(refused).message).toBe('LPG paused');
    expect((await client.post('/v1/sales', request())).status).toBe(201);
  });
});

describe('reading and retrying', () => {
  it("answers 404 for another business's document exactly as for an unknown id", async () => {
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    const mombasa = sbx.client(DEMO.keys.mombasa);
    const foreign = await mombasa.get(`/v1/sales/${sale.id}`);
    const unknown = await mombasa.get('/v1/sales/sale_00000000000000000000');
    expect(foreign.status).toBe(404);
    expect(errorOf(foreign).code).toBe('not_found');
    expect(unknown.status).toBe(404);
    expect((await mombasa.post(`/v1/sales/${sale.id}/retry`)).status).toBe(404);
  });

  it('retrying a completed document returns it unchanged (C35)', async () => {
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    const retried = await client.post(`/v1/sales/${sale.id}/retry`);
    expect(retried.status).toBe(200);
    expect(saleOf(retried).receipt).toEqual(sale.receipt);
    expect((await sbx.sandbox.inspector.document(sale.id)).submissions).toBe(1);
  });

  it('refuses to retry an in-flight or cancelled document (409 not_retryable, C36)', async () => {
    const pending = saleOf(
      await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') })),
    );
    const inFlight = await client.post(`/v1/sales/${pending.id}/retry`);
    expect(inFlight.status).toBe(409);
    expect(errorOf(inFlight).code).toBe('not_retryable');
    await sbx.sandbox.inspector.cancel(pending.id);
    const cancelled = await client.post(`/v1/sales/${pending.id}/retry`);
    expect(cancelled.status).toBe(409);
    expect(saleOf(await client.get(`/v1/sales/${pending.id}`)).status).toBe('cancelled');
  });
});

describe('receipt download (C25)', () => {
  it('returns a PDF of a signed document', async () => {
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    const answer = await client.get(`/v1/sales/${sale.id}/receipt`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/pdf');
    expect(answer.body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(answer.headers['x-ratelimit-limit']).toBe('120');
  });

  it('answers 409 receipt_not_available while there is no receipt', async () => {
    const answer = await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('REJECT-') }));
    const receipt = await client.get(`/v1/sales/${errorOf(answer).sale?.id}/receipt`);
    expect(receipt.status).toBe(409);
    expect(errorOf(receipt).code).toBe('receipt_not_available');
  });
});

import { describe, expect, it } from 'vitest';
import { DEMO, errorOf, invoiceNumber, saleOf, saleRequest, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

let keyCounter = 0;
const freshKey = () => `sale:${process.pid}:${++keyCounter}:abcdef`;
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

describe('Idempotency-Key on POST /v1/sales (C12–C17)', () => {
  it('replays the same request with 200, Idempotent-Replayed and the same document, filing nothing new', async () => {
    const key = freshKey();
    const request = saleRequest();
    const first = await client.post('/v1/sales', request, withKey(key));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const replay = await client.post('/v1/sales', request, withKey(key));
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(saleOf(replay)).toEqual(saleOf(first));
    const documents = await sbx.sandbox.inspector.documents({
      traderInvoiceNumber: String(request.traderInvoiceNumber),
    });
    expect(documents).toHaveLength(1);
    expect(documents[0]?.idempotencyKeys).toEqual([key]);
    expect(documents[0]?.submissions).toBe(1);
  });

  it('replays the document as it is now: an async sale that completed since (C16)', async () => {
    const key = freshKey();
    const request = saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') });
    const first = await client.post('/v1/sales', request, withKey(key));
    expect(first.status).toBe(202);
    await sbx.sandbox.inspector.waitForDocument(saleOf(first).id, (d) => d.sale.status === 'completed');
    const replay = await client.post('/v1/sales', request, withKey(key));
    expect(replay.status).toBe(200);
    expect(saleOf(replay)).toMatchObject({ id: saleOf(first).id, status: 'completed' });
  });

  it('replays a rejected sale as 200 with the failed document (it was filed)', async () => {
    const key = freshKey();
    const request = saleRequest({ traderInvoiceNumber: invoiceNumber('REJECT-') });
    expect((await client.post('/v1/sales', request, withKey(key))).status).toBe(422);
    const replay = await client.post('/v1/sales', request, withKey(key));
    expect(replay.status).toBe(200);
    expect(saleOf(replay).status).toBe('failed');
  });

  it('refuses the same key with a different body: 422 idempotency_key_reused, nothing filed (C14)', async () => {
    const key = freshKey();
    await client.post('/v1/sales', saleRequest(), withKey(key));
    const other = saleRequest();
    const answer = await client.post('/v1/sales', other, withKey(key));
    expect(answer.status).toBe(422);
    expect(errorOf(answer).code).toBe('idempotency_key_reused');
    expect(await sbx.sandbox.inspector.documents({ traderInvoiceNumber: String(other.traderInvoiceNumber) })).toEqual(
      [],
    );
  });

  it('answers 409 idempotency_in_progress while the first request is still being processed (C15)', async () => {
    const key = freshKey();
    const request = saleRequest({ traderInvoiceNumber: invoiceNumber('SLOW-') });
    const first = client.post('/v1/sales', request, withKey(key));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const concurrent = await client.post('/v1/sales', request, withKey(key));
    expect(concurrent.status).toBe(409);
    expect(errorOf(concurrent).code).toBe('idempotency_in_progress');
    expect((await first).status).toBe(201);
    expect((await client.post('/v1/sales', request, withKey(key))).status).toBe(200);
  });

  it.each(['short', 'has space in it', 'x'.repeat(129), 'bad/slash-key'])(
    'refuses the malformed key %j with 400 naming Idempotency-Key',
    async (key) => {
      const answer = await client.post('/v1/sales', saleRequest(), withKey(key));
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toMatch(/^Idempotency-Key: /);
    },
  );

  it('does not store a key used by a request refused with 400 (C17)', async () => {
    const key = freshKey();
    const bad = await client.post(
      '/v1/sales',
      saleRequest({ lines: [{ itemId: 'itm_nope', quantity: 1, unitPrice: 1 }] }),
      withKey(key),
    );
    expect(bad.status).toBe(400);
    expect((await client.post('/v1/sales', saleRequest(), withKey(key))).status).toBe(201);
  });

  it('scopes keys to the business and the operation (C13)', async () => {
    const key = freshKey();
    const request = saleRequest();
    expect((await client.post('/v1/sales', request, withKey(key))).status).toBe(201);
    const mombasa = sbx.client(DEMO.keys.mombasa);
    const elsewhere = saleRequest({
      traderInvoiceNumber: request.traderInvoiceNumber,
      lines: [{ itemId: DEMO.items.mombasaWater, quantity: 1, unitPrice: 50 }],
    });
    expect((await mombasa.post('/v1/sales', elsewhere, withKey(key))).status).toBe(201);
    const creditNote = await client.post(
      '/v1/credit-notes',
      { traderInvoiceNumber: invoiceNumber('CN-'), returnDate: '2025-06-02', saleId: 'sale_unknown', reason: '06' },
      withKey(key),
    );
    expect(creditNote.status).toBe(404); // a different operation: not a reuse of the sale's key
  });

  it('keeps filing anew without a key (the caller must look before re-sending)', async () => {
    const request = saleRequest();
    await client.post('/v1/sales', request);
    await client.post('/v1/sales', request);
    expect(
      await sbx.sandbox.inspector.documents({ traderInvoiceNumber: String(request.traderInvoiceNumber) }),
    ).toHaveLength(2);
  });
});

describe('Idempotency-Key on POST /v1/credit-notes', () => {
  it('replays the credit note instead of answering already_credited', async () => {
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    const key = freshKey();
    const request = {
      traderInvoiceNumber: invoiceNumber('CN-'),
      returnDate: '2025-06-02',
      saleId: sale.id,
      reason: '06',
    };
    const first = await client.post('/v1/credit-notes', request, withKey(key));
    expect(first.status).toBe(201);
    const replay = await client.post('/v1/credit-notes', request, withKey(key));
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(saleOf(replay).id).toBe(saleOf(first).id);
    const withoutKey = await client.post('/v1/credit-notes', request);
    expect(withoutKey.status).toBe(422);
    expect(errorOf(withoutKey).code).toBe('already_credited');
  });
});

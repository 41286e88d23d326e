import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/http/errors.js';
import {
  errorOf,
  invoiceNumber,
  saleOf,
  saleRequest,
  startTestSandbox,
  useCallbackReceivers,
  useTestSandbox,
} from './harness.js';

const { sbx, client } = useTestSandbox();
const startReceiver = useCallbackReceivers();

const inspector = () => sbx.sandbox.inspector;
const filed = async (request: Record<string, unknown>) =>
  inspector().documents({ traderInvoiceNumber: String(request.traderInvoiceNumber) });

describe('request faults (runtime rules through /__sandbox/faults)', () => {
  it('latency: answers after the delay, and the document is filed', async () => {
    await inspector().addFault({
      service: 'compliance',
      method: 'POST',
      path: '/v1/sales',
      kind: 'latency',
      delayMs: 250,
      times: 1,
    });
    const request = saleRequest();
    const started = Date.now();
    expect((await client.post('/v1/sales', request)).status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(await filed(request)).toHaveLength(1);
  });

  it('error: 503 in the documented error shape without running the handler; nothing filed', async () => {
    await inspector().addFault({ path: '/v1/sales', method: 'POST', kind: 'error', status: 503, times: 1 });
    const request = saleRequest();
    const answer = await client.post('/v1/sales', request);
    expect(answer.status).toBe(503);
    expect(errorOf(answer).code).toBe('service_unavailable');
    expect(await filed(request)).toEqual([]);
    expect((await client.post('/v1/sales', request)).status).toBe(201); // times: 1 used up
    expect(await inspector().faults()).toEqual([]);
  });

  it('reset before processing: the connection drops and nothing is filed', async () => {
    await inspector().addFault({ path: '/v1/sales', kind: 'reset', times: 1 });
    const request = saleRequest();
    const failure = await client.post('/v1/sales', request).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe('connection_reset');
    expect(await filed(request)).toEqual([]);
    const log = await inspector().requestLog();
    expect(log.at(-1)).toMatchObject({ route: '/v1/sales', status: 0 });
  });

  it('commit-then-fail: the client sees 503 but the document IS filed; the same key replays it', async () => {
    await inspector().addFault({ path: '/v1/sales', kind: 'commit-then-fail', status: 503, times: 1 });
    const request = saleRequest();
    const headers = { 'idempotency-key': `ctf-${invoiceNumber('k')}` };
    const answer = await client.post('/v1/sales', request, { headers });
    expect(answer.status).toBe(503);
    expect(answer.headers['idempotent-replayed']).toBeUndefined();
    const documents = await filed(request);
    expect(documents).toHaveLength(1);
    expect(documents[0]?.sale.status).toBe('completed');

    const replay = await client.post('/v1/sales', request, { headers });
    expect(replay.status).toBe(200);
    expect(saleOf(replay).id).toBe(documents[0]?.sale.id);
    expect(await filed(request)).toHaveLength(1);
  });

  it('commit-then-fail with a dropped connection: the document IS filed though no answer came', async () => {
    await inspector().addFault({ path: '/v1/sales', kind: 'commit-then-fail', failWith: 'reset', times: 1 });
    const request = saleRequest();
    await expect(client.post('/v1/sales', request)).rejects.toMatchObject({ code: 'connection_reset' });
    expect(await filed(request)).toHaveLength(1);
  });

  it('rate-limit: a burst of 429s with Retry-After and the rate-limit headers, then normal service', async () => {
    await inspector().addFault({ kind: 'rate-limit', retryAfterSeconds: 2, limit: 120, times: 3 });
    for (let i = 0; i < 3; i++) {
      const answer = await client.get('/v1/identity');
      expect(answer.status).toBe(429);
      expect(answer.headers['retry-after']).toBe('2');
      expect(answer.headers['x-ratelimit-remaining']).toBe('0');
      expect(errorOf(answer).code).toBe('rate_limited');
    }
    expect((await client.get('/v1/identity')).status).toBe(200);
    const summary = await inspector().requests();
    expect(summary.faultsInjected['rate-limit']).toBe(3);
    expect(summary.rateLimited).toBe(3);
  });

  it('matches the route pattern: only retries are faulted', async () => {
    await inspector().addFault({ path: '/v1/sales/:id/retry', kind: 'error', status: 500 });
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    expect((await client.get(`/v1/sales/${sale.id}`)).status).toBe(200);
    const retry = await client.post(`/v1/sales/${sale.id}/retry`);
    expect(retry.status).toBe(500);
    expect(errorOf(retry).code).toBe('internal_error');
  });

  it('never faults the inspection API', async () => {
    await inspector().addFault({ kind: 'error', status: 500 });
    await expect(inspector().health()).resolves.toEqual({ status: 'ok' });
    expect((await client.get('/v1/identity')).status).toBe(500);
  });

  it('refuses a bad fault rule with invalid_request naming the field', async () => {
    await expect(inspector().addFault({ kind: 'error', status: 200 })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('status: '),
    });
    await expect(inspector().addFault({ kind: 'explode' as 'error' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('kind: '),
    });
  });
});

describe('faults from the fixture', () => {
  it('applies them from the start and restores them on reset', async () => {
    const faulty = await startTestSandbox({
      faults: [{ id: 'boot-error', path: '/v1/identity', kind: 'error', status: 502, times: 1 }],
    });
    try {
      const c = faulty.client();
      expect((await c.get('/v1/identity')).status).toBe(502);
      expect((await c.get('/v1/identity')).status).toBe(200);
      await faulty.sandbox.inspector.reset();
      expect((await faulty.sandbox.inspector.faults()).map((f) => f.id)).toEqual(['boot-error']);
      expect((await c.get('/v1/identity')).status).toBe(502);
    } finally {
      await faulty.close();
    }
  });
});

describe('callback faults', () => {
  it('callback-duplicate: the same delivery arrives again with the same id', async () => {
    const receiver = await startReceiver();
    await inspector().addFault({ kind: 'callback-duplicate', duplicates: 2, times: 1 });
    const sale = saleOf(await client.post('/v1/sales', saleRequest({ callbackUrl: receiver.url })));
    const received = await receiver.waitFor(3);
    expect(new Set(received.map((r) => r.headers['x-callback-id'])).size).toBe(1);
    expect(received.every((r) => r.body.data.sale.id === sale.id)).toBe(true);
    const attempts = await inspector().callbackAttempts(sale.id);
    expect(attempts.map((a) => a.kind)).toEqual(['scheduled', 'duplicate', 'duplicate']);
    expect((await inspector().document(sale.id)).sale.callback?.attempts).toBe(1);
  });

  it('callback-delay: the first attempt waits the extra delay', async () => {
    const receiver = await startReceiver();
    await inspector().addFault({ kind: 'callback-delay', delayMs: 300, times: 1 });
    const started = Date.now();
    const sale = saleOf(await client.post('/v1/sales', saleRequest({ callbackUrl: receiver.url })));
    expect(Date.parse(sale.callback?.nextAttemptAt ?? '')).toBeGreaterThanOrEqual(started + 290);
    const [first] = await receiver.waitFor(1);
    expect((first?.at ?? 0) - started).toBeGreaterThanOrEqual(290);
  });

  it('callback-out-of-order: a held outcome arrives after the newer one of the same document', async () => {
    const receiver = await startReceiver();
    await inspector().addFault({ kind: 'callback-out-of-order', times: 1 });
    const refused = await client.post(
      '/v1/sales',
      saleRequest({ traderInvoiceNumber: invoiceNumber('FLAKY-'), callbackUrl: receiver.url }),
    );
    const id = errorOf(refused).sale?.id ?? '';
    expect(receiver.received).toHaveLength(0); // sale.failed is held back
    expect((await client.post(`/v1/sales/${id}/retry`)).status).toBe(200);
    const received = await receiver.waitFor(2);
    expect(received.map((r) => r.body.event)).toEqual(['sale.completed', 'sale.failed']);
    // The document's callback follows its latest outcome, whatever order the receiver saw.
    const settled = await inspector().waitForDocument(id, (d) => d.sale.callback?.status === 'delivered');
    expect(settled.sale.callback?.event).toBe('sale.completed');
  });

  it('callback-out-of-order: an older outcome is sent again after a newer one', async () => {
    const receiver = await startReceiver();
    const refused = await client.post(
      '/v1/sales',
      saleRequest({ traderInvoiceNumber: invoiceNumber('FLAKY-'), callbackUrl: receiver.url }),
    );
    const id = errorOf(refused).sale?.id ?? '';
    await receiver.waitFor(1);
    await inspector().addFault({ kind: 'callback-out-of-order', times: 1 });
    await client.post(`/v1/sales/${id}/retry`);
    const received = await receiver.waitFor(3);
    expect(received.map((r) => r.body.event)).toEqual(['sale.failed', 'sale.completed', 'sale.failed']);
    expect(received[2]?.headers['x-callback-id']).toBe(received[0]?.headers['x-callback-id']);
  });

  it('callback-out-of-order: a held delivery goes out anyway once the hold expires', async () => {
    const receiver = await startReceiver();
    await inspector().addFault({ kind: 'callback-out-of-order', times: 1 });
    const started = Date.now();
    saleOf(await client.post('/v1/sales', saleRequest({ callbackUrl: receiver.url })));
    const [delivery] = await receiver.waitFor(1);
    expect((delivery?.at ?? 0) - started).toBeGreaterThanOrEqual(380); // outOfOrderHoldMs 400 in the fast fixture
  });
});

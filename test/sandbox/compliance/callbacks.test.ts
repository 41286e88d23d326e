import { describe, expect, it } from 'vitest';
import { CallbackNotificationSchema } from '../../../src/compliance/schemas.js';
import {
  errorOf,
  fastFixture,
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
const settledCallback = (id: string) =>
  inspector().waitForDocument(
    id,
    (d) => d.sale.callback?.status === 'delivered' || d.sale.callback?.status === 'failed',
  );

describe('result callbacks (C8, C45–C47)', () => {
  it('delivers sale.completed with the documented body and headers', async () => {
    const receiver = await startReceiver();
    const answer = await client.post('/v1/sales', saleRequest({ callbackUrl: receiver.url }));
    expect(answer.status).toBe(201);
    const created = saleOf(answer);
    expect(created.callback).toMatchObject({
      url: receiver.url,
      status: 'pending',
      event: 'sale.completed',
      attempts: 0,
    });

    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.headers['content-type']).toBe('application/json');
    expect(delivery?.headers['user-agent']).toBe('compliance-callbacks/1.0');
    expect(delivery?.headers['x-callback-id']).toMatch(/^evt_/);
    expect(delivery?.headers['x-callback-attempt']).toBe('1');
    const body = CallbackNotificationSchema.parse(delivery?.body);
    expect(body).toMatchObject({
      id: delivery?.headers['x-callback-id'],
      event: 'sale.completed',
      data: { sale: { id: created.id, status: 'completed' } },
    });
    expect(body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const settled = await settledCallback(created.id);
    expect(settled.sale.callback).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastResponseStatus: 200,
      lastError: null,
      nextAttemptAt: null,
      deliveredAt: expect.any(String),
    });
  });

  it('retries on the schedule until a 2xx: a receiver failing twice then succeeding', async () => {
    const receiver = await startReceiver({ statuses: [500, 503] });
    const beforeTheOutcome = Date.now();
    const sale = saleOf(await client.post('/v1/sales', saleRequest({ callbackUrl: receiver.url })));
    const received = await receiver.waitFor(3);
    expect(received.map((r) => r.headers['x-callback-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(received.map((r) => r.headers['x-callback-id'])).size).toBe(1);
    // Schedule [0, 50, 100] ms from the outcome, which came after `beforeTheOutcome`: no retry may arrive before
    // its time (immediate retries would arrive a few ms after the first). Measured from a time taken before the
    // outcome, not from the first delivery, whose connection set-up a busy machine delays by tens of ms.
    expect((received[1]?.at ?? 0) - beforeTheOutcome).toBeGreaterThanOrEqual(49);
    expect((received[2]?.at ?? 0) - beforeTheOutcome).toBeGreaterThanOrEqual(99);

    const settled = await settledCallback(sale.id);
    expect(settled.sale.callback).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastResponseStatus: 200,
      lastError: null,
    });
    const attempts = await inspector().callbackAttempts(sale.id);
    expect(attempts.map((a) => [a.attempt, a.kind, a.status, a.error])).toEqual([
      [1, 'scheduled', 500, 'HTTP 500'],
      [2, 'scheduled', 503, 'HTTP 503'],
      [3, 'scheduled', 200, null],
    ]);
  });

  it('gives up after the last attempt: callback failed', async () => {
    const receiver = await startReceiver({ fallbackStatus: 500 });
    const sale = saleOf(await client.post('/v1/sales', saleRequest({ callbackUrl: receiver.url })));
    const settled = await settledCallback(sale.id);
    expect(settled.sale.callback).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastResponseStatus: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
      deliveredAt: null,
    });
    expect(receiver.received).toHaveLength(3);
  });

  it('records a refused connection without the URL in the error', async () => {
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const sale = saleOf(await client.post('/v1/sales', saleRequest({ callbackUrl: url })));
    const settled = await settledCallback(sale.id);
    expect(settled.sale.callback).toMatchObject({
      status: 'failed',
      lastResponseStatus: null,
      lastError: 'connection failed (ECONNREFUSED)',
    });
  });

  it('delivers sale.failed for a rejection, then a new delivery when a retry changes the outcome', async () => {
    const receiver = await startReceiver();
    const refused = await client.post(
      '/v1/sales',
      saleRequest({ traderInvoiceNumber: invoiceNumber('FLAKY-'), callbackUrl: receiver.url }),
    );
    expect(refused.status).toBe(422);
    const id = errorOf(refused).sale?.id ?? '';
    expect(errorOf(refused).sale?.callback).toMatchObject({ status: 'pending', event: 'sale.failed' });
    await receiver.waitFor(1);
    await settledCallback(id);

    const retried = saleOf(await client.post(`/v1/sales/${id}/retry`));
    expect(retried.callback).toMatchObject({
      status: 'pending',
      event: 'sale.completed',
      attempts: 0,
      deliveredAt: null,
    });
    const received = await receiver.waitFor(2);
    expect(received.map((r) => r.body.event)).toEqual(['sale.failed', 'sale.completed']);
    expect(received[0]?.headers['x-callback-id']).not.toBe(received[1]?.headers['x-callback-id']);
    expect(received[1]?.body.data.sale.receipt?.cuInvoiceNo).toEqual(expect.any(String));
  });

  it('does not deliver again when a retry fails again (same outcome)', async () => {
    const receiver = await startReceiver();
    const refused = await client.post(
      '/v1/sales',
      saleRequest({ traderInvoiceNumber: invoiceNumber('REJECT-'), callbackUrl: receiver.url }),
    );
    const id = errorOf(refused).sale?.id ?? '';
    await settledCallback(id);
    expect((await client.post(`/v1/sales/${id}/retry`)).status).toBe(422);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(receiver.received).toHaveLength(1);
  });

  it('waits for the outcome of an async document: awaiting_outcome, then delivered', async () => {
    const receiver = await startReceiver();
    const answer = await client.post(
      '/v1/sales',
      saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-'), callbackUrl: receiver.url }),
    );
    expect(answer.status).toBe(202);
    expect(saleOf(answer).callback).toMatchObject({
      status: 'awaiting_outcome',
      event: null,
      attempts: 0,
      nextAttemptAt: null,
    });
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.body.data.sale.status).toBe('completed');
  });

  it('delivers credit note outcomes too', async () => {
    const receiver = await startReceiver();
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    const note = saleOf(
      await client.post('/v1/credit-notes', {
        traderInvoiceNumber: invoiceNumber('CN-'),
        returnDate: '2025-06-02',
        saleId: sale.id,
        reason: '01',
        callbackUrl: receiver.url,
      }),
    );
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.body.data.sale).toMatchObject({ id: note.id, type: 'credit_note' });
  });
});

describe('callback timeouts', () => {
  it('counts an attempt without an answer in time as failed', async () => {
    const slow = await startTestSandbox({
      compliance: fastFixture((f) => {
        f.callbacks = { retryScheduleMs: [0], timeoutMs: 100 };
      }, 'sandbox'),
    });
    const receiver = await startReceiver({ delayMs: 400 });
    try {
      const sale = saleOf(await slow.client().post('/v1/sales', saleRequest({ callbackUrl: receiver.url })));
      const settled = await slow.sandbox.inspector.waitForDocument(
        sale.id,
        (d) => d.sale.callback?.status === 'failed',
      );
      expect(settled.sale.callback).toMatchObject({
        attempts: 1,
        lastError: 'no answer within 100 ms',
        lastResponseStatus: null,
      });
    } finally {
      await slow.close();
    }
  });
});

import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../../src/accounting/client.js';
import { verifyWebhook } from '../../../src/accounting/webhooks.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  defaultAccountingFixture,
} from '../../../sandbox/accounting/default-fixture.js';
import type { AccountingFixtureInput } from '../../../sandbox/accounting/fixture.js';
import type { BillPaymentRecord, SyncBatchRecord } from '../../../sandbox/accounting/state.js';
import type { WebhookAttempt } from '../../../sandbox/accounting/webhooks.js';
import { eventually } from '../../helpers/eventually.js';
import { inspect, startAccountingSandbox, type RunningAccountingSandbox } from './start-accounting.js';

const DEMO_APP = 'app_demo';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  at: number;
}

/** A receiver that records every delivery and answers with the status the test sets. */
async function startReceiver(): Promise<{
  app: FastifyInstance;
  url: string;
  received: Received[];
  answer: { status: number };
}> {
  const app = Fastify();
  const received: Received[] = [];
  const answer = { status: 204 };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post('/hooks', async (request, reply) => {
    received.push({ headers: request.headers, rawBody: request.body as string, at: Date.now() });
    return reply.code(answer.status).send();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { app, url: `http://127.0.0.1:${port}/hooks`, received, answer };
}

let sandbox: RunningAccountingSandbox;
let client: AccountingClient;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const fixture: AccountingFixtureInput = {
  ...defaultAccountingFixture,
  processingDelayMs: 100,
  webhooks: { retryScheduleMs: [0, 300, 600], timeoutMs: 1_000, outOfOrderHoldMs: 300 },
};

beforeAll(async () => {
  receiver = await startReceiver();
  sandbox = await startAccountingSandbox({ fixture });
  client = new AccountingClient({
    baseUrl: sandbox.url,
    apiKey: DEMO_ACCOUNTING_API_KEY,
    clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
  });
});
beforeEach(async () => {
  await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' });
  sandbox.faults.clear();
  receiver.received.length = 0;
  receiver.answer.status = 204;
  await setEndpoint(receiver.url);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await receiver.app.close();
});

async function setEndpoint(url: string | null, applicationId = DEMO_APP): Promise<Response> {
  return fetch(`${sandbox.url}/__sandbox/webhook-endpoints/${applicationId}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
}

async function attempts(syncBatchId: string): Promise<WebhookAttempt[]> {
  return (await inspect<{ attempts: WebhookAttempt[] }>(sandbox, `/webhooks?syncBatchId=${syncBatchId}`)).attempts;
}

function payloads(): Array<{
  type: string;
  data: { syncBatchId: string; billPaymentId: string; status: string; previousStatus: string; reason?: string };
}> {
  return receiver.received.map((r) => JSON.parse(r.rawBody) as never);
}

describe('accounting sandbox: sync batch processing (A10, A18, A19, A21)', () => {
  it('tags bill payments with their batch and filters by it', async () => {
    const batch = defaultAccountingFixture.syncBatches.find((b) => b.id === 'sb_nbo_pending')!;
    const { data } = await client.listBillPayments({ syncBatchId: batch.id, limit: 100 });
    expect(data.data.map((b) => b.id).sort()).toEqual([...batch.billPaymentIds].sort());
    expect(data.data.every((b) => b.syncBatchId === batch.id)).toBe(true);
    const unbatched = await client.listBillPayments({ companyId: batch.companyId, limit: 100 });
    expect(unbatched.data.data.some((b) => b.syncBatchId === undefined)).toBe(true);
  });

  it('fails a payment with its reason, and syncs it when the failed batch is processed again', async () => {
    const batchId = 'sb_nbo_vendor_mapping';
    const fixtureBatch = defaultAccountingFixture.syncBatches.find((b) => b.id === batchId)!;
    const failing = fixtureBatch.failures[0]!;
    await client.processSyncBatch(batchId);
    const failed = await eventually(
      () => inspect<{ data: SyncBatchRecord[] }>(sandbox, '/sync-batches'),
      ({ data }) => data.find((b) => b.id === batchId)?.status === 'failed',
      5_000,
    );
    expect(failed.data.find((b) => b.id === batchId)?.runs).toBe(1);
    const listed = await client.listBillPayments({ syncBatchId: batchId, status: 'failed' });
    expect(listed.data.data.map((b) => [b.id, b.syncError])).toEqual([[failing.billPaymentId, failing.reason]]);
    const others = await client.listBillPayments({ syncBatchId: batchId, status: 'synced' });
    expect(others.data.data.map((b) => b.id)).toEqual(
      fixtureBatch.billPaymentIds.filter((id) => id !== failing.billPaymentId),
    );

    const again = await client.processSyncBatch(batchId);
    expect(again.data.message).toMatch(/started again for its failed bill payments/);
    const done = await eventually(
      () => inspect<{ data: SyncBatchRecord[] }>(sandbox, '/sync-batches'),
      ({ data }) => data.find((b) => b.id === batchId)?.status === 'completed',
      5_000,
    );
    expect(done.data.find((b) => b.id === batchId)?.runs).toBe(2);
    const payments = await inspect<{ data: BillPaymentRecord[] }>(sandbox, `/bill-payments?syncBatchId=${batchId}`);
    expect(payments.data.map((b) => [b.status, b.syncError])).toEqual(
      fixtureBatch.billPaymentIds.map(() => ['synced', undefined]),
    );
    expect((await client.processSyncBatch(batchId)).data.message).toMatch(/already processed \(completed\)/);
  });

  it('fails a batch with outcome failed again on every run, with its reason', async () => {
    await client.processSyncBatch('sb_mba_pending');
    await eventually(
      () => client.listBillPayments({ syncBatchId: 'sb_mba_pending', status: 'failed' }),
      (r) => r.data.total === 2,
      5_000,
    );
    await client.processSyncBatch('sb_mba_pending');
    const after = await eventually(
      () => inspect<{ data: SyncBatchRecord[] }>(sandbox, '/sync-batches'),
      ({ data }) => {
        const b = data.find((s) => s.id === 'sb_mba_pending');
        return b?.runs === 2 && b.status === 'failed';
      },
      5_000,
    );
    expect(after.data.find((s) => s.id === 'sb_mba_pending')?.status).toBe('failed');
    const { data } = await client.listBillPayments({ syncBatchId: 'sb_mba_pending' });
    expect(
      data.data.every(
        (b) => b.status === 'failed' && b.syncError === 'The payment account is closed in the accounting system',
      ),
    ).toBe(true);
  });
});

describe('accounting sandbox: webhooks (A14, A20)', () => {
  it('delivers one signed webhook per status change, verifiable with the webhook secret', async () => {
    const batch = defaultAccountingFixture.syncBatches.find((b) => b.id === 'sb_nbo_pending')!;
    await client.processSyncBatch(batch.id);
    await eventually(
      () => receiver.received.length,
      (n) => n >= batch.billPaymentIds.length * 2,
      5_000,
    );
    const events = payloads();
    expect(events.every((e) => e.type === 'bill_payment.sync_status_changed' && e.data.syncBatchId === batch.id)).toBe(
      true,
    );
    for (const id of batch.billPaymentIds) {
      expect(
        events.filter((e) => e.data.billPaymentId === id).map((e) => `${e.data.previousStatus}→${e.data.status}`),
      ).toEqual(['pending→syncing', 'syncing→synced']);
    }
    for (const r of receiver.received) {
      // The project's verifier accepts what the sandbox's independent signer produced.
      expect(verifyWebhook({ secret: DEMO_ACCOUNTING_WEBHOOK_SECRET, headers: r.headers, rawBody: r.rawBody })).toEqual(
        JSON.parse(r.rawBody),
      );
      expect(r.headers['user-agent']).toBe('accounting-webhooks/1.0');
    }
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    const logged = await attempts(batch.id);
    expect(logged.every((a) => a.kind === 'scheduled' && a.responseStatus === 204 && a.attempt === 1)).toBe(true);
  });

  it('gives a failed payment its reason in the webhook', async () => {
    await client.processSyncBatch('sb_nbo_vendor_mapping');
    await eventually(
      () => payloads().filter((e) => e.data.status === 'failed'),
      (f) => f.length === 1,
      5_000,
    );
    const failed = payloads().find((e) => e.data.status === 'failed')!;
    expect(failed.data.reason).toBe('Supplier is not mapped to a vendor in the accounting system');
  });

  it('retries a delivery the receiver refuses, with the same id and a fresh signature', async () => {
    receiver.answer.status = 500;
    await client.processSyncBatch('sb_nbo_pending');
    await eventually(
      () => receiver.received.length,
      (n) => n >= 3,
      5_000,
    );
    receiver.answer.status = 204;
    const logged = await eventually(
      () => attempts('sb_nbo_pending'),
      (a) => a.some((x) => x.attempt === 2 && x.responseStatus === 204),
      5_000,
    );
    const retried = logged.find((x) => x.attempt === 2 && x.responseStatus === 204)!;
    expect(logged.find((x) => x.deliveryId === retried.deliveryId && x.attempt === 1)?.responseStatus).toBe(500);
    const copies = receiver.received.filter((r) => r.headers['webhook-id'] === retried.deliveryId);
    expect(copies).toHaveLength(2);
    expect(copies[0]!.rawBody).toBe(copies[1]!.rawBody);
    for (const copy of copies)
      expect(() =>
        verifyWebhook({ secret: DEMO_ACCOUNTING_WEBHOOK_SECRET, headers: copy.headers, rawBody: copy.rawBody }),
      ).not.toThrow();
  });

  it('applies the callback-duplicate and callback-delay faults to the next delivery', async () => {
    sandbox.faults.add({ service: 'accounting', kind: 'callback-duplicate', duplicates: 2, times: 1 });
    sandbox.faults.add({ service: 'accounting', kind: 'callback-delay', delayMs: 400, times: 1 });
    const started = Date.now();
    await client.processSyncBatch('sb_nbo_pending');
    const logged = await eventually(
      () => attempts('sb_nbo_pending'),
      (a) => a.filter((x) => x.kind === 'duplicate').length === 2,
      5_000,
    );
    const duplicated = logged.filter((a) => a.kind === 'duplicate');
    expect(new Set(duplicated.map((a) => a.deliveryId)).size).toBe(1);
    const firstSend = logged.find((a) => a.deliveryId === duplicated[0]!.deliveryId && a.kind === 'scheduled')!;
    expect(firstSend.status).toBe('syncing');
    // Node's timers and the wall clock round apart: a 400 ms timer was seen 399 ms after `started`.
    expect(Date.parse(firstSend.at) - started).toBeGreaterThanOrEqual(395);
    // The other deliveries were not delayed or duplicated: the faults applied once.
    expect(logged.filter((a) => a.kind === 'scheduled')).toHaveLength(6);
  });

  it('applies the callback-out-of-order fault: an earlier change is delivered after a later one', async () => {
    sandbox.faults.add({ service: 'accounting', kind: 'callback-out-of-order', times: 1 });
    await client.processSyncBatch('sb_nbo_pending');
    await eventually(
      () => receiver.received.length,
      (n) => n >= 6,
      5_000,
    );
    // The first change made (the batch's first payment going to syncing) took the fault and was held back.
    const first = defaultAccountingFixture.syncBatches.find((b) => b.id === 'sb_nbo_pending')!.billPaymentIds[0]!;
    const order = payloads()
      .filter((e) => e.data.billPaymentId === first)
      .map((e) => e.data.status);
    expect(order).toEqual(['synced', 'syncing']);
    const others = payloads()
      .filter((e) => e.data.billPaymentId !== first)
      .map((e) => e.data.status);
    expect(others).toEqual(['syncing', 'syncing', 'synced', 'synced']);
  });

  it('sends nothing without a webhook URL, and checks the URL it is given', async () => {
    expect((await setEndpoint(null)).status).toBe(200);
    await client.processSyncBatch('sb_nbo_pending');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(0);
    expect((await setEndpoint('ftp://example.com')).status).toBe(400);
    expect((await setEndpoint('http://127.0.0.1/x', 'app_missing')).status).toBe(404);
    const { endpoints } = await inspect<{ endpoints: Array<{ applicationId: string; url: string | null }> }>(
      sandbox,
      '/webhook-endpoints',
    );
    expect(endpoints.find((e) => e.applicationId === DEMO_APP)?.url).toBeNull();
  });
});

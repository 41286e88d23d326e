import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPurchasesActivities, purchaseFingerprint } from '../../activities/purchases.js';
import { singleApplication } from '../helpers/single-application.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { describeSink, loadPurchasesConfig } from '../../src/config/purchases.js';
import { ConfigError } from '../../src/config/env.js';
import {
  openNdjsonSink,
  SinkDeliveryError,
  webhookSink,
  type PurchaseEventSink,
} from '../../src/purchases/event-sink.js';
import type { PurchaseDocument, PurchaseEvent } from '../../src/contracts/purchases-sync.js';
import { startReceiver, type Receiver } from './receiver.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function purchase(id: string, status = 'pulled'): PurchaseDocument {
  return {
    id,
    status,
    supplier: { name: 'Kibo Wholesalers Ltd', pin: 'P051100001A' },
    supplierInvoiceNumber: `INV-${id}`,
    invoiceDate: '2025-06-01',
    branch: 'Nairobi CBD',
    totals: { subtotal: 100, vat: 16, total: 116 },
    lines: [],
    confirmationError: null,
  };
}

function event(n: number): PurchaseEvent {
  return {
    id: `purchase.pur_${n}.v0.abc`,
    type: 'purchase.received',
    businessId: 'biz_1',
    purchase: purchase(`pur_${n}`),
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'purchase-sinks-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('NDJSON sink', () => {
  it('appends one line per event and never the same event twice, even after reopening the file', async () => {
    const path = join(dir, 'nested', 'a.ndjson');
    const sink = await openNdjsonSink(path);
    await Promise.all([sink.deliver(event(1)), sink.deliver(event(2)), sink.deliver(event(1))]);
    await sink.close();
    const again = await openNdjsonSink(path);
    await again.deliver(event(2));
    await again.deliver(event(3));
    await again.close();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as PurchaseEvent).id)).toEqual([event(1).id, event(2).id, event(3).id]);
    expect(again.size).toBe(3);
  });

  it('starts a new line after a line a crash cut short, and delivers that event again', async () => {
    const path = join(dir, 'cut.ndjson');
    await writeFile(path, `${JSON.stringify(event(1))}\n`);
    await appendFile(path, JSON.stringify(event(2)).slice(0, 40));
    const sink = await openNdjsonSink(path);
    await sink.deliver(event(1));
    await sink.deliver(event(2));
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[2]!)).toEqual(event(2));
    expect(lines[3]).toBe('');
  });
});

describe('NDJSON sink over years of events', () => {
  it('reads only the file’s tail on open: a recent event is still not written twice, and memory does not follow the file', async () => {
    const path = join(dir, 'years.ndjson');
    // About 24 MB of events: more than the 16 MB the sink reads.
    const lines = Array.from({ length: 60_000 }, (_, n) => JSON.stringify(event(n)));
    await writeFile(path, `${lines.join('\n')}\n`);
    const sink = await openNdjsonSink(path);
    expect(sink.size).toBeGreaterThan(30_000);
    expect(sink.size).toBeLessThan(60_000);
    await sink.deliver(event(59_999));
    await sink.deliver(event(60_000));
    await sink.close();
    const after = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(after).toHaveLength(60_001);
    expect((JSON.parse(after.at(-1)!) as PurchaseEvent).id).toBe(event(60_000).id);
  });
});

describe('webhook sink', () => {
  let receiver: Receiver;
  let sink: PurchaseEventSink;
  beforeAll(async () => {
    receiver = await startReceiver(SECRET);
    sink = webhookSink({ url: receiver.url, secret: SECRET });
  });
  afterAll(async () => {
    await sink.close();
    await receiver.close();
  });

  it('POSTs the event signed the Standard Webhooks way, with the event id as webhook-id', async () => {
    receiver.answer(204);
    await sink.deliver(event(1));
    const last = receiver.received.at(-1)!;
    expect(last).toMatchObject({ id: event(1).id, verified: true, status: 204 });
    expect(last.event).toEqual(event(1));
  });

  it.each([
    [500, true],
    [503, true],
    [408, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
    [410, false],
    [301, false],
  ])('answered %i: a SinkDeliveryError, retryable %s', async (status, retryable) => {
    receiver.answer(status);
    const err = await sink.deliver(event(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkDeliveryError);
    expect(err).toMatchObject({ retryable, status });
    expect((err as Error).message).not.toContain(SECRET);
  });

  it('a receiver that cannot be reached is retryable', async () => {
    const down = webhookSink({ url: 'http://127.0.0.1:9/nothing', secret: SECRET, timeoutMs: 2_000 });
    const err = await down.deliver(event(3)).catch((e: unknown) => e);
    await down.close();
    expect(err).toMatchObject({ name: 'SinkDeliveryError', retryable: true, status: undefined });
  });

  it('a signature made with another secret does not verify at the receiver', async () => {
    receiver.answer(200);
    const forged = webhookSink({ url: receiver.url, secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    await forged.deliver(event(4));
    await forged.close();
    expect(receiver.received.at(-1)).toMatchObject({ id: event(4).id, verified: false });
  });

  it("carries the receiver's Retry-After, in seconds or as an HTTP-date, and ignores garbage", async () => {
    let retryAfter = '';
    const server = createServer((_request, response) => response.writeHead(429, { 'retry-after': retryAfter }).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const throttled = webhookSink({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
      secret: SECRET,
    });
    const waitOf = async (value: string) => {
      retryAfter = value;
      const err = await throttled.deliver(event(5)).catch((e: unknown) => e);
      expect(err).toMatchObject({ retryable: true, status: 429 });
      return (err as SinkDeliveryError).retryAfterSeconds;
    };
    try {
      expect(await waitOf('120')).toBe(120);
      const inAMinute = await waitOf(new Date(Date.now() + 60_000).toUTCString());
      expect(inAMinute).toBeGreaterThanOrEqual(58);
      expect(inAMinute).toBeLessThanOrEqual(61);
      expect(await waitOf('soon')).toBeUndefined();
    } finally {
      await throttled.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('PURCHASES_* configuration', () => {
  const load = (env: Record<string, string>) => () => loadPurchasesConfig(env);

  it('is off without PURCHASES_SINK; 15 minutes and every business by default', () => {
    expect(loadPurchasesConfig({})).toEqual({
      sink: undefined,
      intervalMs: 900_000,
      businessIds: undefined,
      listing: {},
    });
  });

  it('reads what every sync lists and how far back: days, days and a period, each checked', () => {
    expect(
      loadPurchasesConfig({
        PURCHASES_WINDOW_DAYS: '14',
        PURCHASES_HORIZON_DAYS: '400',
        PURCHASES_SWEEP_PERIOD: '12h',
      }).listing,
    ).toEqual({ windowDays: 14, horizonDays: 400, sweepHours: 12 });
    expect(load({ PURCHASES_WINDOW_DAYS: 'a week' })).toThrow(/PURCHASES_WINDOW_DAYS: must be a whole number of days/);
    expect(load({ PURCHASES_HORIZON_DAYS: '10' })).toThrow(
      /PURCHASES_HORIZON_DAYS: must be a whole number of days from 30/,
    );
    expect(load({ PURCHASES_WINDOW_DAYS: '60', PURCHASES_HORIZON_DAYS: '45' })).toThrow(
      /more than PURCHASES_WINDOW_DAYS/,
    );
    expect(load({ PURCHASES_SWEEP_PERIOD: '5m' })).toThrow(/PURCHASES_SWEEP_PERIOD/);
  });

  it('reads a file sink, an https sink with its secret, an interval and a business list', () => {
    expect(loadPurchasesConfig({ PURCHASES_SINK: 'file:./out/p.ndjson' }).sink).toEqual({
      kind: 'file',
      path: './out/p.ndjson',
    });
    const config = loadPurchasesConfig({
      PURCHASES_SINK: 'https://erp.example.com/hooks/etims?token=abc',
      PURCHASES_WEBHOOK_SECRET: SECRET,
      PURCHASES_SYNC_INTERVAL: '5m',
      PURCHASES_SYNC_BUSINESSES: 'biz_a, biz_b,biz_a',
    });
    expect(config).toEqual({
      sink: { kind: 'webhook', url: 'https://erp.example.com/hooks/etims?token=abc', webhookSecret: SECRET },
      intervalMs: 300_000,
      businessIds: ['biz_a', 'biz_b'],
      listing: {},
    });
    expect(describeSink(config.sink)).toBe('https://erp.example.com/hooks/etims');
    expect(
      loadPurchasesConfig({ PURCHASES_SINK: 'http://127.0.0.1:8080/x', PURCHASES_WEBHOOK_SECRET: SECRET }).sink?.kind,
    ).toBe('webhook');
  });

  it.each([
    [
      { PURCHASES_SINK: 'http://erp.example.com/x', PURCHASES_WEBHOOK_SECRET: SECRET },
      /^PURCHASES_SINK: .*http:\/\/ only to this machine/,
    ],
    [{ PURCHASES_SINK: 'ftp://erp.example.com/x' }, /^PURCHASES_SINK: /],
    [{ PURCHASES_SINK: 'erp.example.com' }, /^PURCHASES_SINK: /],
    [{ PURCHASES_SINK: 'file:' }, /^PURCHASES_SINK: file: needs a path/],
    [{ PURCHASES_SINK: 'https://erp.example.com/x' }, /^PURCHASES_WEBHOOK_SECRET is required/],
    [
      { PURCHASES_SINK: 'https://erp.example.com/x', PURCHASES_WEBHOOK_SECRET: 'not-a-whsec-secret-at-all' },
      /^PURCHASES_WEBHOOK_SECRET is not in the expected form/,
    ],
    [{ PURCHASES_SYNC_INTERVAL: '15' }, /^PURCHASES_SYNC_INTERVAL: /],
    [{ PURCHASES_SYNC_INTERVAL: '2s' }, /^PURCHASES_SYNC_INTERVAL: /],
    [{ PURCHASES_SYNC_BUSINESSES: 'biz_a,,biz_b' }, /^PURCHASES_SYNC_BUSINESSES: /],
  ])('refuses %j with a ConfigError naming the variable, never the secret', (env, message) => {
    expect(load(env)).toThrow(ConfigError);
    expect(load(env)).toThrow(message);
    try {
      load(env)();
    } catch (err) {
      expect((err as Error).message).not.toContain(SECRET);
      expect((err as Error).message).not.toContain('not-a-whsec-secret-at-all');
    }
  });
});

describe('deliverPurchaseEvents (activity)', () => {
  class RecordingSink implements PurchaseEventSink {
    readonly description = 'recording';
    readonly delivered: string[] = [];
    constructor(private readonly failAt?: { index: number; error: SinkDeliveryError }) {}
    async deliver(e: PurchaseEvent): Promise<void> {
      if (this.failAt && this.delivered.length === this.failAt.index) throw this.failAt.error;
      this.delivered.push(e.id);
    }
    async close(): Promise<void> {}
  }
  const compliance = new ComplianceClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'cmp_sk_test_unused_key_0000000' });
  const logger = pino({ level: 'silent' });
  const events = [1, 2, 3, 4, 5].map(event);

  it('resumes after the events its last heartbeat reported, heartbeating each one it delivers', async () => {
    const sink = new RecordingSink();
    const { deliverPurchaseEvents } = createPurchasesActivities({
      services: singleApplication({ compliance }),
      logger,
      purchasesSink: sink,
    });
    const env = new MockActivityEnvironment({ heartbeatDetails: { delivered: 2 }, attempt: 2 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    expect(await env.run(deliverPurchaseEvents, { events })).toEqual({ delivered: 5 });
    expect(sink.delivered).toEqual(events.slice(2).map((e) => e.id));
    expect(beats).toEqual([{ delivered: 3 }, { delivered: 4 }, { delivered: 5 }]);
  });

  it('fails retryable with how many were delivered when the sink is down, non-retryable when it refuses', async () => {
    for (const [error, type, nonRetryable] of [
      [new SinkDeliveryError('503', true, { status: 503 }), 'sink_unavailable', false],
      [new SinkDeliveryError('400', false, { status: 400 }), 'sink_refused', true],
    ] as const) {
      const { deliverPurchaseEvents } = createPurchasesActivities({
        services: singleApplication({ compliance }),
        logger,
        purchasesSink: new RecordingSink({ index: 3, error }),
      });
      const err = await new MockActivityEnvironment().run(deliverPurchaseEvents, { events }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err).toMatchObject({ type, nonRetryable });
      expect((err as ApplicationFailure).details?.[0]).toMatchObject({ delivered: 3 });
    }
  });

  it('without a sink configured, fails non-retryable naming PURCHASES_SINK', async () => {
    const { deliverPurchaseEvents } = createPurchasesActivities({
      services: singleApplication({ compliance }),
      logger,
    });
    const err = await new MockActivityEnvironment().run(deliverPurchaseEvents, { events }).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'sink_not_configured', nonRetryable: true });
    expect((err as Error).message).toContain('PURCHASES_SINK');
  });
});

describe('purchase fingerprint', () => {
  it('changes with status, confirmation error or totals, and with nothing else', () => {
    const base = purchase('pur_1');
    const fp = purchaseFingerprint(base);
    expect(fp).toMatch(/^[0-9a-f]{12}$/);
    const other: PurchaseDocument = { ...base, supplierInvoiceNumber: 'other', invoiceDate: '2024-01-01' };
    expect(purchaseFingerprint(other)).toBe(fp);
    expect(purchaseFingerprint({ ...base, status: 'confirmed' })).not.toBe(fp);
    expect(purchaseFingerprint({ ...base, confirmationError: 'x' })).not.toBe(fp);
    expect(purchaseFingerprint({ ...base, totals: { ...base.totals, total: 117 } })).not.toBe(fp);
  });
});

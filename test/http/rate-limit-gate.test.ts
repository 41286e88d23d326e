import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../src/http/errors.js';
import { callJson } from '../../src/http/json-api.js';
import { DELIVERY_SPREAD_MS, RateLimitGate } from '../../src/http/rate-limit-gate.js';
import { HttpTransport, RATE_BUDGET_SPENT } from '../../src/http/transport.js';

const headers = (remaining: number, reset: number) => ({
  'x-ratelimit-limit': '120',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(reset),
});

describe('RateLimitGate', () => {
  it('admits while the service says requests are left, counting those in flight against them', () => {
    let now = 0;
    const gate = new RateLimitGate({ now: () => now });
    expect(gate.admit()).toBeUndefined(); // nothing known yet
    gate.settle({ status: 200, headers: headers(2, 30) });
    expect(gate.admit()).toBeUndefined();
    expect(gate.admit()).toBeUndefined();
    // Two in flight take the two left: the third waits for the reset, 30 s away.
    expect(gate.admit()).toBe(30_000);
    now = 10_500;
    expect(gate.admit()).toBe(19_500);
    now = 30_000;
    expect(gate.admit()).toBeUndefined();
  });

  it('holds the limit in any 60 s at the service, even when the service’s fixed window has just reset', () => {
    let now = 0;
    const gate = new RateLimitGate({ perMinute: 3, now: () => now });
    expect(gate.admit()).toBeUndefined();
    now = 50_000;
    expect(gate.admit()).toBeUndefined();
    expect(gate.admit()).toBeUndefined();
    for (let i = 0; i < 3; i++) gate.settle({ status: 200, headers: headers(117, 10) });
    // The service's window resets at 60 s with 120 left, but the last minute already holds three of this process,
    // counted DELIVERY_SPREAD_MS longer: the first could reach the service that much late, the next one early.
    const spread = DELIVERY_SPREAD_MS;
    now = 59_000;
    expect(gate.admit()).toBe(1_000 + spread);
    now = 60_000 + spread;
    gate.settle({ status: 200, headers: headers(119, 60) });
    expect(gate.admit()).toBeUndefined();
    // 50 s, 50 s and 61 s are in the window: the next request waits until the first of them leaves it.
    now = 62_000;
    expect(gate.admit()).toBe(50_000 + 60_000 + spread - now);
    // A reloaded setting lowers the count at once; no setting counts nothing.
    gate.limitTo(undefined);
    expect(gate.admit()).toBeUndefined();
  });

  it('holds requests back after a 429 for its Retry-After', () => {
    let now = 0;
    const gate = new RateLimitGate({ now: () => now });
    gate.admit();
    gate.settle({ status: 429, headers: { ...headers(0, 7), 'retry-after': '4' } });
    expect(gate.admit()).toBe(4_000);
    now = 4_000;
    expect(gate.admit()).toBeUndefined();
  });

  it('keeps the lowest count left when answers of one window overtake each other', () => {
    const gate = new RateLimitGate({ now: () => 0 });
    gate.admit();
    gate.admit();
    gate.settle({ status: 200, headers: headers(0, 20) });
    gate.settle({ status: 200, headers: headers(1, 20) });
    expect(gate.admit()).toBe(20_000);
  });

  it('narrows the reset down from answers at different instants of one window (the headers round up to seconds)', () => {
    let now = 0;
    const gate = new RateLimitGate({ now: () => now });
    // The window really resets at 10.2 s: at 0 s it is "11 s" away, at 0.9 s "10 s", at 5.3 s "5 s".
    gate.settle({ status: 200, headers: headers(5, 11) });
    now = 900;
    gate.settle({ status: 200, headers: headers(4, 10) });
    now = 5_300;
    gate.settle({ status: 200, headers: headers(0, 5) });
    expect(gate.admit()).toBe(5_000);
    // A later window is taken as new, not merged into the old one.
    now = 10_400;
    gate.settle({ status: 200, headers: headers(9, 10) });
    for (let i = 0; i < 9; i++) expect(gate.admit()).toBeUndefined();
    expect(gate.admit()).toBe(10_000);
  });

  it('ignores answers without the headers and requests that got no answer', () => {
    const gate = new RateLimitGate({ now: () => 0 });
    gate.admit();
    gate.settle(undefined);
    gate.admit();
    gate.settle({ status: 200, headers: {} });
    expect(gate.admit()).toBeUndefined();
  });
});

describe('RateLimitGate after an absurd wait', () => {
  it('believes a reset at most one window away, and admits once that window is over', () => {
    let now = 0;
    const gate = new RateLimitGate({ now: () => now });
    gate.admit();
    gate.settle({ status: 200, headers: headers(0, 99_999_999) });
    expect(gate.admit()).toBe(60_000);
    now = 59_999;
    expect(gate.admit()).toBe(1);
    now = 60_000;
    expect(gate.admit()).toBeUndefined();
  });

  it('holds back after a 429 asking for days for one window only, as an integer or an HTTP-date', () => {
    for (const retryAfter of ['99999999', 'Fri, 31 Dec 9999 23:59:59 GMT']) {
      let now = Date.parse('2026-11-21T10:00:00Z');
      const start = now;
      const gate = new RateLimitGate({ now: () => now });
      gate.admit();
      gate.settle({ status: 429, headers: { ...headers(0, 99_999_999), 'retry-after': retryAfter } });
      const wait = gate.admit();
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60_000);
      now = start + 60_000;
      expect(gate.admit()).toBeUndefined();
    }
  });

  it('recovers within one window when the clock is set back under a spent window', () => {
    let now = 10_000_000;
    const gate = new RateLimitGate({ now: () => now });
    gate.settle({ status: 200, headers: headers(0, 30) });
    now -= 3_600_000;
    expect(gate.admit()).toBe(60_000);
    now += 60_000;
    expect(gate.admit()).toBeUndefined();
  });

  it('never holds a request longer than one window, whatever it is configured to', () => {
    expect(new RateLimitGate({ holdUpToMs: 86_400_000 }).holdUpToMs).toBe(60_000);
    expect(new RateLimitGate({ holdUpToMs: Number.NaN }).holdUpToMs).toBe(0);
    expect(new RateLimitGate({ holdUpToMs: -1 }).holdUpToMs).toBe(0);
    expect(new RateLimitGate({ holdUpToMs: 10_000 }).holdUpToMs).toBe(10_000);
  });
});

describe('HttpTransport told to wait absurdly long', () => {
  let server: Server;
  let baseUrl: string;
  let received = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      received++;
      res.writeHead(429, {
        'content-type': 'application/json',
        'set-cookie': 'session=s3cr3t',
        'retry-after': '99999999',
        ...headers(0, 99_999_999),
      });
      res.end('{"error":{"code":"rate_limited","message":"slow down"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('logs each cut-down header once per answer, and refuses the next call for one window at most', async () => {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = { warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }) };
    const gate = new RateLimitGate();
    const transport = new HttpTransport({ service: 'compliance', baseUrl, rateLimitGate: gate, logger });
    const request = {
      operation: 'getSale',
      method: 'GET' as const,
      path: '/v1/sales/x',
      headers: { 'x-api-key': 'cmp_sk_test_0123456789abcdef' },
      idempotent: true,
    };
    expect((await transport.send(request)).status).toBe(429);
    expect(warnings.map((w) => w.fields)).toEqual([
      expect.objectContaining({ header: 'retry-after', sent: '99999999', boundSeconds: 300, status: 429 }),
      expect.objectContaining({ header: 'x-ratelimit-reset', sent: '99999999', boundSeconds: 60, status: 429 }),
    ]);
    const logged = JSON.stringify(warnings);
    expect(logged).not.toContain('cmp_sk_test');
    expect(logged).not.toContain('s3cr3t');

    const refused = await transport.send(request).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toMatchObject({ status: 429, code: RATE_BUDGET_SPENT, requestSent: false });
    expect((refused as ApiError).retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(received).toBe(1);
    // A refusal sent nothing, so nothing new was logged.
    expect(warnings).toHaveLength(2);
    await transport.close();
  });

  it('hands the caller the bounded Retry-After and reset in the error', async () => {
    const logger = { warn: () => undefined };
    const transport = new HttpTransport({ service: 'compliance', baseUrl, logger });
    const request = { operation: 'getSale', method: 'GET' as const, path: '/v1/sales/y', idempotent: true };
    const failed = await callJson(transport, request, z.object({})).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(ApiError);
    expect(failed).toMatchObject({
      status: 429,
      retryAfterSeconds: 300,
      rateLimit: { remaining: 0, resetSeconds: 60 },
    });
    await transport.close();
  });
});

describe('HttpTransport with a RateLimitGate', () => {
  let server: Server;
  let baseUrl: string;
  let received = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      received++;
      // One request left in a window that resets in 9 s.
      res.writeHead(200, { 'content-type': 'application/json', ...headers(1 - received < 0 ? 0 : 1 - received, 9) });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a request itself with a 429 once the window is spent, without sending it', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl, rateLimitGate: new RateLimitGate() });
    const request = { operation: 'getSale', method: 'GET' as const, path: '/v1/sales/x', idempotent: true };
    expect((await transport.send(request)).status).toBe(200);
    const refused = await transport.send(request).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 429, code: RATE_BUDGET_SPENT, requestSent: false, retry: 'safe' });
    expect((refused as ApiError).retryAfterSeconds).toBeGreaterThanOrEqual(8);
    expect(received).toBe(1);
    await transport.close();
  });

  it('waits for a reset that is near instead of refusing', async () => {
    const gate = new RateLimitGate({ holdUpToMs: 2_000 });
    gate.settle({ status: 200, headers: headers(0, 1) });
    const transport = new HttpTransport({ service: 'compliance', baseUrl, rateLimitGate: gate });
    const before = received;
    const started = Date.now();
    expect(
      (await transport.send({ operation: 'getSale', method: 'GET', path: '/v1/sales/y', idempotent: true })).status,
    ).toBe(200);
    expect(received).toBe(before + 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    await transport.close();
  });
});

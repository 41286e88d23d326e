import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { RateLimitGate } from '../../src/http/rate-limit-gate.js';
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
    expect(gate.snapshot().resetAtMs).toBe(10_300);
    expect(gate.admit()).toBe(5_000);
    // A later window is taken as new, not merged into the old one.
    now = 10_400;
    gate.settle({ status: 200, headers: headers(9, 10) });
    expect(gate.snapshot()).toMatchObject({ remaining: 9, resetAtMs: 20_400 });
  });

  it('ignores answers without the headers and requests that got no answer', () => {
    const gate = new RateLimitGate({ now: () => 0 });
    gate.admit();
    gate.settle(undefined);
    gate.admit();
    gate.settle({ status: 200, headers: {} });
    expect(gate.snapshot()).toEqual({ remaining: undefined, resetAtMs: 0, inFlight: 0 });
    expect(gate.admit()).toBeUndefined();
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

import { ZodError } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/http/errors.js';
import type { HttpRequest } from '../../../src/http/transport.js';
import { FaultEngine, FaultRuleSchema } from '../../../sandbox/shared/faults.js';
import { rawExchange, startFaultyApp, type FaultyApp } from './faulty-app.js';

const createSale: HttpRequest = {
  operation: 'createSale',
  method: 'POST',
  path: '/v1/sales',
  body: '{"traderInvoiceNumber":"INV-1"}',
  idempotent: false,
};
const getSale: HttpRequest = { operation: 'getSale', method: 'GET', path: '/v1/sales/sale_9', idempotent: true };

function json(body: Buffer): unknown {
  return JSON.parse(body.toString('utf8'));
}

async function transportError(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

describe('FaultEngine over real HTTP', () => {
  let svc: FaultyApp;
  beforeEach(async () => {
    svc = await startFaultyApp();
  });
  afterEach(async () => {
    await svc.close();
  });

  it('passes requests through untouched when no rule matches', async () => {
    svc.faults.add({ kind: 'error', path: '/v1/items' });
    const res = await svc.transport.send(createSale);
    expect(res.status).toBe(201);
    expect(svc.writes()).toBe(1);
    expect(svc.faults.injectedCounts().error).toBe(0);
  });

  it("'error' answers the status with the service's error body and never runs the handler", async () => {
    svc.faults.add({ kind: 'error', method: 'post', path: '/v1/sales' });
    const res = await svc.transport.send(createSale);
    expect(res.status).toBe(503);
    expect(json(res.body)).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
    expect(svc.writes()).toBe(0);

    svc.faults.clear();
    svc.faults.add({ kind: 'error', status: 500 });
    const other = await svc.transport.send(getSale);
    expect(other.status).toBe(500);
    expect(json(other.body)).toMatchObject({ error: { code: 'internal_error' } });
    expect(svc.faults.injectedCounts().error).toBe(2);
  });

  it("'latency' delays the answer and then lets the request through", async () => {
    svc.faults.add({ kind: 'latency', delayMs: 300, path: '/v1/sales/:id' });
    const started = performance.now();
    const res = await svc.transport.send(getSale);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    const quick = performance.now();
    await svc.transport.send(createSale);
    expect(performance.now() - quick).toBeLessThan(250);
  });

  it("'reset' drops the connection before anything is processed", async () => {
    svc.faults.add({ kind: 'reset', path: '/v1/sales', times: 1 });
    const err = await transportError(svc.transport.send(createSale));
    expect(['connection_reset', 'network_error']).toContain(err.code);
    expect(err.status).toBeUndefined();
    expect(svc.writes()).toBe(0);
    expect(svc.faults.injectedCounts().reset).toBe(1);
    // The client's pool recovers: the next request on a fresh connection succeeds.
    expect((await svc.transport.send(createSale)).status).toBe(201);
  });

  it("'reset' sends no bytes at all", async () => {
    svc.faults.add({ kind: 'reset' });
    expect(await rawExchange(svc.baseUrl, 'GET', '/v1/sales/abc')).toBe('');
  });

  it("'rate-limit' answers 429 with Retry-After and the rate-limit headers, without running the handler", async () => {
    svc.faults.add({ kind: 'rate-limit', retryAfterSeconds: 7, limit: 30 });
    const res = await svc.transport.send(createSale);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.headers['x-ratelimit-limit']).toBe('30');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(res.headers['x-ratelimit-reset']).toBe('7');
    expect(json(res.body)).toMatchObject({ error: { code: 'rate_limited' } });
    expect(svc.writes()).toBe(0);
  });

  it("'rate-limit' defaults to Retry-After 1 and limit 120", async () => {
    svc.faults.add({ kind: 'rate-limit' });
    const res = await svc.transport.send(getSale);
    expect([res.headers['retry-after'], res.headers['x-ratelimit-limit']]).toEqual(['1', '120']);
  });

  it("'commit-then-fail' runs the handler, then answers with the error instead", async () => {
    svc.faults.add({ kind: 'commit-then-fail', path: '/v1/sales', times: 1 });
    const res = await svc.transport.send(createSale);
    expect(svc.writes()).toBe(1);
    expect(res.status).toBe(503);
    expect(json(res.body)).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/application\/json/);
    // Used up: the next write goes through normally.
    const next = await svc.transport.send(createSale);
    expect([next.status, svc.writes()]).toEqual([201, 2]);
  });

  it("'commit-then-fail' with failWith 'reset' runs the handler and drops the connection", async () => {
    svc.faults.add({ kind: 'commit-then-fail', failWith: 'reset', path: '/v1/sales', times: 1 });
    const err = await transportError(svc.transport.send(createSale));
    expect(svc.writes()).toBe(1);
    expect(err.code).toBe('connection_reset');
    expect(err.requestSent).toBe(true);
    expect(err.retry).toBe('ambiguous');
    expect(svc.faults.injectedCounts()['commit-then-fail']).toBe(1);
  });

  it("'commit-then-fail' with failWith 'reset' sends no bytes although the write happened", async () => {
    svc.faults.add({ kind: 'commit-then-fail', failWith: 'reset' });
    expect(await rawExchange(svc.baseUrl, 'POST', '/v1/sales', '{}')).toBe('');
    expect(svc.writes()).toBe(1);
  });

  it('matches a route pattern, a concrete path or a regular expression', async () => {
    const retry: HttpRequest = {
      operation: 'retrySale',
      method: 'POST',
      path: '/v1/sales/abc/retry',
      idempotent: true,
    };
    svc.faults.add({ id: 'pattern', kind: 'error', status: 502, path: '/v1/sales/:id/retry' });
    expect((await svc.transport.send(retry)).status).toBe(502);
    svc.faults.remove('pattern');

    svc.faults.add({ id: 'concrete', kind: 'error', status: 504, path: '/v1/sales/abc/retry' });
    expect((await svc.transport.send(retry)).status).toBe(504);
    expect((await svc.transport.send({ ...retry, path: '/v1/sales/other/retry' })).status).toBe(200);
    svc.faults.remove('concrete');

    svc.faults.add({ kind: 'error', status: 500, path: 're:^/v1/sales/[^/]+/retry$' });
    expect((await svc.transport.send({ ...retry, path: '/v1/sales/zzz/retry' })).status).toBe(500);
    expect((await svc.transport.send(getSale)).status).toBe(200);
  });

  it('ignores the query string when matching a concrete path', async () => {
    svc.faults.add({ kind: 'error', path: '/v1/sales/sale_9' });
    expect((await svc.transport.send({ ...getSale, query: { expand: 'lines' } })).status).toBe(503);
  });

  it('matches the method and the service', async () => {
    svc.faults.add({ kind: 'error', method: 'GET' });
    svc.faults.add({ kind: 'error', status: 500, service: 'accounting' });
    expect((await svc.transport.send(createSale)).status).toBe(201);
    expect((await svc.transport.send(getSale)).status).toBe(503);
  });

  it('never faults the inspection prefix', async () => {
    svc.faults.add({ kind: 'reset' });
    const res = await svc.transport.send({
      operation: 'inspect',
      method: 'GET',
      path: '/__sandbox/state',
      idempotent: true,
    });
    expect(res.status).toBe(200);
  });

  it('applies a rule `times` times and then removes it', async () => {
    const rule = svc.faults.add({ kind: 'error', times: 2 });
    expect(svc.faults.list()).toEqual([{ ...rule, times: 2 }]);
    expect((await svc.transport.send(getSale)).status).toBe(503);
    expect(svc.faults.list()[0]?.times).toBe(1);
    expect((await svc.transport.send(getSale)).status).toBe(503);
    expect(svc.faults.list()).toEqual([]);
    expect((await svc.transport.send(getSale)).status).toBe(200);
  });

  it('lets the first answering rule decide, and adds up the latency of every matching latency rule', async () => {
    svc.faults.add({ kind: 'latency', delayMs: 150 });
    svc.faults.add({ kind: 'error', status: 500, times: 1 });
    svc.faults.add({ kind: 'latency', delayMs: 150 });
    svc.faults.add({ kind: 'error', status: 502, times: 1 });
    const started = performance.now();
    expect((await svc.transport.send(getSale)).status).toBe(500);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    // The second error rule was not consumed by the first request.
    expect((await svc.transport.send(getSale)).status).toBe(502);
    expect(svc.faults.injectedCounts()).toMatchObject({ latency: 4, error: 2 });
  });
});

describe('FaultEngine probability', () => {
  it('applies a rule only when random() falls below its probability, and counts only applied ones', async () => {
    const rolls = [0.1, 0.9, 0.49, 0.5];
    const svc = await startFaultyApp({ random: () => rolls.shift() ?? 1 });
    try {
      svc.faults.add({ kind: 'error', probability: 0.5, times: 5 });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await svc.transport.send(getSale)).status);
      expect(statuses).toEqual([503, 200, 503, 200]);
      expect(svc.faults.list()[0]?.times).toBe(3);
      expect(svc.faults.injectedCounts().error).toBe(2);
    } finally {
      await svc.close();
    }
  });
});

describe('FaultEngine rules', () => {
  it('assigns ids, replaces a rule with a known id and removes by id', () => {
    const engine = new FaultEngine([{ kind: 'latency', delayMs: 5 }]);
    const [first] = engine.list();
    expect(first?.id).toMatch(/\S/);
    const named = engine.add({ id: 'slow', kind: 'latency', delayMs: 10 });
    expect(named.id).toBe('slow');
    engine.add({ id: 'slow', kind: 'latency', delayMs: 20 });
    expect(engine.list().map((r) => [r.id, r.delayMs])).toEqual([
      [first?.id, 5],
      ['slow', 20],
    ]);
    expect(engine.remove('slow')).toBe(true);
    expect(engine.remove('slow')).toBe(false);
    engine.clear();
    expect(engine.list()).toEqual([]);
  });

  it('gives list() copies, so callers cannot change active rules', () => {
    const engine = new FaultEngine();
    engine.add({ id: 'x', kind: 'error', times: 3 });
    const [copy] = engine.list();
    if (copy) copy.times = 99;
    expect(engine.list()[0]?.times).toBe(3);
  });

  it('rejects bad rules with a ZodError naming the field', () => {
    const engine = new FaultEngine();
    const fieldOf = (input: unknown) => {
      try {
        engine.add(input as never);
      } catch (err) {
        if (err instanceof ZodError) return err.issues[0]?.path.join('.');
        throw err;
      }
      return undefined;
    };
    expect(fieldOf({ kind: 'explode' })).toBe('kind');
    expect(fieldOf({ kind: 'error', status: 200 })).toBe('status');
    expect(fieldOf({ kind: 'error', times: 0 })).toBe('times');
    expect(fieldOf({ kind: 'error', probability: 1.5 })).toBe('probability');
    expect(fieldOf({ kind: 'latency', delayMs: -1 })).toBe('delayMs');
    expect(fieldOf({ kind: 'error', path: 're:([' })).toBe('path');
    expect(fieldOf({ kind: 'error', delayMS: 5 })).toBe('');
    expect(engine.list()).toEqual([]);
  });

  it('uppercases the method', () => {
    expect(FaultRuleSchema.parse({ kind: 'error', method: 'post' }).method).toBe('POST');
  });
});

describe('FaultEngine callbackPlan', () => {
  it('is a plain delivery when no callback rule is set', () => {
    const engine = new FaultEngine([{ kind: 'error' }]);
    expect(engine.callbackPlan()).toEqual({ duplicates: 0, delayMs: 0, outOfOrder: false });
  });

  it('combines matching callback rules and consumes their times', () => {
    const engine = new FaultEngine([
      { kind: 'callback-duplicate', duplicates: 2, times: 1 },
      { kind: 'callback-delay', delayMs: 500, path: '/ignored', method: 'GET' },
      { kind: 'callback-out-of-order', times: 1 },
    ]);
    expect(engine.callbackPlan()).toEqual({ duplicates: 2, delayMs: 500, outOfOrder: true });
    expect(engine.callbackPlan()).toEqual({ duplicates: 0, delayMs: 500, outOfOrder: false });
    expect(engine.list().map((r) => r.kind)).toEqual(['callback-delay']);
    expect(engine.injectedCounts()).toMatchObject({
      'callback-duplicate': 1,
      'callback-delay': 2,
      'callback-out-of-order': 1,
    });
  });

  it('defaults duplicates to 1 and skips rules for the other service', () => {
    const engine = new FaultEngine([
      { kind: 'callback-duplicate' },
      { kind: 'callback-delay', delayMs: 9, service: 'accounting' },
    ]);
    expect(engine.callbackPlan()).toEqual({ duplicates: 1, delayMs: 0, outOfOrder: false });
    expect(engine.callbackPlan('accounting')).toEqual({ duplicates: 1, delayMs: 9, outOfOrder: false });
  });

  it('rolls the probability of callback rules too', () => {
    const rolls = [0.7, 0.2];
    const engine = new FaultEngine([{ kind: 'callback-out-of-order', probability: 0.5 }], () => rolls.shift() ?? 1);
    expect(engine.callbackPlan().outOfOrder).toBe(false);
    expect(engine.callbackPlan().outOfOrder).toBe(true);
  });
});

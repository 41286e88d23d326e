import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../../src/http/transport.js';
import { NO_ROUTE, RequestStats } from '../../../sandbox/shared/request-stats.js';
import { eventually } from '../../helpers/eventually.js';
import { startFaultyApp, type FaultyApp } from './faulty-app.js';

const createSale: HttpRequest = {
  operation: 'createSale',
  method: 'POST',
  path: '/v1/sales',
  body: '{}',
  idempotent: false,
};
const getSale = (id: string, app?: string): HttpRequest => ({
  operation: 'getSale',
  method: 'GET',
  path: `/v1/sales/${id}`,
  idempotent: true,
  ...(app ? { headers: { 'x-app': app } } : {}),
});

// The server records a request when its response finishes, which can be a moment after the client has it.
function recorded(svc: FaultyApp, total: number): Promise<number> {
  return eventually(
    () => svc.stats.snapshot().total,
    (n) => n === total,
    { timeoutMs: 2_000, intervalMs: 10, what: `${total} requests recorded` },
  );
}

describe('RequestStats over real HTTP', () => {
  let svc: FaultyApp;
  beforeEach(async () => {
    svc = await startFaultyApp();
  });
  afterEach(async () => {
    await svc.close();
  });

  it('records each request with its route pattern, concrete path and status', async () => {
    const before = Date.now();
    await svc.transport.send(getSale('sale_1'));
    await svc.transport.send({ ...getSale('sale_2'), query: { x: '1' } });
    await svc.transport.send(createSale);
    await recorded(svc, 3);
    const records = svc.stats.records();
    expect(records.map((r) => [r.method, r.route, r.path, r.status, r.service])).toEqual([
      ['GET', '/v1/sales/:id', '/v1/sales/sale_1', 200, 'compliance'],
      ['GET', '/v1/sales/:id', '/v1/sales/sale_2', 200, 'compliance'],
      ['POST', '/v1/sales', '/v1/sales', 201, 'compliance'],
    ]);
    expect(records.every((r) => r.at >= before && r.at <= Date.now())).toBe(true);
    expect(svc.stats.snapshot()).toEqual({
      total: 3,
      rateLimited: 0,
      routes: [
        { service: 'compliance', method: 'GET', route: '/v1/sales/:id', count: 2, statuses: { '200': 2 } },
        { service: 'compliance', method: 'POST', route: '/v1/sales', count: 1, statuses: { '201': 1 } },
      ],
    });
  });

  it('records unknown paths under one placeholder route, and never the inspection prefix', async () => {
    await svc.transport.send({ operation: 'x', method: 'GET', path: '/v1/nope', idempotent: true });
    await svc.transport.send({ operation: 'inspect', method: 'GET', path: '/__sandbox/state', idempotent: true });
    await svc.transport.send(getSale('a'));
    await recorded(svc, 2);
    expect(svc.stats.records().map((r) => [r.route, r.path, r.status])).toEqual([
      [NO_ROUTE, '/v1/nope', 404],
      ['/v1/sales/:id', '/v1/sales/a', 200],
    ]);
  });

  it('counts 429 answers, from the app and from injected faults', async () => {
    await svc.transport.send({ operation: 'busy', method: 'GET', path: '/v1/busy', idempotent: true });
    svc.faults.add({ kind: 'rate-limit', times: 1 });
    await svc.transport.send(getSale('a'));
    await svc.transport.send(getSale('b'));
    await recorded(svc, 3);
    expect(svc.stats.snapshot().rateLimited).toBe(2);
    expect(svc.stats.records().map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it('records faulted answers with the status the client got, and dropped connections with status 0', async () => {
    svc.faults.add({ kind: 'error', times: 1 });
    await svc.transport.send(getSale('a'));
    svc.faults.add({ kind: 'reset', times: 1 });
    await svc.transport.send(getSale('b')).catch(() => undefined);
    svc.faults.add({ kind: 'commit-then-fail', times: 1 });
    await svc.transport.send(createSale);
    svc.faults.add({ kind: 'commit-then-fail', failWith: 'reset', times: 1 });
    await svc.transport.send(createSale).catch(() => undefined);
    await recorded(svc, 4);
    expect(svc.stats.records().map((r) => [r.route, r.status])).toEqual([
      ['/v1/sales/:id', 503],
      ['/v1/sales/:id', 0],
      ['/v1/sales', 503],
      ['/v1/sales', 0],
    ]);
    expect(svc.writes()).toBe(2);
  });

  it('tags requests with the application and filters records', async () => {
    await svc.transport.send(getSale('a', 'app_1'));
    const middle = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = Date.now();
    await svc.transport.send(getSale('b', 'app_2'));
    await svc.transport.send(getSale('c'));
    await recorded(svc, 3);
    expect(svc.stats.records().map((r) => r.applicationId)).toEqual(['app_1', 'app_2', undefined]);
    expect(svc.stats.records({ applicationId: 'app_2' }).map((r) => r.path)).toEqual(['/v1/sales/b']);
    expect(svc.stats.records({ since: later }).map((r) => r.path)).toEqual(['/v1/sales/b', '/v1/sales/c']);
    expect(svc.stats.records({ since: middle + 1_000_000 })).toEqual([]);
    expect(svc.stats.records({ service: 'accounting' })).toEqual([]);
    expect(svc.stats.records({ service: 'compliance' })).toHaveLength(3);
  });

  it('clears everything on reset', async () => {
    await svc.transport.send(getSale('a'));
    await recorded(svc, 1);
    svc.stats.reset();
    expect(svc.stats.snapshot()).toEqual({ total: 0, rateLimited: 0, routes: [] });
    expect(svc.stats.records()).toEqual([]);
    await svc.transport.send(getSale('b'));
    await recorded(svc, 1);
    expect(svc.stats.records().map((r) => r.path)).toEqual(['/v1/sales/b']);
  });
});

describe('RequestStats ring buffer', () => {
  it('keeps only the latest maxRecords records, oldest first, while totals count everything', async () => {
    const svc = await startFaultyApp({ maxRecords: 3, service: 'accounting' });
    try {
      for (const id of ['1', '2', '3', '4', '5']) await svc.transport.send(getSale(id));
      await recorded(svc, 5);
      expect(svc.stats.records().map((r) => r.path)).toEqual(['/v1/sales/3', '/v1/sales/4', '/v1/sales/5']);
      expect(svc.stats.records().every((r) => r.service === 'accounting')).toBe(true);
      expect(svc.stats.snapshot().routes).toEqual([
        { service: 'accounting', method: 'GET', route: '/v1/sales/:id', count: 5, statuses: { '200': 5 } },
      ]);
    } finally {
      await svc.close();
    }
  });

  it('rejects a bad maxRecords', () => {
    expect(() => new RequestStats({ maxRecords: 0 })).toThrow(/maxRecords/);
  });
});

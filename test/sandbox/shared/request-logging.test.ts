/**
 * What the sandbox writes to its log per request: `npm start` on the embedded sandbox must not
 * fill the terminal with two multi-line entries per request. Per request: one debug entry; an answer of 5xx (or a
 * dropped connection) also at warn; and a summary per service at info, at most once per period and only when
 * requests came.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createServiceApp } from '../../../sandbox/shared/fastify.js';
import { startSandbox, type Sandbox } from '../../../sandbox/server.js';
import { eventually } from '../../helpers/eventually.js';

interface Entry {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

function memoryLogger(level: string) {
  const entries: Entry[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) entries.push(JSON.parse(line) as Entry);
      done();
    },
  });
  return { logger: pino({ level }, stream), entries };
}

/** Entries written because of requests (not the servers' own "listening" lines). */
const requestEntries = (entries: Entry[]) => entries.filter((e) => !/listening/i.test(e.msg));

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

describe('sandbox request logging', () => {
  it('writes nothing at info per request, one debug entry per request, and the route rather than the path', async () => {
    const { logger, entries } = memoryLogger('debug');
    sandbox = await startSandbox({ logger });
    for (let i = 0; i < 10; i++) await fetch(`${sandbox.complianceUrl}/v1/identity`);
    await fetch(`${sandbox.accountingUrl}/companies?limit=1`);
    const perRequest = requestEntries(entries);
    expect(perRequest.filter((e) => e.level >= LEVEL.info)).toEqual([]);
    expect(perRequest.filter((e) => e.level === LEVEL.debug)).toHaveLength(11);
    expect(perRequest[0]).toMatchObject({ level: LEVEL.debug, method: 'GET', route: '/v1/identity', status: 401 });
  });

  it('warns of an answer of 5xx', async () => {
    const { logger, entries } = memoryLogger('info');
    sandbox = await startSandbox({ logger });
    await sandbox.inspector.addFault({ service: 'compliance', kind: 'error', status: 503, times: 1 });
    expect((await fetch(`${sandbox.complianceUrl}/v1/identity`)).status).toBe(503);
    const warned = requestEntries(entries).filter((e) => e.level === LEVEL.warn);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ method: 'GET', route: '/v1/identity', status: 503 });
  });

  it('logs a connection dropped without an answer (a refusing outage) as status 0, at warn', async () => {
    const { logger, entries } = memoryLogger('info');
    sandbox = await startSandbox({ logger });
    await sandbox.inspector.addOutage({ kind: 'service', mode: 'refuse' });
    await expect(fetch(`${sandbox.complianceUrl}/v1/identity`)).rejects.toThrow();
    const warned = await eventually(
      () => requestEntries(entries).filter((e) => e.level === LEVEL.warn),
      (list) => list.length > 0,
      { timeoutMs: 2_000, intervalMs: 10, what: 'the warning' },
    );
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ route: '/v1/identity', status: 0, msg: 'connection dropped without an answer' });
  });

  it('sums up the requests of each period at info, and is silent for a period without any', async () => {
    const { logger, entries } = memoryLogger('info');
    const app = createServiceApp(logger, { summaryEveryMs: 200 });
    app.get('/ping', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      for (let i = 0; i < 3; i++) await fetch(`http://127.0.0.1:${port}/ping`);
      await fetch(`http://127.0.0.1:${port}/nothing-here`);
      await new Promise((r) => setTimeout(r, 500));
      const summaries = () => entries.filter((e) => e.level === LEVEL.info && e.msg.startsWith('requests'));
      const written = summaries();
      // The requests may straddle two periods on a loaded machine; together the summaries count each once.
      const sum = (key: string) =>
        written.reduce(
          (n, e) =>
            n + (key === 'requests' ? (e.requests as number) : ((e.statuses as Record<string, number>)[key] ?? 0)),
          0,
        );
      expect(written.length).toBeGreaterThanOrEqual(1);
      expect([sum('requests'), sum('200'), sum('404')]).toEqual([4, 3, 1]);
      await new Promise((r) => setTimeout(r, 600));
      expect(summaries()).toHaveLength(written.length);
    } finally {
      await app.close();
    }
  });
});

/**
 * `/readyz` and `/livez` of `npm run worker` (a real child process, the sandbox over HTTP, the run's Temporal server
 * reached through a proxy this file can cut): not ready until every worker polls, ready while it runs and its callback
 * receiver answers, live through an outage of Temporal, and not ready from the moment SIGTERM arrives while the
 * receiver drains what is in flight. Bad settings stop the start, named.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { ConfigError } from '../../src/config/env.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { startLiveness } from '../../src/worker/health.js';
import { EXIT_MARGIN_MS } from '../../src/worker/process.js';
import { freePort } from '../../tools/free-port.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { uniqueTaskQueue } from '../helpers/temporal.js';
import { sandboxWorkerEnv, spawnWorker, type WorkerChild } from '../helpers/worker-child.js';

const GRACE_MS = 3_000;
const CALLBACK_SECRET = 'health-test-callback-secret-0123456789abcdef';

let sandbox: Sandbox;
const children: WorkerChild[] = [];
const sockets: net.Socket[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(children.map((child) => child.kill()));
  await sandbox?.close();
});

interface Probe {
  status: number;
  body: { status?: string; checks?: Record<string, string>; error?: string } | undefined;
}

async function probe(url: string, init: RequestInit = {}): Promise<Probe> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Probe['body']) : undefined };
}

/** Undefined while nothing listens there. */
async function tryProbe(url: string): Promise<Probe | undefined> {
  try {
    return await probe(url);
  } catch {
    return undefined;
  }
}

/** A TCP proxy to the run's Temporal server that the test can cut (an outage) and restore on the same port. */
async function temporalProxy(target: string) {
  const at = target.lastIndexOf(':');
  const [host, port] = [target.slice(0, at), Number(target.slice(at + 1))];
  const listenPort = await freePort();
  const open = new Set<net.Socket>();
  let server: net.Server | undefined;
  const restore = () =>
    new Promise<void>((resolve, reject) => {
      const listening = net.createServer((client) => {
        const upstream = net.connect(port, host);
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.once('close', () => open.delete(socket));
          socket.on('error', () => undefined);
        }
        client.once('close', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
        client.pipe(upstream).pipe(client);
      });
      listening.once('error', reject);
      listening.listen(listenPort, '127.0.0.1', () => resolve());
      server = listening;
    });
  const cut = async () => {
    const closing = server;
    server = undefined;
    for (const socket of open) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  await restore();
  return { address: `127.0.0.1:${listenPort}`, cut, restore };
}

/** Whether a TCP connection is taken (a full server takes it, then drops it) or refused (nothing listens). */
function connection(port: number): Promise<'taken' | 'refused' | 'failed'> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('taken');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : 'failed'));
  });
}

/** A connection to the receiver that sends a callback's headers and part of its body, the rest when asked. */
async function partialCallback(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const body = JSON.stringify({ event: 'sale.completed', padding: 'x'.repeat(32) });
  socket.write(
    `POST /callbacks/sale-health-test/not-a-token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  return {
    finish: () => void socket.write(body.slice(10)),
    answer: () => answer,
    closed,
  };
}

describe('the settings of the health server and of the shutdown', () => {
  it('HEALTH_BIND_ADDRESS is host:port; SHUTDOWN_GRACE_TIME a duration from 1 s to 10 min, 30 s unless set', () => {
    expect(loadWorkerConfig({})).toMatchObject({ healthBindAddress: undefined, shutdownGraceMs: 30_000 });
    expect(loadWorkerConfig({ HEALTH_BIND_ADDRESS: '0.0.0.0:9465', SHUTDOWN_GRACE_TIME: '45s' })).toMatchObject({
      healthBindAddress: '0.0.0.0:9465',
      shutdownGraceMs: 45_000,
    });
    expect(loadWorkerConfig({ HEALTH_BIND_ADDRESS: '[::]:9465' }).healthBindAddress).toBe('[::]:9465');
    const refused = (env: Record<string, string>) => () => loadWorkerConfig(env);
    expect(refused({ HEALTH_BIND_ADDRESS: '9465' })).toThrow(ConfigError);
    expect(refused({ HEALTH_BIND_ADDRESS: '9465' })).toThrow(
      'HEALTH_BIND_ADDRESS: must be host:port, e.g. 0.0.0.0:9465',
    );
    expect(refused({ HEALTH_BIND_ADDRESS: 'http://0.0.0.0:9465' })).toThrow(/^HEALTH_BIND_ADDRESS: must be host:port/);
    expect(refused({ HEALTH_BIND_ADDRESS: '0.0.0.0:94650' })).toThrow(
      'HEALTH_BIND_ADDRESS: port must be at most 65535',
    );
    for (const grace of ['500ms', '30', '11m', 'soon'])
      expect(refused({ SHUTDOWN_GRACE_TIME: grace }), grace).toThrow(
        `SHUTDOWN_GRACE_TIME: must be a duration from 1s to 10m with its unit, e.g. 30s (got "${grace}")`,
      );
  });

  it('a worker with a bad one refuses to start, naming it', async () => {
    const child = spawnWorker({ SANDBOX: 'embedded', PAYLOAD_ENCRYPTION: 'off', HEALTH_BIND_ADDRESS: 'localhost' });
    children.push(child);
    const exit = await child.exited;
    expect(exit.code, child.output()).toBe(2);
    expect(child.output()).toContain('configuration error: HEALTH_BIND_ADDRESS: must be host:port');
  });
});

describe('liveness', () => {
  it('fails once the event loop was held past its limit; and without the Temporal runtime it watches', async () => {
    // This process installed no Temporal runtime: the runtime check has nothing to find.
    const liveness = startLiveness({ delayLimitMs: 200, windowMs: 60_000 });
    try {
      await sleep(50);
      expect(await liveness.check()).toEqual({ ok: false, checks: { eventLoop: 'ok', runtime: 'not installed' } });
      const until = Date.now() + 500;
      while (Date.now() < until); // a wedged loop
      await sleep(30);
      expect((await liveness.check()).checks.eventLoop).toMatch(/^delayed \d+ ms$/);
    } finally {
      liveness.close();
    }
  });
});

describe('a worker process serving /readyz and /livez', () => {
  it(
    'is ready once its workers poll, live through a Temporal outage, and not ready from SIGTERM on',
    { timeout: 90_000 },
    async () => {
      const proxy = await temporalProxy(inject('temporalAddress'));
      const [healthPort, metricsPort, callbackPort] = [await freePort(), await freePort(), await freePort()];
      const health = `http://127.0.0.1:${healthPort}`;
      const worker = spawnWorker({
        ...sandboxWorkerEnv(sandbox),
        TEMPORAL_ADDRESS: proxy.address,
        PAYLOAD_ENCRYPTION: 'off',
        WORKFLOW_TASK_QUEUE: uniqueTaskQueue('health'),
        CALLBACK_PUBLIC_BASE_URL: `http://127.0.0.1:${callbackPort}`,
        CALLBACK_SECRET,
        CALLBACK_HOST: '127.0.0.1',
        CALLBACK_PORT: String(callbackPort),
        // Two connections at most: the test fills them to see the receiver refuse.
        CALLBACK_MAX_CONNECTIONS: '2',
        METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
        HEALTH_BIND_ADDRESS: `127.0.0.1:${healthPort}`,
        SHUTDOWN_GRACE_TIME: `${GRACE_MS / 1000}s`,
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      });
      children.push(worker);

      // Up before the start-up checks: live, and not ready until the workers poll (they start after 'worker running').
      const beforeReady: Probe[] = [];
      const ready = await eventually(
        async () => {
          const answer = await tryProbe(`${health}/readyz`);
          const running = worker.output().includes('worker running');
          if (answer && answer.status !== 200) beforeReady.push(answer);
          return { answer, running };
        },
        ({ answer }) => answer?.status === 200,
        { timeoutMs: 60_000, intervalMs: 50, what: 'readiness' },
      );
      expect(ready.running).toBe(true);
      expect(ready.answer?.body).toEqual({ status: 'ok', checks: { workers: 'ok', queues: 'ok', callbacks: 'ok' } });
      expect(beforeReady.length).toBeGreaterThan(0);
      for (const answer of beforeReady) {
        expect(answer.status).toBe(503);
        expect(answer.body?.status).toBe('failing');
        expect(answer.body?.checks?.workers).not.toBe('ok');
      }

      expect(await probe(`${health}/livez`)).toEqual({
        status: 200,
        body: { status: 'ok', checks: { eventLoop: 'ok', runtime: 'ok' } },
      });
      const head = await fetch(`${health}/livez`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      expect((await probe(`${health}/readyz?verbose=1`)).status).toBe(200);
      expect(await probe(`${health}/healthz`)).toEqual({ status: 404, body: { error: 'not_found' } });
      expect(await probe(`${health}/`)).toEqual({ status: 404, body: { error: 'not_found' } });
      const post = await probe(`${health}/readyz`, { method: 'POST' });
      expect(post.status).toBe(405);

      // A receiver that takes no new connection is not ready for a compliance service's callback.
      const held = [net.connect(callbackPort, '127.0.0.1'), net.connect(callbackPort, '127.0.0.1')];
      sockets.push(...held);
      for (const socket of held) socket.on('error', () => undefined);
      const refusing = await eventually(
        () => probe(`${health}/readyz`),
        (answer) => answer.status === 503,
        { timeoutMs: 10_000, what: 'readiness with the receiver full' },
      );
      expect(refusing.body?.checks).toEqual({ workers: 'ok', queues: 'ok', callbacks: 'receiver unreachable' });
      for (const socket of held) socket.destroy();
      await eventually(
        () => probe(`${health}/readyz`),
        (answer) => answer.status === 200,
        { timeoutMs: 10_000, what: 'readiness with the receiver free again' },
      );

      // Temporal unreachable: still live (nothing of /livez asks the server), so no pod restarts over an outage.
      await proxy.cut();
      for (let i = 0; i < 5; i++) {
        const live = await probe(`${health}/livez`);
        expect(live.status, JSON.stringify(live.body)).toBe(200);
        await sleep(500);
      }
      await proxy.restore();

      // SIGTERM with a callback in flight: not ready at once; live while the receiver drains; the request in flight
      // is answered, one the grace cuts off is closed, and no new connection is taken.
      const answered = await partialCallback(callbackPort);
      const cutOff = await partialCallback(callbackPort);
      // Their headers reach the receiver before the signal does: requests it routed while open, not after.
      await sleep(300);
      const signalledAt = Date.now();
      worker.signal('SIGTERM');
      const stopping = await eventually(
        () => probe(`${health}/readyz`),
        (answer) => answer.body?.checks?.shutdown !== undefined,
        { timeoutMs: 2_000, intervalMs: 20, what: 'readiness after SIGTERM' },
      );
      expect(stopping).toEqual({ status: 503, body: { status: 'failing', checks: { shutdown: 'stopping' } } });
      expect(Date.now() - signalledAt).toBeLessThan(1_000);
      expect((await probe(`${health}/livez`)).status).toBe(200);
      await eventually(
        () => connection(callbackPort),
        (outcome) => outcome === 'refused',
        { timeoutMs: 2_000, what: 'the receiver refusing new connections' },
      );

      answered.finish();
      await eventually(answered.answer, (text) => text.startsWith('HTTP/1.1 '), {
        timeoutMs: 2_000,
        what: 'the answer to the callback in flight',
      });
      // Handled, not shed as a request arriving while the receiver closes would be.
      expect(answered.answer()).not.toMatch(/^HTTP\/1.1 503/);
      await cutOff.closed;
      expect(cutOff.answer()).toBe('');
      const exit = await worker.exited;
      const exitMs = exit.atMs - signalledAt;
      expect(exit.code, worker.output()).toBe(0);
      expect(exitMs).toBeGreaterThanOrEqual(GRACE_MS);
      expect(exitMs).toBeLessThan(GRACE_MS + EXIT_MARGIN_MS);
      expect(await tryProbe(`${health}/livez`)).toBeUndefined();
      expect(worker.output()).not.toContain(CALLBACK_SECRET);
    },
  );
});

// A worker process's `/readyz` and `/livez` for an orchestrator (HEALTH_BIND_ADDRESS): the SDK's Workers serve no
// health port. Up from before the start-up checks: live while the process starts, ready once its workers poll. Plain
// node:http, GET and HEAD only, a small JSON body naming each check's verdict (never a secret).
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Runtime, type Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/worker.js';

/** Each check by name: `ok`, or in a few words why not. A report whose every check said `ok` passes. */
type HealthReport = { ok: boolean; checks: Record<string, string> };
const reportOf = (checks: Record<string, string>): HealthReport => ({
  ok: Object.values(checks).every((verdict) => verdict === 'ok'),
  checks,
});

/** What readiness reads of a started worker process (src/worker/process.ts). */
export interface ReadinessSource {
  readonly stopping: boolean;
  workers: { every(): Worker[] };
  /** The receiver, when the process runs one. */
  callbacks?: { url: string } | undefined;
  /** Queues it polls that its Worker Deployment Version does not hold (the server refused them). */
  queues?: { missing(): ReadonlyArray<{ taskQueue: string }> };
}

interface ProcessHealth {
  url: string;
  /** The started process: readiness follows it from now on. */
  attach(started: ReadinessSource): void;
  close(): Promise<void>;
}

// A probe is answered in milliseconds; a client that sends nothing for long is not a probe.
const REQUEST_TIMEOUT_MS = 5_000;
// A receiver (or core's exporter) that takes longer than this on loopback is in no state to serve.
const LOOPBACK_TIMEOUT_MS = 2_000;

/** Undefined when HEALTH_BIND_ADDRESS is unset. Call after installTemporalRuntime: liveness watches that runtime. */
export async function startProcessHealth(
  config: Pick<WorkerConfig, 'healthBindAddress' | 'metricsBindAddress'>,
  logger: Logger,
): Promise<ProcessHealth | undefined> {
  const bindAddress = config.healthBindAddress;
  if (!bindAddress) return undefined;
  const liveness = startLiveness({ metricsBindAddress: config.metricsBindAddress });
  let attached: ReadinessSource | undefined;
  const routes: Record<string, () => Promise<HealthReport>> = {
    '/readyz': () => readinessOf(attached),
    '/livez': () => liveness.check(),
  };
  const log = logger.child({ component: 'health' });
  const server = createServer(
    { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: REQUEST_TIMEOUT_MS },
    (req, res) => void answer(req, res, routes, log),
  );
  server.setTimeout(REQUEST_TIMEOUT_MS);
  const { host, port } = splitHostPort(bindAddress);
  try {
    await once(server.listen(port, host), 'listening');
  } catch (err) {
    liveness.close();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`HEALTH_BIND_ADDRESS: cannot listen on ${bindAddress}: ${reason}`, { cause: err });
  }
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  logger.info({ readyz: `${url}/readyz`, livez: `${url}/livez` }, 'health probes served');
  let closed: Promise<void> | undefined;
  return {
    url,
    attach: (started) => void (attached = started),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        liveness.close();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  routes: Record<string, () => Promise<HealthReport>>,
  logger: Logger,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!;
  const check = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (!check) return send(req, res, 404, { error: 'not_found' });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return send(req, res, 405, { error: 'method_not_allowed' });
  }
  try {
    const report = await check();
    if (!report.ok) logger.debug({ probe: path, checks: report.checks }, 'health probe failing');
    send(req, res, report.ok ? 200 : 503, { status: report.ok ? 'ok' : 'failing', checks: report.checks });
  } catch (err) {
    logger.warn({ probe: path, err: err instanceof Error ? err.message : String(err) }, 'health check threw');
    send(req, res, 503, { status: 'failing', checks: { probe: 'threw' } });
  }
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/**
 * `/readyz`: whether this process should be sent work (callbacks, through a Service) and counted as up in a rollout.
 * `started` undefined: the process is still starting.
 */
export async function readinessOf(started: ReadinessSource | undefined): Promise<HealthReport> {
  if (!started) return reportOf({ workers: 'starting' });
  // Before anything else: a draining pod must leave the Service's endpoints at once, whatever its workers say.
  if (started.stopping) return reportOf({ shutdown: 'stopping' });
  const workers = started.workers.every();
  const idle = workers.map((worker) => ({ worker, why: notPolling(worker) })).find(({ why }) => why);
  const checks: Record<string, string> = {
    workers: workers.length === 0 ? 'none' : idle ? `${idle.worker.options.taskQueue}: ${idle.why}` : 'ok',
  };
  const refused = started.queues?.missing() ?? [];
  if (started.queues)
    checks.queues =
      refused.length === 0
        ? 'ok'
        : `${refused.length} task queue(s) not held by this build's deployment version (refused by the server): ` +
          `${refused[0]!.taskQueue}${refused.length > 1 ? ', …' : ''}`;
  if (started.callbacks) {
    // The receiver's own health route, over HTTP as a compliance service's callback would come.
    const { hostname, port } = new URL(started.callbacks.url);
    checks.callbacks = verdict('receiver', await httpStatus(`${loopbackUrl(`${hostname}:${port || 80}`)}/health`));
  }
  return reportOf(checks);
}

/**
 * Why a Worker is not polling, or undefined when it is: it runs, and each poll loop it started waits in core for the
 * server's next task. The strongest signal the SDK gives: core retries a failed poll without telling the loop. A busy
 * Worker reads as polling (its next poll is asked for before any probe can run); a kind of task it has nothing
 * registered for is SHUTDOWN from the start.
 */
function notPolling(worker: Worker): string | undefined {
  const status = worker.getStatus();
  if (status.runState !== 'RUNNING') return status.runState.toLowerCase();
  const loops = [
    { kind: 'workflow', state: status.workflowPollerState, outstanding: status.hasOutstandingWorkflowPoll },
    { kind: 'activity', state: status.activityPollerState, outstanding: status.hasOutstandingActivityPoll },
  ];
  const failed = loops.find((loop) => loop.state === 'FAILED');
  if (failed) return `${failed.kind} poller failed`;
  const running = loops.filter((loop) => loop.state === 'POLLING');
  if (running.length === 0) return 'no poller';
  const idle = running.find((loop) => !loop.outstanding);
  return idle ? `${idle.kind} poller not polling yet` : undefined;
}

/**
 * `/livez`: whether this process is wedged and only a restart helps. Nothing here asks the Temporal server: an outage
 * of Temporal (or of a service) is waited out by a live process, never answered by restarting every pod.
 *
 * A loop `delayLimitMs` late (default 5 s) has starved the activities' heartbeats (a third of 10 s apart) and the
 * Workers' own timers: the process is wedged, not busy. A probe the loop cannot answer at all fails by its own timeout.
 * The delay is the worst over the last full window (default 10 s) and the one under way: one stall is seen by a probe
 * or two.
 */
export function startLiveness(options: {
  /** METRICS_BIND_ADDRESS: core's own exporter, asked as the runtime's sign of life. */
  metricsBindAddress?: string | undefined;
  delayLimitMs?: number;
  windowMs?: number;
}): { check(): Promise<HealthReport>; close(): void } {
  const limitMs = options.delayLimitMs ?? 5_000;
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  let previousMaxNs = 0;
  const window = setInterval(() => {
    previousMaxNs = delay.max;
    delay.reset();
  }, options.windowMs ?? 10_000);
  window.unref();
  // The runtime the process installed: Runtime.instance() would install a fresh one if it were gone.
  const installed = Runtime._instance;
  return {
    check: async () => {
      const worstMs = Math.round(Math.max(previousMaxNs, delay.max) / 1e6);
      return reportOf({
        eventLoop: worstMs > limitMs ? `delayed ${worstMs} ms` : 'ok',
        runtime: await runtimeVerdict(installed, options.metricsBindAddress),
      });
    },
    close: () => {
      clearInterval(window);
      delay.disable();
    },
  };
}

/**
 * The native Temporal runtime answers. Every call of the bridge that runs on core's Tokio runtime asks the Temporal
 * server, but one task on it never does: the Prometheus exporter core serves METRICS_BIND_ADDRESS from. Its answer on
 * loopback proves core's threads still schedule work (the same threads poll and complete every task), and costs one
 * scrape per probe. Without an exporter, what is left is the runtime still being the one installed.
 */
async function runtimeVerdict(installed: Runtime | undefined, metricsBindAddress: string | undefined): Promise<string> {
  if (installed === undefined || Runtime._instance !== installed) return 'not installed';
  if (!metricsBindAddress) return 'ok';
  return verdict('metrics exporter', await httpStatus(`${loopbackUrl(metricsBindAddress)}/metrics`));
}

function verdict(what: string, status: number | 'timeout' | 'unreachable'): string {
  if (status === 200) return 'ok';
  return typeof status === 'number' ? `${what} answered ${status}` : `${what} ${status}`;
}

/** `0.0.0.0:9465`, `[::]:9465`, `localhost:9465`: the host without brackets and the port. */
function splitHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) };
}

/** An http URL of this machine that reaches a server bound to `address` (a wildcard is reached on loopback). */
function loopbackUrl(address: string): string {
  const { host, port } = splitHostPort(address);
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}

/**
 * The status a server of this process answers `url` with, on a connection of its own (a kept-alive one would show a
 * server that accepts nothing new as up), or why it did not in time.
 */
function httpStatus(url: string): Promise<number | 'timeout' | 'unreachable'> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: LOOPBACK_TIMEOUT_MS }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('timeout', () => {
      resolve('timeout');
      req.destroy();
    });
    req.once('error', () => resolve('unreachable'));
  });
}

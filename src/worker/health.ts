// The worker process's `/readyz` and `/livez` for an orchestrator: the SDK's Workers serve no health port. Plain
// node:http, GET and HEAD only, a small JSON body naming each check's verdict (never a secret).
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';

/** Each check by name: `ok`, or in a few words why not. */
export type HealthChecks = Record<string, string>;

export interface HealthReport {
  ok: boolean;
  checks: HealthChecks;
}

/** A report whose every check said `ok` passes. */
export function reportOf(checks: HealthChecks): HealthReport {
  return { ok: Object.values(checks).every((verdict) => verdict === 'ok'), checks };
}

export interface HealthServer {
  /** Where it listens (a port 0 asked for is the real one here). */
  url: string;
  close(): Promise<void>;
}

// A probe is answered in milliseconds; a client that sends nothing for long is not a probe.
const REQUEST_TIMEOUT_MS = 5_000;

/** `bindAddress`: host:port, as HEALTH_BIND_ADDRESS gives it. */
export async function startHealthServer(options: {
  bindAddress: string;
  ready: () => Promise<HealthReport>;
  live: () => Promise<HealthReport>;
  logger: Logger;
}): Promise<HealthServer> {
  const { host, port } = splitHostPort(options.bindAddress);
  const routes: Record<string, () => Promise<HealthReport>> = { '/readyz': options.ready, '/livez': options.live };
  const server = createServer(
    { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS, keepAliveTimeout: REQUEST_TIMEOUT_MS },
    (req, res) => void answer(req, res, routes, options.logger),
  );
  server.setTimeout(REQUEST_TIMEOUT_MS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
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

/** `0.0.0.0:9465`, `[::]:9465`, `localhost:9465`: the host without brackets and the port. */
export function splitHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) };
}

/** An http URL of this machine that reaches a server bound to `address` (a wildcard is reached on loopback). */
export function loopbackUrl(address: string): string {
  const { host, port } = splitHostPort(address);
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}

/**
 * The status a server of this process answers `url` with, on a connection of its own (a kept-alive one would show a
 * server that accepts nothing new as up), or why it did not within `timeoutMs`.
 */
export function httpStatus(url: string, timeoutMs: number): Promise<number | 'timeout' | 'unreachable'> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: timeoutMs }, (res) => {
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

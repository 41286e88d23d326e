import { Agent, request as undiciRequest } from 'undici';
import { assertSecureBaseUrl } from './base-url.js';
import { ApiError, classifyStatus, type ApiErrorInit, type ServiceName } from './errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RateLimitGate } from './rate-limit-gate.js';
import { delayClamps, type DelayClamp } from './rate-limit.js';
import { createLogger } from '../logger.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type QueryValue = string | number | boolean | undefined | null;

export interface HttpRequest {
  operation: string;
  method: HttpMethod;
  /** Below the base URL, starting with `/`. */
  path: string;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  /** Serialised once by the caller so signatures cover what is sent. */
  body?: string;
  /** A read, or a write with an idempotency key. */
  idempotent: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface HttpTransportOptions {
  service: ServiceName;
  baseUrl: string;
  insecureHttpHosts?: readonly string[];
  /** Whole-call timeout in ms (default 30 s). */
  timeoutMs?: number;
  observer?: HttpObserver;
  rateLimitGate?: RateLimitGate;
  /** Largest successful answer read; an error answer is read up to 1 MiB at most. */
  maxResponseBytes?: number;
  /** Told when the service asks for a wait beyond its bound. */
  logger?: { warn(fields: Record<string, unknown>, message: string): void };
}

let fallbackLogger: HttpTransportOptions['logger'];

/** Must not throw; sees headers, so must not log them. */
export interface HttpObserver {
  requestSent?(request: HttpRequest): void;
  responseReceived?(response: HttpResponse, request: HttpRequest): void;
}

/** GET /v1/items is not paginated, so a whole catalogue arrives in one answer: the bound is generous. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** An error body only carries a code, a message and the document it concerns. */
const MAX_ERROR_RESPONSE_BYTES = 1024 * 1024;

/** The 429 the transport answers itself while the service's rate-limit window is spent. */
export const RATE_BUDGET_SPENT = 'rate_budget_spent';

const NOT_SENT_CODES = new Set(
  'ECONNREFUSED ENOTFOUND EAI_AGAIN EHOSTUNREACH ENETUNREACH EADDRNOTAVAIL UND_ERR_CONNECT_TIMEOUT'.split(' '),
);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

// Undici wraps the socket's failure (in causes, or an AggregateError of every address tried): its code is deeper.
function errorCodes(err: unknown, depth = 0): string[] {
  if (depth >= 5 || !err || typeof err !== 'object') return [];
  const { code, cause } = err as { code?: unknown; cause?: unknown };
  const inner = err instanceof AggregateError ? err.errors.flatMap((e) => errorCodes(e)) : [];
  return [...(typeof code === 'string' ? [code] : []), ...inner, ...errorCodes(cause, depth + 1)];
}

/** Statuses are returned, not thrown; transport failures are ApiErrors. */
export class HttpTransport {
  readonly service: ServiceName;
  private readonly base: URL;
  private readonly agent: Agent;

  constructor(private readonly options: HttpTransportOptions) {
    this.service = options.service;
    assertSecureBaseUrl(options.service, options.baseUrl, options.insecureHttpHosts);
    this.base = new URL(options.baseUrl);
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: 16,
      connect: { timeout: 10_000 },
      // The whole-call timeout below is the one that counts; these only stop a stuck socket.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** Path (with the base URL's prefix) and query as they go on the wire. */
  target(path: string, query?: Record<string, QueryValue>): string {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const present = Object.entries(query ?? {}).filter(([, value]) => value !== undefined && value !== null);
    const qs = new URLSearchParams(present.map(([key, value]): [string, string] => [key, String(value)])).toString();
    return `${prefix}${path}${qs ? `?${qs}` : ''}`;
  }

  async send(req: HttpRequest): Promise<HttpResponse> {
    const target = this.target(req.path, req.query);
    const failure = (code: string, message: string, requestSent: boolean, cause?: unknown) =>
      requestError(this.service, req, {
        code,
        message: `${req.operation}${message}`,
        retry: !requestSent || req.idempotent ? 'safe' : 'ambiguous',
        requestSent,
        cause,
      });
    const cancelled = () => failure('aborted', ' was cancelled before it was sent', false);

    if (req.signal?.aborted) throw cancelled();
    const gate = this.options.rateLimitGate;
    if (gate) await this.passGate(gate, req, cancelled);
    const timeout = AbortSignal.timeout(req.timeoutMs ?? this.options.timeoutMs ?? 30_000);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      'user-agent': 'etims-temporal-worker',
      accept: 'application/json',
      ...req.headers,
    };
    if (req.body !== undefined) headers['content-type'] ??= 'application/json';

    let answer: HttpResponse | undefined;
    this.options.observer?.requestSent?.(req);
    try {
      const res = await undiciRequest(new URL(target, this.base.origin), {
        method: req.method,
        headers,
        body: req.body,
        signal,
        dispatcher: this.agent,
      });
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers))
        if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      const success = res.statusCode >= 200 && res.statusCode < 300;
      const max = this.options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
      const limit = success ? max : Math.min(max, MAX_ERROR_RESPONSE_BYTES);
      const body = await readAtMost(res.body, limit);
      answer = { status: res.statusCode, headers: flat, body: body ?? Buffer.alloc(0) };
      this.options.observer?.responseReceived?.(answer, req);
      this.reportClamps(delayClamps(flat), req, res.statusCode);
      if (body === undefined)
        throw requestError(this.service, req, {
          status: res.statusCode,
          code: 'invalid_response',
          message:
            `${req.operation}: the ${this.service} service answered HTTP ${res.statusCode} ` +
            `with a body over ${limit} bytes; it was not read`,
          // Like any unreadable answer: a 2xx means the write happened, so it is repeated only when idempotent.
          retry: success ? (req.idempotent ? 'safe' : 'ambiguous') : classifyStatus(res.statusCode, req.idempotent),
          requestSent: true,
        });
      return answer;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const codes = errorCodes(err);
      const service = this.service;
      if (codes.some((c) => NOT_SENT_CODES.has(c)))
        throw failure('network_error', `: could not reach the ${service} service`, false, err);
      if (timeout.aborted || codes.some((c) => TIMEOUT_CODES.has(c)))
        throw failure('timeout', `: no answer from the ${service} service in time`, true, err);
      if (req.signal?.aborted) throw failure('aborted', ' was cancelled while in flight', true, err);
      throw failure('connection_reset', `: the connection to the ${service} service failed after sending`, true, err);
    } finally {
      gate?.settle(answer);
    }
  }

  /** A spent window whose reset is farther than the hold is answered here with a 429, without spending a request. */
  private async passGate(gate: RateLimitGate, req: HttpRequest, cancelled: () => ApiError): Promise<void> {
    for (let waitMs = gate.admit(); waitMs !== undefined; waitMs = gate.admit()) {
      if (waitMs > gate.holdUpToMs) {
        const waitSeconds = Math.ceil(waitMs / 1000);
        throw requestError(this.service, req, {
          status: 429,
          code: RATE_BUDGET_SPENT,
          message:
            `${req.operation}: the ${this.service} service's rate-limit window is spent; ` +
            `not sent, retry in ${waitSeconds} s`,
          retryAfterSeconds: waitSeconds,
          retry: 'safe',
          requestSent: false,
        });
      }
      await sleep(waitMs, undefined, req.signal ? { signal: req.signal } : {}).catch(() => undefined);
      if (req.signal?.aborted) throw cancelled();
    }
  }

  /** Once per answer, though the gate, the error and the metadata read the same headers afterwards. */
  private reportClamps(clamps: DelayClamp[], req: HttpRequest, status: number): void {
    if (clamps.length === 0) return;
    // Made on the first clamp only; stderr, so a CLI whose stdout is its answer stays parseable.
    const logger = this.options.logger ?? (fallbackLogger ??= createLogger({ name: 'http', stderr: true }));
    for (const clamp of clamps)
      logger.warn(
        { service: this.service, operation: req.operation, status, ...clamp },
        `the ${this.service} service asked for a wait beyond the bound; waiting ${clamp.boundSeconds} s at most`,
      );
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

export function requestError(
  service: ServiceName,
  req: HttpRequest,
  init: Omit<ApiErrorInit, 'service' | 'operation' | 'method' | 'path'>,
): ApiError {
  return new ApiError({ service, operation: req.operation, method: req.method, path: req.path, ...init });
}

/** The whole body, or undefined (and the rest left unread) once it exceeds `limit` bytes. */
async function readAtMost(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

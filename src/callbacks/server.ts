/**
 * The standalone callback receiver: the callback routes, `GET /health`, and logs that never carry a token;
 * with an accounting webhook secret, the accounting webhooks too (`POST /webhooks/accounting`).
 *
 * It holds what arrives: at most `maxConnections` open connections (beyond, a new one is closed at once); a
 * request, headers and body, must arrive whole within `requestTimeoutMs` or its connection is cut (Node checks
 * every second here, not every 30 s, so the bound holds to about a second); an idle kept-alive connection is
 * closed after `keepAliveTimeoutMs`. Each request's log line is at debug; at info there is one summary of the
 * answers per interval and one warning per refusal reason per interval (answer-log.ts).
 */
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Client } from '@temporalio/client';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  accountingWebhookRoutes,
  syncBatchSignaller,
  type AccountingWebhookRoutesOptions,
  type AccountingWebhookSecret,
} from './accounting-webhooks.js';
import { CallbackAnswerLog, clip } from './answer-log.js';
import { callbackBodyFields, type CallbackBodyFieldSetting } from './body-fields.js';
import type { CallbackFloodGuard } from './flood-guard.js';
import type { CallbackSignal } from './handler.js';
import { callbackRequestSerializer } from './log-redaction.js';
import { CALLBACK_BODY_LIMIT, callbackRoutes } from './routes.js';
import { temporalSignaller } from './temporal-signal.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { CallbackTokenVerifier } from './tokens.js';

export interface CallbackReceiverLimits {
  /** Open connections at once (CALLBACK_MAX_CONNECTIONS); a connection beyond it is closed at once. */
  maxConnections?: number;
  /** A request, headers and body, must arrive whole within this (CALLBACK_REQUEST_TIMEOUT); cut within about 1 s after. */
  requestTimeoutMs?: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs?: number;
  /** One summary line of the answers per this interval. */
  summaryIntervalMs?: number;
}

export const CALLBACK_RECEIVER_DEFAULTS = {
  // The compliance service delivers one callback per outcome; hundreds at once is already a flood.
  maxConnections: 256,
  // The compliance service gives up after 10 s (C47); a slow sender must not hold a socket longer.
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  summaryIntervalMs: 60_000,
} as const satisfies Required<CallbackReceiverLimits>;

/** How often Node looks for requests past their timeout (its default, 30 s, is what let 15 s become 64 s). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

interface CallbackAppOptions {
  minter: CallbackTokenVerifier;
  signal: CallbackSignal;
  guard?: CallbackFloodGuard;
  logger: Logger;
  limits: Required<CallbackReceiverLimits>;
  bodyFields: CallbackBodyFieldSetting;
  onVerdict?: (verdict: string) => void;
  /** Present when an accounting webhook secret is configured: `POST /webhooks/accounting` is served too. */
  accountingWebhooks?: AccountingWebhookRoutesOptions;
}

interface CallbackServerCommonOptions {
  /** Default 127.0.0.1; use 0.0.0.0 behind a proxy or in a container. */
  host?: string;
  /** Default 0 (a free port; read it from `url`). */
  port?: number;
  minter: CallbackTokenVerifier;
  /** De-duplication and per-workflow budget (default limits when absent). */
  guard?: CallbackFloodGuard;
  logger: Logger;
  /** Connection cap, timeouts and the summary interval; each defaults to CALLBACK_RECEIVER_DEFAULTS. */
  limits?: CallbackReceiverLimits;
  /** Which body fields are read when present (CALLBACK_BODY_FIELDS; default 'assumed', body-fields.ts). */
  bodyFields?: CallbackBodyFieldSetting;
  /** Counts every answer as `etims_callbacks{verdict}` (the worker's metrics, on its /metrics). */
  metrics?: MetricsRecorder;
  /** ACCOUNTING_WEBHOOK_SECRET: when set, accounting webhooks are received at `POST /webhooks/accounting`. Never logged. */
  accountingWebhookSecret?: string;
  /** Each accounting application's secret: its webhooks at `POST /webhooks/accounting/<application>`. Never logged. */
  accountingWebhookApplications?: readonly AccountingWebhookSecret[];
}

/** Signals through `client`; `signal` instead (hosts and tests that signal another way) serves result callbacks only. */
export type CallbackServerOptions = CallbackServerCommonOptions &
  ({ client: Client; signal?: undefined } | { signal: CallbackSignal; client?: undefined });

export interface CallbackServer {
  /** Where the server listens, e.g. `http://127.0.0.1:8085` (not necessarily the public base URL). */
  url: string;
  close(): Promise<void>;
}

function checkedLimits(limits: CallbackReceiverLimits = {}): Required<CallbackReceiverLimits> {
  const merged = {
    ...CALLBACK_RECEIVER_DEFAULTS,
    ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
  };
  for (const [name, value] of Object.entries(merged)) {
    if (!Number.isInteger(value) || value <= 0)
      throw new RangeError(`callback receiver ${name} must be a positive whole number`);
  }
  return merged;
}

/** The receiver app, not listening (hosts and tests can `inject` or `listen` it). */
async function buildCallbackApp(options: CallbackAppOptions): Promise<FastifyInstance> {
  const { limits } = options;
  // The server-wide serializer covers requests outside the callback routes too.
  const loggerInstance: FastifyBaseLogger = options.logger.child(
    { component: 'callbacks' },
    { serializers: { req: callbackRequestSerializer } },
  );
  const answers = new CallbackAnswerLog({ logger: loggerInstance, intervalMs: limits.summaryIntervalMs });
  const counted = (verdict: string, refused: boolean, context: Record<string, unknown> = {}) => {
    answers.note(verdict, refused, context);
    options.onVerdict?.(verdict);
  };
  const app = Fastify({
    loggerInstance,
    // One line per request at info is what let a flood fill a disk: requests are logged at debug below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: CALLBACK_BODY_LIMIT,
    serverFactory: (handler) =>
      receiverHttpServer(handler, limits, (remoteAddress) => counted('connection_refused', true, { remoteAddress })),
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => answerClientError(error, socket, counted),
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug(
      { req: request, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'callback receiver request answered',
    );
  });
  app.addHook('onReady', async () => answers.start());
  app.addHook('onClose', async () => answers.close());
  app.get('/health', async () => ({ status: 'ok' }));
  app.setNotFoundHandler(async (_request, reply) => {
    counted('not_found', true);
    // Fastify's default 404 repeats the URL in its body and log line; this one does not.
    return reply.code(404).send({ error: { code: 'not_found', message: 'no such route' } });
  });
  await app.register(callbackRoutes, {
    minter: options.minter,
    signal: options.signal,
    answers,
    bodyFields: callbackBodyFields(options.bodyFields),
    ...(options.guard ? { guard: options.guard } : {}),
    ...(options.onVerdict ? { onVerdict: options.onVerdict } : {}),
  });
  if (options.accountingWebhooks) {
    const webhooks = options.accountingWebhooks;
    await app.register(accountingWebhookRoutes, {
      ...webhooks,
      // Counted in the summary; its refusals already have their own warning per reason per interval.
      onVerdict: (verdict) => {
        answers.note(`webhook_${verdict}`, false);
        webhooks.onVerdict?.(verdict);
        options.onVerdict?.(`webhook_${verdict}`);
      },
    });
  }
  return app;
}

/** The HTTP server under fastify, with the cap and the timeouts that fastify's own options cannot set. */
function receiverHttpServer(
  handler: Parameters<typeof createServer>[1],
  limits: Required<CallbackReceiverLimits>,
  onDrop: (remoteAddress: string | undefined) => void,
): Server {
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  // A connection that sends nothing at all is not a request yet: the socket's idle timeout closes it.
  server.setTimeout(limits.requestTimeoutMs);
  server.on('drop', (data?: { remoteAddress?: string }) => onDrop(data?.remoteAddress));
  return server;
}

/** A malformed or timed-out request: answered like fastify's default, but counted instead of logged per request. */
function answerClientError(
  error: Error & { code?: string },
  socket: Socket,
  counted: (verdict: string, refused: boolean, context?: Record<string, unknown>) => void,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, verdict] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ([408, 'timeout'] as const)
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'header_too_large'] as const)
        : ([400, 'malformed_request'] as const);
  counted(verdict, true, { code: clip(String(error.code ?? 'unknown')) });
  if (socket.writable)
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  socket.destroy();
}

function verdictCounter(metrics: MetricsRecorder): (verdict: string) => void {
  return (verdict) => metrics.count('etims_callbacks', { verdict });
}

export async function startCallbackServer(options: CallbackServerOptions): Promise<CallbackServer> {
  const app = await buildCallbackApp({
    minter: options.minter,
    signal: options.signal ?? temporalSignaller(options.client),
    limits: checkedLimits(options.limits),
    bodyFields: options.bodyFields ?? 'assumed',
    ...(options.guard ? { guard: options.guard } : {}),
    ...(options.metrics ? { onVerdict: verdictCounter(options.metrics) } : {}),
    ...((options.accountingWebhookSecret || options.accountingWebhookApplications?.length) && options.client
      ? {
          accountingWebhooks: {
            ...(options.accountingWebhookSecret ? { secret: options.accountingWebhookSecret } : {}),
            ...(options.accountingWebhookApplications?.length
              ? { applications: options.accountingWebhookApplications }
              : {}),
            signal: syncBatchSignaller(options.client),
          },
        }
      : {}),
    logger: options.logger,
  });
  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => app.close(),
  };
}

// The standalone receiver: callbacks, `GET /health` and the accounting webhooks. It holds whatever arrives: bounded
// connections, a whole request within `requestTimeoutMs`, and at info only the summaries of answer-log.ts.
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Client } from '@temporalio/client';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { callbackReceivedSignal } from '../contracts/sale.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { accountingWebhookRoutes, syncBatchSignaller, type AccountingWebhookSecret } from './accounting-webhooks.js';
import { CallbackAnswerLog, callbackRequestSerializer, clip } from './answer-log.js';
import {
  CALLBACK_BODY_LIMIT,
  callbackRoutes,
  signalRun,
  type CallbackBodyFieldSetting,
  type CallbackSignal,
} from './routes.js';
import type { SettledDocuments } from './settled-documents.js';
import type { CallbackUrlMinter } from './tokens.js';

const CALLBACK_RECEIVER_DEFAULTS = {
  // The compliance service delivers one callback per outcome; hundreds at once is already a flood.
  maxConnections: 256,
  // The compliance service gives up after 10 s (C47); a slow sender must not hold a socket longer.
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  summaryIntervalMs: 60_000,
  // At close, what the requests in flight have to finish before their connections are cut (SHUTDOWN_GRACE_TIME's).
  drainMs: 30_000,
};

type CallbackReceiverLimits = Partial<Record<keyof typeof CALLBACK_RECEIVER_DEFAULTS, number | undefined>>;

/** How often Node looks for requests past their timeout (its default, 30 s, let 15 s become 64 s). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

const CLIENT_ERRORS = new Map<string | undefined, [number, string]>([
  ['ERR_HTTP_REQUEST_TIMEOUT', [408, 'timeout']],
  ['HPE_HEADER_OVERFLOW', [431, 'header_too_large']],
]);

type CallbackServerOptions = {
  /** Default 127.0.0.1; default port 0, a free one (read it from `url`). */
  host?: string;
  port?: number;
  minter: Pick<CallbackUrlMinter, 'check'>;
  logger: Logger;
  limits?: CallbackReceiverLimits;
  bodyFields?: CallbackBodyFieldSetting;
  metrics?: MetricsRecorder;
  /** Served at `POST /webhooks/accounting`, and each application at `/webhooks/accounting/<application>`. */
  accountingWebhookSecret?: string;
  accountingWebhookApplications?: readonly AccountingWebhookSecret[];
  settled?: Pick<SettledDocuments, 'has'>;
  // `signal` instead of a client (tests) serves result callbacks only.
} & ({ client: Client; signal?: undefined } | { signal: CallbackSignal; client?: undefined });

export type CallbackServer = Awaited<ReturnType<typeof startCallbackServer>>;

function checkedLimits(limits: CallbackReceiverLimits = {}): typeof CALLBACK_RECEIVER_DEFAULTS {
  const merged = {
    ...CALLBACK_RECEIVER_DEFAULTS,
    ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
  };
  for (const [name, value] of Object.entries(merged)) {
    // A drain of 0 cuts the requests in flight at once, as a grace of 0 cancels the activities at once.
    const least = name === 'drainMs' ? 0 : 1;
    if (!Number.isInteger(value) || value < least)
      throw new RangeError(`callback receiver ${name} must be a whole number from ${least}`);
  }
  return merged;
}

/** `url`: where it listens (not necessarily the public base URL). */
export async function startCallbackServer(options: CallbackServerOptions) {
  const limits = checkedLimits(options.limits);
  const { client, metrics } = options;
  const onVerdict = metrics ? (verdict: string) => metrics.count('etims_callbacks', { verdict }) : undefined;
  // The server-wide serializer covers requests outside the callback routes too.
  const loggerInstance: FastifyBaseLogger = options.logger.child(
    { component: 'callbacks' },
    { serializers: { req: callbackRequestSerializer } },
  );
  const answers = new CallbackAnswerLog({ logger: loggerInstance, intervalMs: limits.summaryIntervalMs });
  const counted = (verdict: string, refused: boolean, context: Record<string, unknown> = {}) => {
    answers.note(verdict, refused, context);
    onVerdict?.(verdict);
  };
  const app = Fastify({
    loggerInstance,
    // One line per request at info is what let a flood fill a disk: requests are logged at debug below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: CALLBACK_BODY_LIMIT,
    serverFactory: (handler) => {
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
      server.on('drop', (data?: { remoteAddress?: string }) =>
        counted('connection_refused', true, { remoteAddress: data?.remoteAddress }),
      );
      return server;
    },
    // A malformed or timed-out request: answered like fastify's default, but counted instead of logged per request.
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, verdict] = CLIENT_ERRORS.get(error.code) ?? [400, 'malformed_request'];
      counted(verdict, true, { code: clip(String(error.code ?? 'unknown')) });
      if (socket.writable)
        socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      socket.destroy();
    },
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
    signal: options.signal ?? ((id, hint) => signalRun(client!, id, callbackReceivedSignal, hint)),
    answers,
    bodyFields: options.bodyFields,
    onVerdict,
    settled: options.settled,
  });
  const applications = options.accountingWebhookApplications ?? [];
  if ((options.accountingWebhookSecret || applications.length > 0) && client)
    await app.register(accountingWebhookRoutes, {
      ...(options.accountingWebhookSecret ? { secret: options.accountingWebhookSecret } : {}),
      applications,
      signal: syncBatchSignaller(client),
      // Counted in the summary; its refusals already have their own warning per reason per interval.
      onVerdict: (verdict) => counted(`webhook_${verdict}`, false),
    });
  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const { port } = app.server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    /** Once, however often called: no new connection, the requests in flight answered within `drainMs`. */
    close: (): Promise<void> => (closed ??= drain(app.server, () => app.close(), limits.drainMs)),
  };
}

/** Fastify's close lets requests in flight finish however long they take; past `drainMs` their connections are cut. */
async function drain(server: Server, close: () => PromiseLike<unknown>, drainMs: number): Promise<void> {
  const cut = setTimeout(() => server.closeAllConnections(), drainMs);
  try {
    await close();
  } finally {
    clearTimeout(cut);
  }
}

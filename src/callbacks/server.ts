/**
 * The standalone callback receiver: the callback routes, `GET /health`, and logs that never carry a token;
 * with an accounting webhook secret, the accounting webhooks too (`POST /webhooks/accounting`).
 */
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { MetricMeter } from '@temporalio/common';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { accountingWebhookRoutes, syncBatchSignaller, type AccountingWebhookRoutesOptions } from './accounting-webhooks.js';
import type { CallbackFloodGuard } from './flood-guard.js';
import type { CallbackSignal } from './handler.js';
import { callbackRequestSerializer } from './log-redaction.js';
import { CALLBACK_BODY_LIMIT, callbackRoutes } from './routes.js';
import { temporalSignaller } from './temporal-signal.js';
import { METRICS } from '../temporal/metric-names.js';
import type { CallbackTokenVerifier } from './tokens.js';

interface CallbackAppOptions {
  minter: CallbackTokenVerifier;
  signal: CallbackSignal;
  guard?: CallbackFloodGuard;
  logger: Logger;
  onVerdict?: (verdict: string) => void;
  /** Present when an accounting webhook secret is configured: `POST /webhooks/accounting` is served too. */
  accountingWebhooks?: AccountingWebhookRoutesOptions;
}

export interface CallbackServerOptions {
  /** Default 127.0.0.1; use 0.0.0.0 behind a proxy or in a container. */
  host?: string;
  /** Default 0 (a free port; read it from `url`). */
  port?: number;
  minter: CallbackTokenVerifier;
  client: Client;
  /** De-duplication and per-workflow budget (default limits when absent). */
  guard?: CallbackFloodGuard;
  logger: Logger;
  /** Counts every answer as `etims_callbacks{verdict}` (the Temporal runtime's meter, so it shares its /metrics). */
  metrics?: MetricMeter;
  /** ACCOUNTING_WEBHOOK_SECRET: when set, accounting webhooks are received at `POST /webhooks/accounting`. Never logged. */
  accountingWebhookSecret?: string;
}

export interface CallbackServer {
  /** Where the server listens, e.g. `http://127.0.0.1:8085` (not necessarily the public base URL). */
  url: string;
  close(): Promise<void>;
}

/** The receiver app, not listening (hosts and tests can `inject` or `listen` it). */
async function buildCallbackApp(options: CallbackAppOptions): Promise<FastifyInstance> {
  // The server-wide serializer covers requests outside the callback routes too.
  const loggerInstance: FastifyBaseLogger = options.logger.child(
    { component: 'callbacks' },
    { serializers: { req: callbackRequestSerializer } },
  );
  const app = Fastify({
    loggerInstance,
    bodyLimit: CALLBACK_BODY_LIMIT,
    // The compliance service gives up after 10 s (C47); a slow sender must not hold a socket longer.
    requestTimeout: 15_000,
  });
  app.get('/health', async () => ({ status: 'ok' }));
  app.setNotFoundHandler(async (_request, reply) =>
    // Fastify's default 404 repeats the URL in its body and log line; this one does not.
    reply.code(404).send({ error: { code: 'not_found', message: 'no such route' } }),
  );
  await app.register(callbackRoutes, {
    minter: options.minter,
    signal: options.signal,
    ...(options.guard ? { guard: options.guard } : {}),
    ...(options.onVerdict ? { onVerdict: options.onVerdict } : {}),
  });
  if (options.accountingWebhooks) await app.register(accountingWebhookRoutes, options.accountingWebhooks);
  return app;
}

function verdictCounter(meter: MetricMeter): (verdict: string) => void {
  const counter = meter.createCounter(METRICS.callbacks, undefined, 'result callbacks answered, by verdict');
  return (verdict) => counter.add(1, { verdict });
}

export async function startCallbackServer(options: CallbackServerOptions): Promise<CallbackServer> {
  const app = await buildCallbackApp({
    minter: options.minter,
    signal: temporalSignaller(options.client),
    ...(options.guard ? { guard: options.guard } : {}),
    ...(options.metrics ? { onVerdict: verdictCounter(options.metrics) } : {}),
    ...(options.accountingWebhookSecret
      ? { accountingWebhooks: { secret: options.accountingWebhookSecret, signal: syncBatchSignaller(options.client) } }
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

import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { Logger } from 'pino';
import type { CallbackBodyFieldSetting } from '../callbacks/body-fields.js';
import { startCallbackServer, type CallbackServer } from '../callbacks/server.js';
import { CallbackUrlMinter } from '../callbacks/tokens.js';
import type { WorkerConfig } from '../config/worker.js';
import type { ServiceEndpoints } from '../services/endpoints.js';

/** The receiver's own settings; each absent one takes CALLBACK_RECEIVER_DEFAULTS (src/callbacks/server.ts). */
export interface CallbackReceiverConfig {
  /** CALLBACK_MAX_CONNECTIONS (default 256). */
  callbackMaxConnections?: number | undefined;
  /** CALLBACK_REQUEST_TIMEOUT (default 15 s): a request, headers and body, must arrive whole within it. */
  callbackRequestTimeoutMs?: number | undefined;
  /** CALLBACK_BODY_FIELDS: 'assumed' (default) reads the body fields of src/callbacks/body-fields.ts when present; 'none' reads none. */
  callbackBodyFields?: CallbackBodyFieldSetting | undefined;
}

/**
 * Where result callbacks go: the configured public base URL, or, when the compliance service is a local sandbox
 * that can reach loopback, a receiver on this machine. Otherwise none, and the workflows poll. Accounting webhooks
 * (POST /webhooks/accounting) are received beside the result callbacks.
 */
export async function startCallbacks(
  config: WorkerConfig & CallbackReceiverConfig,
  services: Pick<ServiceEndpoints, 'compliance' | 'accounting'>,
  client: Client,
  logger: Logger,
  metrics?: MetricsRecorder,
): Promise<{ server: CallbackServer; minter: CallbackUrlMinter } | undefined> {
  // CALLBACK_TOKEN_TTL and CALLBACK_LEGACY_TOKENS_UNTIL, for every minter and verifier below.
  const lifetime = {
    ttlMs: config.callbackTokenTtlMs,
    ...(config.callbackLegacyTokensUntilMs === undefined ? {} : { legacyTokensUntilMs: config.callbackLegacyTokensUntilMs }),
  };
  const { webhookSecret } = services.accounting;
  const webhooks = webhookSecret ? { accountingWebhookSecret: webhookSecret } : {};
  const receiver = {
    limits: { maxConnections: config.callbackMaxConnections, requestTimeoutMs: config.callbackRequestTimeoutMs },
    ...(config.callbackBodyFields === undefined ? {} : { bodyFields: config.callbackBodyFields }),
  };
  if (config.callbackPublicBaseUrl && config.callbackSecret) {
    const minter = new CallbackUrlMinter({ publicBaseUrl: config.callbackPublicBaseUrl, secret: config.callbackSecret, ...lifetime });
    const server = await startCallbackServer({ host: config.callbackHost, port: config.callbackPort, minter, client, logger, ...(metrics ? { metrics } : {}), ...receiver, ...webhooks });
    return { server, minter };
  }
  if (!services.compliance.allowLoopbackCallbacks) return undefined;
  // A fresh secret per process: URLs minted before a restart stop verifying, and polling covers those sales.
  const secret = randomBytes(32).toString('base64url');
  const server = await startCallbackServer({
    host: '127.0.0.1',
    minter: new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret, ...lifetime }),
    client,
    logger,
    ...(metrics ? { metrics } : {}),
    ...receiver,
    ...webhooks,
  });
  return { server, minter: new CallbackUrlMinter({ publicBaseUrl: server.url, secret, ...lifetime }) };
}

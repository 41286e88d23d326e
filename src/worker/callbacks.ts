import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { Logger } from 'pino';
import { accountingWebhookPath, type AccountingWebhookSecret } from '../callbacks/accounting-webhooks.js';
import type { CallbackBodyFieldSetting } from '../callbacks/body-fields.js';
import { startCallbackServer, type CallbackServer } from '../callbacks/server.js';
import { CallbackUrlMinter } from '../callbacks/tokens.js';
import type { TenantsConfig } from '../tenants/types.js';
import type { WorkerConfig } from '../config/worker.js';

/** The receiver's own settings; each absent one takes CALLBACK_RECEIVER_DEFAULTS (src/callbacks/server.ts). */
export interface CallbackReceiverConfig {
  /** CALLBACK_MAX_CONNECTIONS (default 256). */
  callbackMaxConnections?: number | undefined;
  /** CALLBACK_REQUEST_TIMEOUT (default 15 s): a request, headers and body, must arrive whole within it. */
  callbackRequestTimeoutMs?: number | undefined;
  /** CALLBACK_BODY_FIELDS: 'assumed' (default) reads the body fields of src/callbacks/body-fields.ts when present; 'none' reads none. */
  callbackBodyFields?: CallbackBodyFieldSetting | undefined;
}

/** What the receiver needs to know of the services. */
export interface CallbackServices {
  /** The compliance service may call back to loopback (a local sandbox): a receiver on this machine will do. */
  allowLoopbackCallbacks: boolean;
  /** Verifies accounting webhooks at `POST /webhooks/accounting`; undefined: that path is not served. */
  accountingWebhookSecret: string | undefined;
  /** Each accounting application with a webhook secret: its webhooks at `POST /webhooks/accounting/<application>`. */
  accountingWebhookApplications: readonly AccountingWebhookSecret[];
}

/**
 * A loopback receiver only when every compliance entry's service may call it. Each accounting application with a
 * webhook secret has its own path, verified with its own secret (the contract says nothing of which application sent
 * a delivery; the URL its dashboard points at is ours to choose, src/callbacks/accounting-webhooks.ts).
 * `POST /webhooks/accounting` serves entries that all share one secret (the single-key variables' one application).
 */
export function callbackServices(tenants: TenantsConfig, logger: Logger): CallbackServices {
  const applications = tenants.accounting.flatMap((tenant) =>
    tenant.service.webhookSecret ? [{ application: tenant.application, secret: tenant.service.webhookSecret }] : [],
  );
  const secrets = new Set(applications.map((application) => application.secret));
  if (applications.length > 0) {
    logger.info(
      {
        accountingWebhooks: applications.map((application) => accountingWebhookPath(application.application)),
        sharedPath: secrets.size === 1,
      },
      'accounting webhooks are received per accounting application, each verified with its own secret',
    );
  }
  return {
    allowLoopbackCallbacks:
      tenants.compliance.length > 0 && tenants.compliance.every((tenant) => tenant.service.allowLoopbackCallbacks),
    accountingWebhookSecret: secrets.size === 1 ? [...secrets][0] : undefined,
    accountingWebhookApplications: applications,
  };
}

/** What the callback server is told of accounting webhooks (src/callbacks/server.ts). */
interface AccountingWebhookOptions {
  accountingWebhookSecret?: string;
  accountingWebhookApplications?: readonly AccountingWebhookSecret[];
}

/**
 * Where result callbacks go: the configured public base URL, or, when the compliance service is a local sandbox
 * that can reach loopback, a receiver on this machine. Otherwise none, and the workflows poll. Accounting webhooks
 * (POST /webhooks/accounting) are received beside the result callbacks.
 */
export async function startCallbacks(
  config: WorkerConfig & CallbackReceiverConfig,
  services: CallbackServices,
  client: Client,
  logger: Logger,
  metrics?: MetricsRecorder,
): Promise<{ server: CallbackServer; minter: CallbackUrlMinter } | undefined> {
  // CALLBACK_TOKEN_TTL, for every minter and verifier below.
  const lifetime = { ttlMs: config.callbackTokenTtlMs };
  const webhooks: AccountingWebhookOptions = {
    ...(services.accountingWebhookSecret ? { accountingWebhookSecret: services.accountingWebhookSecret } : {}),
    ...(services.accountingWebhookApplications.length > 0
      ? { accountingWebhookApplications: services.accountingWebhookApplications }
      : {}),
  };
  const receiver = {
    limits: { maxConnections: config.callbackMaxConnections, requestTimeoutMs: config.callbackRequestTimeoutMs },
    ...(config.callbackBodyFields === undefined ? {} : { bodyFields: config.callbackBodyFields }),
  };
  if (config.callbackPublicBaseUrl && config.callbackSecret) {
    const minter = new CallbackUrlMinter({
      publicBaseUrl: config.callbackPublicBaseUrl,
      secret: config.callbackSecret,
      ...lifetime,
    });
    const server = await startCallbackServer({
      host: config.callbackHost,
      port: config.callbackPort,
      minter,
      client,
      logger,
      ...(metrics ? { metrics } : {}),
      ...receiver,
      ...webhooks,
    });
    return { server, minter };
  }
  if (!services.allowLoopbackCallbacks) return undefined;
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

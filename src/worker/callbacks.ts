import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { Logger } from 'pino';
import { accountingWebhookPath, type AccountingWebhookSecret } from '../callbacks/accounting-webhooks.js';
import { startCallbackServer, type CallbackServer } from '../callbacks/server.js';
import { CallbackUrlMinter } from '../callbacks/tokens.js';
import type { TenantsConfig } from '../tenants/types.js';
import type { WorkerConfig } from '../config/worker.js';

interface CallbackServices {
  /** The compliance service may call back to loopback (a local sandbox): a receiver on this machine will do. */
  allowLoopbackCallbacks: boolean;
  /** Verifies accounting webhooks at `POST /webhooks/accounting`; undefined: that path is not served. */
  accountingWebhookSecret: string | undefined;
  /** Each at `POST /webhooks/accounting/<application>`. */
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

/**
 * Where result callbacks go: the configured public base URL, or, when the compliance service is a local sandbox
 * that can reach loopback, a receiver on this machine. Otherwise none, and the workflows poll.
 */
export async function startCallbacks(
  config: WorkerConfig,
  services: CallbackServices,
  client: Client,
  logger: Logger,
  metrics?: MetricsRecorder,
): Promise<{ server: CallbackServer; minter: CallbackUrlMinter } | undefined> {
  const lifetime = { ttlMs: config.callbackTokenTtlMs };
  const webhooks = {
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

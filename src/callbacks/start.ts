import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/worker.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { TenantsConfig } from '../tenants/types.js';
import { accountingWebhookPath } from './accounting-webhooks.js';
import type { CallbackServer } from './server.js';
import type { SettledDocuments } from './settled-documents.js';
import { CallbackUrlMinter } from './tokens.js';

/**
 * A worker's receiver, at the public base URL, or on this machine when every compliance service is a loopback sandbox;
 * else none: the worker polls.
 */
export async function startCallbacks(
  context: { client: Client; logger: Logger; metrics?: MetricsRecorder },
  config: WorkerConfig,
  tenants: TenantsConfig,
  settled?: SettledDocuments,
): Promise<{ server: CallbackServer; minter: CallbackUrlMinter } | undefined> {
  const { client, logger, metrics } = context;
  const applications = tenants.accounting.flatMap((tenant) =>
    tenant.service.webhookSecret ? [{ application: tenant.application, secret: tenant.service.webhookSecret }] : [],
  );
  const secrets = new Set(applications.map((application) => application.secret));
  const accountingWebhooks = applications.map((application) => accountingWebhookPath(application.application));
  if (accountingWebhooks.length > 0) {
    logger.info(
      { accountingWebhooks, sharedPath: secrets.size === 1 },
      'accounting webhooks are received per accounting application, each verified with its own secret',
    );
  }
  const ttlMs = config.callbackTokenTtlMs;
  const receiver = {
    client,
    logger,
    metrics,
    limits: {
      maxConnections: config.callbackMaxConnections,
      requestTimeoutMs: config.callbackRequestTimeoutMs,
      drainMs: config.shutdownGraceMs,
    },
    bodyFields: config.callbackBodyFields,
    accountingWebhookSecret: secrets.size === 1 ? [...secrets][0] : undefined,
    accountingWebhookApplications: applications,
    ...(settled ? { settled } : {}),
  };
  const configured = Boolean(config.callbackPublicBaseUrl && config.callbackSecret);
  const loopback = tenants.compliance.length > 0 && tenants.compliance.every((t) => t.service.allowLoopbackCallbacks);
  if (!configured && !loopback) return undefined;
  // On loopback, a fresh secret per process: URLs minted before a restart stop verifying, and polling covers those.
  const secret = configured ? config.callbackSecret! : randomBytes(32).toString('base64url');
  const publicBaseUrl = configured ? config.callbackPublicBaseUrl! : 'http://127.0.0.1';
  const minter = new CallbackUrlMinter({ publicBaseUrl, secret, ttlMs });
  const where = configured ? { host: config.callbackHost, port: config.callbackPort } : {};
  // Loaded here, not with the module: a worker that only polls starts without the HTTP framework.
  const { startCallbackServer } = await import('./server.js');
  const server = await startCallbackServer({ ...where, minter, ...receiver });
  return { server, minter: configured ? minter : new CallbackUrlMinter({ publicBaseUrl: server.url, secret, ttlMs }) };
}

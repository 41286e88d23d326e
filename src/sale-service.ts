import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { startCallbackServer, type CallbackServer } from './callbacks/server.js';
import { CallbackUrlMinter } from './callbacks/tokens.js';
import { ComplianceClient } from './compliance/client.js';
import { complianceActivitiesPerSecond, type WorkerConfig } from './config/worker.js';
import type { ServiceEndpoints } from './services.js';
import { createSaleWorkers, type SaleWorkers } from './worker.js';

export interface SaleService {
  workers: SaleWorkers;
  /** Present when result callbacks are received (a public base URL is configured, or on a local stack). */
  callbacks: CallbackServer | undefined;
  /** Runs until shutdown(); rejects if a worker fails. */
  run(): Promise<void>;
  shutdown(): void;
  /** Releases the HTTP clients and the callback server after run() has returned. */
  close(): Promise<void>;
}

/**
 * Where result callbacks go: the configured public base URL, or, when the compliance service is a local
 * sandbox that can reach loopback, a receiver on this machine. Otherwise none, and the workflows poll.
 */
async function startCallbacks(
  config: WorkerConfig,
  services: ServiceEndpoints,
  client: Client,
  logger: Logger,
): Promise<{ server: CallbackServer; minter: CallbackUrlMinter } | undefined> {
  if (config.callbackPublicBaseUrl && config.callbackSecret) {
    const minter = new CallbackUrlMinter({ publicBaseUrl: config.callbackPublicBaseUrl, secret: config.callbackSecret });
    const server = await startCallbackServer({ host: config.callbackHost, port: config.callbackPort, minter, client, logger });
    return { server, minter };
  }
  if (!services.compliance.allowLoopbackCallbacks) return undefined;
  // A fresh secret per process: URLs minted before a restart stop verifying, and polling covers those sales.
  const secret = randomBytes(32).toString('base64url');
  const server = await startCallbackServer({
    host: '127.0.0.1',
    minter: new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret }),
    client,
    logger,
  });
  return { server, minter: new CallbackUrlMinter({ publicBaseUrl: server.url, secret }) };
}

/** The worker side of the product: callback receiver, compliance client and the two workers. */
export async function startSaleService(options: {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  services: ServiceEndpoints;
  config: WorkerConfig;
  logger: Logger;
  taskQueue?: string;
}): Promise<SaleService> {
  const { config, services, logger } = options;
  const callbacks = await startCallbacks(config, services, options.client, logger);
  const compliance = new ComplianceClient(services.compliance);
  const perSecond = complianceActivitiesPerSecond(config);
  const workers = await createSaleWorkers({
    connection: options.connection,
    namespace: options.namespace,
    client: options.client,
    compliance,
    logger,
    complianceActivitiesPerSecond: perSecond,
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    ...(callbacks ? { callbackUrls: callbacks.minter } : {}),
  });
  logger.info(
    { complianceActivitiesPerSecond: Number(perSecond.toFixed(3)), callbacks: callbacks ? 'receiving' : 'polling only' },
    'sale workers ready',
  );
  return {
    workers,
    callbacks: callbacks?.server,
    run: () => workers.run(),
    shutdown: () => workers.shutdown(),
    close: async () => {
      await callbacks?.server.close();
      await compliance.close();
    },
  };
}

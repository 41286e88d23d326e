import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import { startCallbackServer, type CallbackServer } from './callbacks/server.js';
import { CallbackUrlMinter } from './callbacks/tokens.js';
import { ComplianceClient } from './compliance/client.js';
import type { AppConfig } from './config/env.js';
import { complianceActivitiesPerSecond, type WorkerConfig } from './config/worker.js';
import { resolveServices, type ServiceEndpoints } from './services.js';
import { createSaleWorkers, type SaleWorkers } from './worker.js';

export interface SaleService {
  workers: SaleWorkers;
  /** Present when result callbacks are received (a public base URL is configured, or on a local stack). */
  callbacks: CallbackServer | undefined;
  /** Mints the callback URLs the workers hand to the compliance service; undefined when polling only. */
  callbackUrls: CallbackUrlMinter | undefined;
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
  /** A bundle built ahead of time (default: bundle the workflow sources at start). */
  workflowBundle?: WorkflowBundle;
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
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    ...(callbacks ? { callbackUrls: callbacks.minter } : {}),
  });
  logger.info(
    { complianceActivitiesPerSecond: Number(perSecond.toFixed(3)), callbacks: callbacks ? 'receiving' : 'polling only' },
    'sale workers ready',
  );
  return {
    workers,
    callbacks: callbacks?.server,
    callbackUrls: callbacks?.minter,
    run: () => workers.run(),
    shutdown: () => workers.shutdown(),
    close: async () => {
      await callbacks?.server.close();
      await compliance.close();
    },
  };
}

/** A sale service on its own Temporal connections, with its services: what a worker process runs. */
export interface ConnectedSaleService {
  client: Client;
  services: ServiceEndpoints;
  sale: SaleService;
  /** After sale.run() has returned: the sale service, the Temporal connections, then the services. */
  close(): Promise<void>;
}

/** The configured services (or the embedded sandbox), connections to Temporal at `address`, and the sale service. */
export async function connectSaleService(options: {
  address: string;
  config: AppConfig;
  workerConfig: WorkerConfig;
  logger: Logger;
}): Promise<ConnectedSaleService> {
  const { address, workerConfig, logger } = options;
  const services = await resolveServices(options.config, logger);
  const connection = await NativeConnection.connect({ address });
  const clientConnection = await Connection.connect({ address });
  const client = new Client({ connection: clientConnection, namespace: workerConfig.namespace });
  const sale = await startSaleService({ connection, client, namespace: workerConfig.namespace, services, config: workerConfig, logger });
  return {
    client,
    services,
    sale,
    close: async () => {
      await sale.close();
      await clientConnection.close();
      await connection.close();
      await services.close();
    },
  };
}

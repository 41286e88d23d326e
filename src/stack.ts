import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from './config/env.js';
import type { WorkerConfig } from './config/worker.js';
import { connectSaleService, type SaleService } from './sale-service.js';
import type { ServiceEndpoints } from './services.js';
import { startDevServer, type DevServer } from './temporal/dev-server.js';
import { localTemporalSettings } from './temporal/connection.js';
import { installTemporalRuntime } from './temporal/runtime.js';
import { projectSearchAttributes, toCliSearchAttributes } from './temporal/search-attributes.js';

export interface Stack {
  temporalAddress: string;
  /** The Temporal web UI, when this stack started the server. */
  uiUrl: string | undefined;
  namespace: string;
  client: Client;
  services: ServiceEndpoints;
  sale: SaleService;
  /** Settles when the workers stop; rejects if one fails. */
  running: Promise<void>;
  stop(): Promise<void>;
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The usual ports when free, any free ones otherwise, so a second stack or a busy machine still starts. */
async function startLocalTemporal(options: { headless: boolean; dbFilename: string | undefined; namespace: string; logger: Logger }): Promise<DevServer> {
  const base = {
    namespace: options.namespace,
    headless: options.headless,
    searchAttributes: toCliSearchAttributes(projectSearchAttributes),
    logger: (msg: string) => options.logger.info({ component: 'temporal-dev-server' }, msg),
    ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
  };
  try {
    return await startDevServer({ ...base, port: 7233, ...(options.headless ? {} : { uiPort: 8233 }) });
  } catch (err) {
    if (!/cannot listen/.test((err as Error).message)) throw err;
    return startDevServer(base);
  }
}

/**
 * The whole product on one machine: a Temporal dev server (unless TEMPORAL_ADDRESS or a temporal.toml profile
 * names one), the embedded sandbox for any service that is not configured (a local stack asks for it
 * explicitly), the callback receiver and the workers.
 */
export async function startStack(options: {
  config: AppConfig;
  workerConfig: WorkerConfig;
  logger: Logger;
  /** No web UI (the demo and tests). */
  headless?: boolean;
  /** Keep Temporal's state in a file (default .temporal/dev.db; `null` for in-memory). */
  dbFilename?: string | null;
}): Promise<Stack> {
  const { config, workerConfig, logger } = options;
  installTemporalRuntime(logger, { metricsBindAddress: workerConfig.metricsBindAddress });
  let devServer: DevServer | undefined;
  let temporal = workerConfig.temporal;
  if (!temporal.address) {
    const dbFilename = options.dbFilename === null ? undefined : (options.dbFilename ?? resolve(REPO_ROOT, '.temporal/dev.db'));
    if (dbFilename) mkdirSync(dirname(dbFilename), { recursive: true });
    devServer = await startLocalTemporal({ headless: options.headless ?? false, dbFilename, namespace: temporal.namespace, logger });
    temporal = localTemporalSettings(devServer.address, devServer.namespace);
  }
  let worker;
  try {
    worker = await connectSaleService({ config: { ...config, embeddedSandbox: true }, workerConfig, logger, temporal });
  } catch (err) {
    await devServer?.stop();
    throw err;
  }
  const temporalAddress = temporal.address ?? devServer?.address ?? '';
  const { client, services, sale } = worker;
  const running = sale.run();
  let stopped: Promise<void> | undefined;
  return {
    temporalAddress,
    uiUrl: devServer?.uiUrl,
    namespace: temporal.namespace,
    client,
    services,
    sale,
    running,
    stop: () =>
      (stopped ??= (async () => {
        sale.shutdown();
        await running.catch(() => undefined);
        await worker.close();
        await devServer?.stop();
      })()),
  };
}

/**
 * `npm run worker`: the worker alone, against an existing Temporal server (TEMPORAL_ADDRESS, default
 * 127.0.0.1:7233) and the configured services, or the embedded sandbox for any service not configured.
 * SIGTERM / SIGINT drain the workers gracefully.
 */
import { loadConfig } from './config/env.js';
import { loadWorkerConfig } from './config/worker.js';
import { createLogger } from './logger.js';
import { connectSaleService } from './sale-service.js';
import { installTemporalRuntime } from './temporal/runtime.js';
import { runMain } from './cli/run-main.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const workerConfig = loadWorkerConfig();
  const logger = createLogger({ level: config.logLevel, name: 'worker' });
  installTemporalRuntime(logger);
  const address = workerConfig.temporalAddress ?? '127.0.0.1:7233';
  const worker = await connectSaleService({ address, config, workerConfig, logger });
  const service = worker.sale;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down: finishing in-flight tasks');
      service.shutdown();
    });
  }
  logger.info({ address, namespace: workerConfig.namespace }, 'worker running');
  try {
    await service.run();
  } finally {
    await worker.close();
  }
  return 0;
}

runMain(main);

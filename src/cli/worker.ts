/**
 * `npm run worker`: the worker alone, against an existing Temporal server (TEMPORAL_ADDRESS / TEMPORAL_PROFILE
 * and the other envconfig settings, default 127.0.0.1:7233) and the configured services. A service that is not
 * configured is refused unless SANDBOX=embedded asks for the embedded sandbox. Nothing starts half-way: the
 * connection, the search attributes and each service's credentials are checked first (see connectSaleService).
 * SIGTERM / SIGINT drain the workers gracefully.
 */
import { loadConfig } from '../config/env.js';
import { loadWorkerConfig } from '../config/worker.js';
import { createLogger } from '../logger.js';
import { connectSaleService } from '../worker/start.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { installTracing } from '../temporal/tracing.js';
import { runMain } from './run-main.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const workerConfig = loadWorkerConfig();
  const logger = createLogger({ level: config.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: workerConfig.metricsBindAddress });
  const tracing = await installTracing({ logger });
  const { temporal } = workerConfig;
  const worker = await connectSaleService({ config, workerConfig, logger });
  const service = worker.sale;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down: finishing in-flight tasks');
      service.shutdown();
    });
  }
  logger.info(
    {
      address: temporal.address ?? DEFAULT_TEMPORAL_ADDRESS,
      namespace: temporal.namespace,
      profile: temporal.profile,
      tls: Boolean(temporal.tls),
      sandbox: worker.services.sandbox ? 'embedded' : 'none',
    },
    'worker running',
  );
  try {
    await service.run();
  } finally {
    await worker.close();
    await tracing?.shutdown();
  }
  return 0;
}

runMain(main);

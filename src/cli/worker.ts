/** `npm run worker`: the worker alone, against an existing Temporal server. SIGTERM / SIGINT drain it gracefully. */
import { createLogger } from '../logger.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { installTracing } from '../temporal/tracing.js';
import { loadWorkerSettings } from '../worker/settings.js';
import { connectWorkerProcess } from '../worker/start.js';
import { runMain } from './run-main.js';

async function main(): Promise<number> {
  const settings = loadWorkerSettings(process.env);
  const logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const tracing = await installTracing({ settings: settings.tracing, logger });
  const { temporal } = settings;
  const connected = await connectWorkerProcess(settings, logger);
  const { worker } = connected;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'shutting down: finishing in-flight tasks');
      worker.shutdown();
    });
  }
  logger.info(
    {
      address: temporal.address ?? DEFAULT_TEMPORAL_ADDRESS,
      namespace: temporal.namespace,
      profile: temporal.profile,
      tls: Boolean(temporal.tls),
      tenants: settings.tenants.origin,
      sandbox: connected.sandbox ? 'embedded' : 'none',
    },
    'worker running',
  );
  try {
    await worker.run();
  } finally {
    await connected.close();
    await tracing?.shutdown();
  }
  return 0;
}

runMain(main);

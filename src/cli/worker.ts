/** `npm run worker`: the worker alone, against an existing Temporal server. SIGTERM / SIGINT drain it gracefully. */
import { createLogger } from '../logger.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { installTracing } from '../temporal/tracing.js';
import { startProcessHealth } from '../worker/process-health.js';
import { loadWorkerSettings } from '../worker/settings.js';
import { stopOnSignals } from '../worker/shutdown.js';
import { connectWorkerProcess, type WorkerProcess } from '../worker/start.js';
import { runMain } from './run-main.js';

async function main(): Promise<number> {
  const settings = loadWorkerSettings(process.env);
  const logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const tracing = await installTracing({ settings: settings.tracing, logger });
  const { temporal } = settings;
  // Before the start-up checks, which can take a while: live meanwhile, and not ready until the workers poll.
  const health = await startProcessHealth(settings.worker, logger);
  // From now on, so that a signal during the start-up stops it too, within the same bound.
  let worker: WorkerProcess | undefined;
  let stopping = false;
  const shutdown = () => {
    stopping = true;
    worker?.shutdown();
  };
  stopOnSignals({ shutdown, graceMs: settings.worker.shutdownGraceMs, logger });
  try {
    const connected = await connectWorkerProcess(settings, logger);
    worker = connected.worker;
    health?.attach(worker);
    try {
      // Stopped while starting: nothing polls yet, nothing to drain.
      if (stopping) return 0;
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
      await worker.run();
    } finally {
      await connected.close();
      await tracing?.shutdown();
    }
  } finally {
    await health?.close();
  }
  return 0;
}

runMain(main);

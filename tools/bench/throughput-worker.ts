/**
 * The throughput section's worker process: what `npm run worker` runs (src/cli/worker.ts's start-up, its settings from
 * the same variables), with the floor worker beside it on `<queue>.floor`: same process, runtime, connection options
 * and payload codec, so the CPU of a sale and of a floor workflow are read from one process in one run.
 */
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { runMain } from '../../src/cli/run-main.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { createLogger } from '../../src/logger.js';
import { connectNative } from '../../src/temporal/connection.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { connectWorkerProcess } from '../../src/worker/start.js';
import { createFloorActivities } from './floor-activity.js';
import { FLOOR_QUEUE } from './floor-workflow.js';

async function main(): Promise<number> {
  const settings = loadWorkerSettings(process.env);
  const logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const connected = await connectWorkerProcess(settings, logger);
  const connection = await connectNative(settings.temporal);
  const compliance = new ComplianceClient({
    baseUrl: process.env.COMPLIANCE_BASE_URL ?? '',
    apiKey: process.env.COMPLIANCE_API_KEY ?? '',
    businessId: process.env.COMPLIANCE_BUSINESS_ID ?? '',
  });
  const floor = await Worker.create({
    connection,
    namespace: settings.temporal.namespace,
    taskQueue: FLOOR_QUEUE,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./floor-workflow.ts', import.meta.url)),
      logger: new DefaultLogger('ERROR'),
    }),
    activities: createFloorActivities(compliance),
    dataConverter: settings.encryption.dataConverter,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      connected.worker.shutdown();
      floor.shutdown();
    });
  logger.info({ floorQueue: FLOOR_QUEUE }, 'worker running');
  try {
    await Promise.all([connected.worker.run(), floor.run()]);
  } finally {
    await compliance.close();
    await connection.close();
    await connected.close();
  }
  return 0;
}

runMain(main);

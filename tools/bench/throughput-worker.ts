/**
 * The throughput section's worker process: what `npm run worker` runs (src/cli/worker.ts's start-up, its settings from
 * the same variables), with the floor worker beside it on `<queue>.floor`: same process, runtime, connection options
 * and payload codec, so the CPU of a sale and of a floor workflow are read from one process in one run.
 */
import { Worker } from '@temporalio/worker';
import { runMain } from '../../src/cli/run-main.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { createLogger } from '../../src/logger.js';
import { connectNative } from '../../src/temporal/connection.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { bundleFloor, createFloorActivities } from './floor-activity.js';
import { FLOOR_QUEUE } from './floor-workflow.js';

async function main(): Promise<number> {
  const settings = loadWorkerSettings(process.env);
  const logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const worker = await WorkerProcess.start(settings, { logger });
  const connection = await connectNative(settings.temporal);
  // The section's variables name the compliance service, so the single-key settings hold it.
  const endpoint = settings.services.compliance;
  if (!endpoint) throw new Error('throughput worker: COMPLIANCE_BASE_URL and COMPLIANCE_API_KEY must be set');
  const compliance = new ComplianceClient(endpoint);
  const floor = await Worker.create({
    connection,
    namespace: settings.temporal.namespace,
    taskQueue: FLOOR_QUEUE,
    workflowBundle: await bundleFloor(),
    activities: createFloorActivities(compliance),
    dataConverter: settings.encryption.dataConverter,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      worker.shutdown();
      floor.shutdown();
    });
  logger.info({ floorQueue: FLOOR_QUEUE }, 'worker running');
  try {
    await Promise.all([worker.run(), floor.run()]);
  } finally {
    await compliance.close();
    await connection.close();
    await worker.close();
  }
  return 0;
}

runMain(main);

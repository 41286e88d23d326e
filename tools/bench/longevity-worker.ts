/**
 * The longevity section's worker process: what `npm run worker` runs (src/cli/worker.ts: its whole configuration read
 * from the environment, Temporal and the key checked at start), on the section's own task queue (BENCH_TASK_QUEUE),
 * with the purchases sync's options the section gives (BENCH_SYNC_OPTIONS, JSON: `PurchasesSyncOptions`, as a stack
 * passes `syncOptions`), for a configured service (no embedded sandbox): its own Temporal connection and client, handed
 * to WorkerProcess.start.
 */
import { Client } from '@temporalio/client';
import { runMain } from '../../src/cli/run-main.js';
import type { PurchasesSyncOptions } from '../../src/contracts/purchases-sync.js';
import { createLogger } from '../../src/logger.js';
import { connectWorkerConnection } from '../../src/temporal/connection.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';

async function main(): Promise<number> {
  const taskQueue = process.env.BENCH_TASK_QUEUE?.trim();
  if (!taskQueue) throw new Error('longevity worker: BENCH_TASK_QUEUE is not set');
  const syncOptions = JSON.parse(process.env.BENCH_SYNC_OPTIONS ?? '{}') as PurchasesSyncOptions;
  const settings = loadWorkerSettings(process.env);
  const logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const connection = await connectWorkerConnection(settings.temporal);
  const client = new Client({
    connection,
    namespace: settings.temporal.namespace,
    dataConverter: settings.encryption.dataConverter,
  });
  const worker = await WorkerProcess.start(settings, {
    brought: { connection, client, tenants: settings.tenants },
    logger,
    taskQueue,
    purchasesSyncOptions: syncOptions,
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  logger.info({ taskQueue, syncOptions }, 'worker running');
  try {
    await worker.run();
  } finally {
    await worker.close();
    await connection.close();
  }
  return 0;
}

runMain(main);

/**
 * The stock section's worker process: what `npm run worker` runs (src/cli/worker.ts: its whole configuration read
 * from the environment, Temporal, search attributes and the key checked at start), on a task queue of the bench's
 * own (BENCH_TASK_QUEUE), so no workflow left on the default queue by another section or a test suite reaches this
 * section's sandbox, and none of this section's reaches another's. Run by stock-process.ts as one node process
 * (`node --import tsx`), so a SIGKILL ends the worker itself.
 */
import { runMain } from '../../src/cli/run-main.js';
import { createLogger } from '../../src/logger.js';
import { installTemporalRuntime } from '../../src/temporal/runtime.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';

async function main(): Promise<number> {
  const taskQueue = process.env.BENCH_TASK_QUEUE?.trim();
  if (!taskQueue) throw new Error('stock worker: BENCH_TASK_QUEUE is not set');
  const settings = loadWorkerSettings(process.env);
  const logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
  installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
  const worker = await WorkerProcess.start(settings, { logger, taskQueue });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  logger.info({ taskQueue }, 'worker running');
  try {
    await worker.run();
  } finally {
    await worker.close();
  }
  return 0;
}

runMain(main);

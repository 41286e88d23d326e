import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import { forwardTo } from './forward.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from './temporal.js';
import { recordingMetrics } from './metrics.js';

export interface TestWorker {
  /** The worker's own task queue on the run's shared server. */
  taskQueue: string;
  /** The file's client of the shared server; a stand-in until `beforeAll` has run. */
  client: Client;
}

/**
 * One worker for the test file, running the workflows of `workflowsPath` on its own task queue of the run's
 * shared Temporal server: started before the file's tests, shut down after them, then the file's connections
 * closed. Call it before registering the file's own hooks, so that their `afterAll` runs first.
 */
export function useTestWorker(
  workflowsPath: string,
  taskQueuePrefix: string,
  bundle: { preloadModules?: string[] } = {},
  activities?: (client: Client) => object,
): TestWorker {
  const taskQueue = uniqueTaskQueue(taskQueuePrefix);
  let client: Client | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  beforeAll(async () => {
    const env = await getTestEnv();
    client = env.client;
    const workflowBundle = await bundleWorkflowCode({ workflowsPath, ...bundle, logger: testLogger });
    worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle,
      ...(activities ? { activities: activities(env.client) } : {}),
      sinks: recordingMetrics().sinks(),
    });
    running = worker.run();
  });
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await closeTestEnv();
  });
  return { taskQueue, client: forwardTo(() => client) };
}

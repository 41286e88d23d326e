/**
 * The process's workers as `createWorkers` wires them, on a real server: a workflow task may run longer than the SDK's
 * 5 s guard (a day book takes a burst of entries in one task, docs/fiscal-day.md, "A burst of entries"), and a stop
 * reaches a window's worker that was still being created.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { FISCAL_DAY_TASK_TIMEOUT } from '../../src/contracts/fiscal-day.js';
import { createWorkers } from '../../src/worker/workers.js';
import { routeDeploymentVersion } from '../../src/worker/deployment.js';
import { deploymentNameFor } from '../../src/config/versioning.js';
import { singleApplication } from '../helpers/single-application.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';
import { longTaskWorkflow } from './fixtures/long-task.js';

const workflowsPath = fileURLToPath(new URL('./fixtures/long-task.ts', import.meta.url));
const logger = pino({ level: 'silent' });

afterAll(closeTestEnv);

async function startWorkers(stop = new AbortController()) {
  const env = await getTestEnv();
  const taskQueue = uniqueTaskQueue('workers');
  const version = { deploymentName: deploymentNameFor(taskQueue), buildId: 'test' };
  const namespace = env.namespace ?? 'default';
  const workers = await createWorkers(
    { namespace, client: env.client, logger, taskQueue, version, services: singleApplication({}) },
    {
      connection: env.nativeConnection,
      signal: stop.signal,
      workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: testLogger }),
      activitiesPerSecond: { compliance: 1, accounting: 1 },
    },
  );
  const running = workers.run();
  await routeDeploymentVersion({
    client: env.client,
    namespace,
    version,
    taskQueues: workers.queues,
    makeCurrent: true,
    logger,
  });
  return { env, workers, running, taskQueue, stop };
}

/** Steps of the fixture's loop that take about `ms` here, measured on this machine first. */
function stepsFor(ms: number): number {
  const steps = 50_000_000;
  const began = performance.now();
  void longTaskWorkflow(steps);
  return Math.round((steps * ms) / Math.max(1, performance.now() - began));
}

describe('createWorkers', () => {
  it('lets a workflow task run longer than the SDK guard of 5 s', { timeout: 90_000 }, async () => {
    const { env, workers, running, taskQueue, stop } = await startWorkers();
    try {
      const steps = stepsFor(7_000);
      const began = Date.now();
      const result = await env.client.workflow.execute(longTaskWorkflow, {
        workflowId: `long-task-${taskQueue}`,
        taskQueue: workers.workflows.options.taskQueue,
        args: [steps],
        workflowTaskTimeout: FISCAL_DAY_TASK_TIMEOUT,
        workflowExecutionTimeout: '45 seconds',
      });
      expect(result).toBe(await longTaskWorkflow(steps));
      // The task itself ran past the guard's 5 s: the test shows what it claims.
      expect(Date.now() - began).toBeGreaterThan(5_000);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('stops a window queue worker whose creation was under way when the stop came', { timeout: 60_000 }, async () => {
    const stop = new AbortController();
    const { workers, running } = await startWorkers(stop);
    const serving = workers.serveWindowQueues([{ taskQueue: uniqueTaskQueue('window'), perSecond: 1 }]);
    stop.abort();
    await serving;
    const ended = await Promise.race([running.then(() => 'ended'), sleep(30_000).then(() => 'still polling')]);
    expect(ended).toBe('ended');
    expect(workers.every().map((w) => w.getState())).not.toContain('RUNNING');
  });
});

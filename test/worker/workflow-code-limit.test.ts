/**
 * A workflow task may run longer than the SDK's 5 s guard: a day book takes a burst of entries in one task
 * (docs/fiscal-day.md, "A burst of entries"). The worker's own wiring runs a task computing for about 7 s; with the
 * SDK's guard, that task would fail and be tried again for good.
 */
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

afterAll(closeTestEnv);

/** Steps of the fixture's loop that take about `ms` here, measured on this machine first. */
function stepsFor(ms: number): number {
  const steps = 50_000_000;
  const began = performance.now();
  longTaskWorkflow(steps);
  return Math.round((steps * ms) / Math.max(1, performance.now() - began));
}

describe('a workflow task longer than 5 s', () => {
  it('completes on the worker as the worker process wires it', { timeout: 90_000 }, async () => {
    const env = await getTestEnv();
    const logger = pino({ level: 'silent' });
    const taskQueue = uniqueTaskQueue('long-task');
    const version = { deploymentName: deploymentNameFor(taskQueue), buildId: 'test' };
    const namespace = env.namespace ?? 'default';
    const workers = await createWorkers(
      { namespace, client: env.client, logger, taskQueue, version },
      {
        connection: env.nativeConnection,
        services: singleApplication({}),
        workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: testLogger }),
        activitiesPerSecond: { compliance: 1, accounting: 1 },
      },
    );
    const running = workers.run();
    try {
      await routeDeploymentVersion({
        client: env.client,
        namespace,
        version,
        taskQueues: workers.queues,
        makeCurrent: true,
        logger,
      });
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
      workers.shutdown();
      await running;
    }
  });
});

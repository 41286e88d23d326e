/**
 * What the fast logic layers share: the workers of one time-skipping world (one per queue, each activity on the
 * queue its contract names, the workflows on the workflow queue), and one world per test file that is replaced
 * after a failed test, so one failure does not turn into timeouts of every test after it.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { activityTaskQueue, type ActivityName } from '../../src/contracts/task-queues.js';
import { recordingMetrics, type RecordingMetrics } from './metrics.js';
import { TIME_SKIPPING_NAMESPACE } from './time-skipping.js';

export interface RunningWorkers {
  /** Rejects if a worker stops before close(). */
  running: Promise<void>;
  close(): Promise<void>;
}

/** One worker per queue of the given activities; the workflow queue runs the workflows too. */
export async function startQueueWorkers(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  bundle: WorkflowBundleWithSourceMap,
  activities: Partial<Record<ActivityName, (input: never) => Promise<unknown>>>,
  /** What the workflows record through their metrics sink (default: kept and not read). */
  metrics: RecordingMetrics = recordingMetrics(),
): Promise<RunningWorkers> {
  const byQueue = new Map<string, Record<string, (input: never) => Promise<unknown>>>([[taskQueue, {}]]);
  for (const [name, activity] of Object.entries(activities)) {
    const queue = activityTaskQueue(name as ActivityName, taskQueue);
    byQueue.set(queue, { ...byQueue.get(queue), [name]: activity });
  }
  const common = { connection: env.nativeConnection, namespace: TIME_SKIPPING_NAMESPACE };
  const workers = await Promise.all(
    [...byQueue].map(([queue, queueActivities]) =>
      Worker.create({
        ...common,
        taskQueue: queue,
        activities: queueActivities,
        ...(queue === taskQueue ? { workflowBundle: bundle, sinks: metrics.sinks() } : {}),
      }),
    ),
  );
  let closing = false;
  const running = Promise.all(workers.map((w) => w.run())).then(() => {
    if (!closing) throw new Error('the workers stopped');
  });
  running.catch(() => undefined);
  return {
    running,
    async close() {
      closing = true;
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running.catch(() => undefined);
    },
  };
}

/**
 * One world for the test file, started before its tests and closed after them. A test that fails may leave the
 * server's clock held (an execution or activity it could not finish): the next test then gets a fresh world.
 */
export function useWorld<W extends { env: TestWorkflowEnvironment; close(): Promise<void> }>(
  createWorld: () => Promise<W>,
): { current(): Promise<W>; readonly env: TestWorkflowEnvironment } {
  let world: W | undefined;
  let poisoned = false;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterEach((context) => {
    if (context.task.result?.state === 'fail') poisoned = true;
  });
  afterAll(async () => {
    await world?.close();
  });
  const started = () => {
    if (!world) throw new Error('used before beforeAll started the environment');
    return world;
  };
  return {
    get env() {
      return started().env;
    },
    async current() {
      if (poisoned) {
        poisoned = false;
        const old = started();
        world = await createWorld();
        // A test that timed out may still be using it.
        void old.close().catch(() => undefined);
      }
      return started();
    },
  };
}

import { addAbortListener } from 'node:events';
import { FISCAL_DAY_TASK_TIMEOUT } from '../contracts/fiscal-day.js';
import type { Client } from '@temporalio/client';
import { Worker, type NativeConnection, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities, type Activities } from '../../activities/index.js';
import { ItemRegistry } from '../../activities/item-registry.js';
import { ACTIVITY_QUEUES, taskQueueOf, type ActivityName, type ActivityQueue } from '../contracts/task-queues.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import { metricsSinks } from '../metrics/workflow-sink.js';
import type { ServiceAccess } from '../services/access.js';
import { mapBounded } from '../tenants/probes.js';
import { tracingPlugins } from '../temporal/tracing.js';
import type { DeploymentVersion } from '../config/versioning.js';
import { workflowBundleFor } from '../temporal/workflow-bundle.js';

/**
 * Past the grace the SDK cancels the activities still running (WORKER_SHUTDOWN): ours abort their call, and core
 * reports each attempt failed, so the server retries it at once instead of after a heartbeat timeout. This is their
 * time to do so; an activity that ignores the cancellation is abandoned when it is up (the Worker's run() rejects).
 */
export const SHUTDOWN_FORCE_AFTER_GRACE_MS = 2_000;

// The SDK's 40 let one business's flood hold the thread. Why: docs/benchmarks.md, "Fairness within one application".
const WORKFLOW_TASK_SLOTS = 10;
// A dead worker's tasks wait this long for another (SDK: 10 s): a restarted worker is back by then, and a sticky task
// still untaken past it is far from its norm. Measured: docs/benchmarks.md, "The pace's fractions and a killed worker".
const STICKY_TASK_WAIT = '5 seconds';

type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** Checked when compiling: every activity has its queue in the contract, and every entry there an activity. */
export type EveryActivityHasAQueue = Holds<Exactly<keyof Activities, ActivityName>>;

export type Workers = Awaited<ReturnType<typeof createWorkers>>;

// Why 2: docs/tenancy.md, "Each application held to its own budget, fleet-wide".
const WINDOW_QUEUE_POLLS = 2;
/** Each Worker.create is a native call: a few at once when many windows are served at start. */
const WINDOW_WORKERS_CREATED_AT_ONCE = 8;

function activitiesOn(queue: ActivityQueue, activities: Activities): Partial<Activities> {
  return Object.fromEntries(
    Object.entries(activities).filter(([name]) => ACTIVITY_QUEUES[name as ActivityName] === queue),
  );
}

/** What the process hands whole to what builds its workers, budgets, schedules and version routing. */
export interface WorkerContext {
  /** The registration activity starts item-registration workflows with it; its data converter is the workers'. */
  client: Client;
  namespace: string;
  /** The workflow queue; the service queues derive from it. */
  taskQueue: string;
  /** Every queue's worker polls as this version. */
  version: DeploymentVersion;
  logger: Logger;
  metrics?: MetricsRecorder;
  /** The service clients of the tenants served. */
  services: ServiceAccess;
}

/** What the activities are given beyond the context: callbacks, the purchases sink, per-business settings. */
type ActivitySettings = Omit<
  Parameters<typeof createActivities>[0],
  'services' | 'itemRegistry' | 'temporal' | 'logger' | 'metrics' | 'outages' | 'afterAnswers'
>;

/**
 * The SDK stops a call into workflow code after 5 s, its guard against a workflow stuck in a loop; a day book's task
 * after a burst of entries may rightly take longer, up to the task timeout it is given. The SDK reads this option
 * (`...rest` in its `addDefaultWorkerOptions`) but leaves it out of `WorkerOptions`' type.
 */
const WORKFLOW_CODE_LIMIT: { isolateExecutionTimeout: string } = { isolateExecutionTimeout: FISCAL_DAY_TASK_TIMEOUT };

/** No new task, those running get the grace; the SDK throws on a Worker that is not running. */
function stopRunning(worker: Worker): void {
  if (worker.getState() === 'RUNNING') worker.shutdown();
}

/** One worker per service queue: its server-side rate caps the fleet's load on that service, apart from the other's. */
export async function createWorkers(
  context: WorkerContext,
  options: {
    connection: NativeConnection;
    /** The process's one stop: every worker stops polling and its tasks get the grace. */
    signal: AbortSignal;
    /** Fleet-wide: the server enforces it. */
    activitiesPerSecond: { compliance: number; accounting: number };
    /** How long a stopping worker lets its tasks run (SHUTDOWN_GRACE_TIME; default: the SDK's, none). */
    shutdownGraceMs?: number;
    workflowBundle?: WorkflowBundle;
    activities?: ActivitySettings;
  },
) {
  const { logger, taskQueue, metrics, services, client } = context;
  const { shutdownGraceMs, signal } = options;
  const { dataConverter } = client.options;
  const afterAnswers = new Set<Promise<unknown>>();
  const activities = createActivities({
    ...options.activities,
    afterAnswers,
    services,
    itemRegistry: new ItemRegistry(services),
    temporal: { client },
    logger,
    metrics,
  });
  const common = {
    connection: options.connection,
    namespace: context.namespace,
    dataConverter,
    ...(shutdownGraceMs === undefined
      ? {}
      : { shutdownGraceTime: shutdownGraceMs, shutdownForceTime: shutdownGraceMs + SHUTDOWN_FORCE_AFTER_GRACE_MS }),
    plugins: tracingPlugins(),
    // Pinned: a workflow runs on the build it started on to its end, so a change to its code needs no patch.
    // Why: docs/deployment.md, "Rolling out a new build".
    workerDeploymentOptions: {
      useWorkerVersioning: true as const,
      version: context.version,
      defaultVersioningBehavior: 'PINNED' as const,
    },
  };
  const complianceActivities = activitiesOn('compliance', activities);
  const workflows = await Worker.create({
    ...common,
    taskQueue: taskQueueOf('workflow', taskQueue),
    workflowBundle: options.workflowBundle ?? (await workflowBundleFor(logger, dataConverter)),
    activities: activitiesOn('workflow', activities),
    ...(metrics ? { sinks: metricsSinks(metrics) } : {}),
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    ...WORKFLOW_CODE_LIMIT,
    stickyQueueScheduleToStartTimeout: STICKY_TASK_WAIT,
  });
  const serviceWorker = (queue: 'compliance' | 'accounting') =>
    Worker.create({
      ...common,
      taskQueue: taskQueueOf(queue, taskQueue),
      activities: activitiesOn(queue, activities),
      maxTaskQueueActivitiesPerSecond: options.activitiesPerSecond[queue],
    });
  const compliance = await serviceWorker('compliance');
  const accounting = await serviceWorker('accounting');
  const all = [workflows, compliance, accounting];
  const windowWorkers = new Map<string, { worker: Worker; running: Promise<void> }>();
  const { promise: windowWorkerFailed, reject: failWindowWorker } = Promise.withResolvers<never>();
  // Unobserved until run(): a failure before then rejects run() when it is called.
  windowWorkerFailed.catch(() => undefined);
  // A worker for each window's own compliance queue listed; those no longer listed end after their tasks in flight.
  const serveWindowQueues = async (queues: ReadonlyArray<{ taskQueue: string; perSecond: number }>) => {
    const wanted = new Set(queues.map((q) => q.taskQueue));
    for (const [taskQueue, entry] of windowWorkers) {
      if (wanted.has(taskQueue)) continue;
      windowWorkers.delete(taskQueue);
      entry.worker.shutdown();
    }
    const fresh = queues.filter((q) => !windowWorkers.has(q.taskQueue));
    await mapBounded(fresh, WINDOW_WORKERS_CREATED_AT_ONCE, async ({ taskQueue: queue, perSecond }) => {
      if (signal.aborted) return;
      const worker = await Worker.create({
        ...common,
        taskQueue: queue,
        activities: complianceActivities,
        maxTaskQueueActivitiesPerSecond: perSecond,
        activityTaskPollerBehavior: { type: 'simple-maximum', maximum: WINDOW_QUEUE_POLLS },
      });
      const running = worker.run().catch(failWindowWorker);
      windowWorkers.set(queue, { worker, running });
      // A stop that came while this worker was being created reaches it too.
      if (signal.aborted) stopRunning(worker);
    });
  };
  const every = (): Worker[] => [...all, ...[...windowWorkers.values()].map((entry) => entry.worker)];
  addAbortListener(signal, () => every().forEach(stopRunning));
  return {
    workflows,
    compliance,
    accounting,
    /** The three queues of the process, before any window's. */
    queues: all.map((w) => w.options.taskQueue),
    serveWindowQueues,
    /** Every Worker polling now: the three queues' and each window's. */
    every,
    // Until the signal or a fatal error.
    run: async () => {
      await Promise.race([Promise.all(all.map((w) => w.run())), windowWorkerFailed]);
      await Promise.all([...windowWorkers.values()].map((entry) => entry.running));
      await Promise.allSettled(afterAnswers);
    },
  };
}

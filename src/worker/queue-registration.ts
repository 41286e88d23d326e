/**
 * Whether the server holds every task queue this process polls in its Worker Deployment Version. A versioned worker's
 * poll registers its queue in the version, and the server refuses more than `matching.maxTaskQueuesInDeploymentVersion`
 * (default 100): the SDK retries such a refused poll without end and says nothing a process can read, while the
 * businesses served on that queue wait. So this asks the server, and says so at once: an error naming the queues and
 * their businesses, a gauge, and readiness. Docs: docs/deployment.md, "What the server needs".
 */
import proto from '@temporalio/proto';
import type { WorkerContext } from './workers.js';

/** A queue is given this long after its worker started to appear in the version (a poll or two). */
const REGISTRATION_GRACE_MS = 20_000;
const CHECK_EVERY_MS = 30_000;
const STRANDED_KEPT_MS = 10 * 60_000;

export interface PolledQueue {
  taskQueue: string;
  /** The businesses whose calls go there: named when it is refused. */
  businesses: readonly string[];
  /** When this process began polling it. */
  since: number;
}

export interface QueueRegistration {
  /** Queues polled past their grace and not in the version: empty while all are held. */
  missing(): readonly PolledQueue[];
  /**
   * Window queues the version holds, with activity tasks waiting, that are not in this process's list: a window without
   * a queue of its own, whose long-lived workflows still hold that queue as their route. Served until quiet
   * (`onStranded`).
   */
  stranded(): readonly string[];
  /** Asks the server now (also every 30 s). */
  check(): Promise<void>;
  stop(): void;
}

export function watchQueueRegistration(
  options: Pick<WorkerContext, 'client' | 'namespace' | 'version' | 'logger' | 'metrics'> & {
    polled: () => readonly PolledQueue[];
    /** Window queues start with it (`<queue>.compliance-api.`): only those are taken up when stranded. */
    windowQueuePrefix?: string;
    /** The stranded set changed (found, or emptied). */
    onStranded?: (queues: readonly string[]) => void;
    graceMs?: number;
    everyMs?: number;
  },
): QueueRegistration {
  const { client, namespace, version, logger, metrics } = options;
  const grace = options.graceMs ?? REGISTRATION_GRACE_MS;
  let missing: PolledQueue[] = [];
  let stranded: string[] = [];
  const strandedSeen = new Map<string, number>();
  const told = new Set<string>();
  let checking: Promise<void> | undefined;

  const checkNow = async () => {
    const polledNow = options.polled();
    const polled = polledNow.filter((q) => Date.now() - q.since >= grace);
    if (polled.length === 0) return;
    let held: Set<string>;
    try {
      const described = await client.workflowService.describeWorkerDeploymentVersion({
        namespace,
        deploymentVersion: version,
        reportTaskQueueStats: options.windowQueuePrefix !== undefined,
      });
      held = new Set((described.workerDeploymentVersionInfo?.taskQueueInfos ?? []).map((q) => q.name ?? ''));
      const polledNames = new Set(polledNow.map((q) => q.taskQueue));
      const waiting = (described.versionTaskQueues ?? []).filter(
        (q) =>
          options.windowQueuePrefix !== undefined &&
          q.name?.startsWith(options.windowQueuePrefix) &&
          q.type === proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY &&
          Number(q.stats?.approximateBacklogCount ?? 0) > 0,
      );
      // Taken up while tasks wait, and kept 10 minutes past the last one: a long-lived workflow placed there calls
      // again after each answer.
      const at = Date.now();
      for (const q of waiting)
        if (!polledNames.has(q.name!) || strandedSeen.has(q.name!)) strandedSeen.set(q.name!, at);
      for (const [name, seen] of strandedSeen) if (at - seen > STRANDED_KEPT_MS) strandedSeen.delete(name);
      const now = [...strandedSeen.keys()].sort();
      if (now.join('\n') !== stranded.join('\n')) {
        const found = now.filter((name) => !stranded.includes(name));
        if (found.length > 0)
          logger.warn(
            { ...version, queues: found },
            "activity tasks wait on window queues outside this worker's list (routes long-lived workflows still " +
              'hold): served until they are done',
          );
        stranded = now;
        options.onStranded?.(stranded);
      }
    } catch (err) {
      // Unknown is not refused: the server unreachable is said elsewhere (the Temporal connection's own errors).
      logger.debug({ err: err instanceof Error ? err.message : String(err) }, 'queue registration not checked');
      return;
    }
    missing = polled.filter((q) => !held.has(q.taskQueue));
    metrics?.set('etims_worker_task_queues_unregistered', missing.length, {});
    const fresh = missing.filter((q) => !told.has(q.taskQueue));
    if (fresh.length > 0) {
      const businesses = [...new Set(fresh.flatMap((q) => q.businesses))];
      logger.error(
        {
          ...version,
          queues: fresh.map((q) => q.taskQueue).slice(0, 20),
          refusedQueues: missing.length,
          businesses: businesses.slice(0, 50),
          registered: held.size,
        },
        `the server holds ${missing.length} of the task queues this worker polls outside its deployment version ` +
          `(${held.size} held), so the work of ${businesses.length} business(es) on them waits: the server refuses ` +
          'more queues per version than matching.maxTaskQueuesInDeploymentVersion (default 100); raise it ' +
          '(docs/deployment.md, "What the server needs")',
      );
    }
    for (const q of fresh) told.add(q.taskQueue);
    // A queue held again is told of again should it be refused later.
    for (const name of [...told]) if (!missing.some((q) => q.taskQueue === name)) told.delete(name);
  };
  const check = () => (checking ??= checkNow().finally(() => (checking = undefined)));
  const timer = setInterval(() => void check(), options.everyMs ?? CHECK_EVERY_MS);
  timer.unref();
  // The first look as soon as the first queues' grace is over, not a whole interval later.
  const first = setTimeout(() => void check(), grace + 1_000);
  first.unref();
  return {
    missing: () => missing,
    stranded: () => stranded,
    check,
    stop: () => {
      clearInterval(timer);
      clearTimeout(first);
    },
  };
}

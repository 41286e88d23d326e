// `/readyz`: whether this process should be sent work (callbacks, through a Service) and counted as up in a rollout.
import type { Worker } from '@temporalio/worker';
import { httpStatus, loopbackUrl, reportOf, type HealthChecks, type HealthReport } from './health.js';

/** What readiness reads of a started worker process (src/worker/start.ts). */
export interface ReadinessSource {
  readonly stopping: boolean;
  workers: { every(): Worker[] };
  /** The receiver, when the process runs one. */
  callbacks?: { url: string } | undefined;
  /** Queues it polls that its Worker Deployment Version does not hold (the server refused them). */
  queues?: { missing(): ReadonlyArray<{ taskQueue: string }> };
}

// A receiver that takes longer than this on loopback is in no state to take a compliance service's callback.
const RECEIVER_TIMEOUT_MS = 2_000;

/** `started` undefined: the process is still starting. */
export async function readinessOf(started: ReadinessSource | undefined): Promise<HealthReport> {
  if (!started) return reportOf({ workers: 'starting' });
  // Before anything else: a draining pod must leave the Service's endpoints at once, whatever its workers say.
  if (started.stopping) return reportOf({ shutdown: 'stopping' });
  const checks: HealthChecks = { workers: workersVerdict(started.workers.every()) };
  const refused = started.queues?.missing() ?? [];
  if (started.queues)
    checks.queues =
      refused.length === 0
        ? 'ok'
        : `${refused.length} task queue(s) not held by this build's deployment version (refused by the server): ` +
          `${refused[0]!.taskQueue}${refused.length > 1 ? ', …' : ''}`;
  if (started.callbacks) checks.callbacks = await receiverVerdict(started.callbacks.url);
  return reportOf(checks);
}

/** `ok` when every Worker polls; else the first that does not, by task queue. */
function workersVerdict(workers: readonly Worker[]): string {
  if (workers.length === 0) return 'none';
  for (const worker of workers) {
    const why = notPolling(worker);
    if (why) return `${worker.options.taskQueue}: ${why}`;
  }
  return 'ok';
}

/**
 * Why a Worker is not polling, or undefined when it is. The SDK tells per Worker its run state and, for each kind of
 * task, whether its poll loop lives and has a poll waiting in core (getStatus()). It does not tell whether the
 * server has answered a poll lately: core retries a failed poll without telling the loop. So this is the strongest
 * signal in the process: the Worker runs, and each loop it started waits in core for the server's next task. A
 * loop's poll is outstanding between tasks too (the next is asked for as soon as one arrives, before any macrotask
 * such as this probe's can run), so a busy Worker reads as polling. A kind of task the Worker has nothing registered
 * for is SHUTDOWN from the start, while the Worker is RUNNING; a loop that ran ends only once the Worker stops.
 */
export function notPolling(worker: Worker): string | undefined {
  const status = worker.getStatus();
  if (status.runState !== 'RUNNING') return status.runState.toLowerCase();
  const loops = [
    { kind: 'workflow', state: status.workflowPollerState, outstanding: status.hasOutstandingWorkflowPoll },
    { kind: 'activity', state: status.activityPollerState, outstanding: status.hasOutstandingActivityPoll },
  ];
  const failed = loops.find((loop) => loop.state === 'FAILED');
  if (failed) return `${failed.kind} poller failed`;
  const running = loops.filter((loop) => loop.state === 'POLLING');
  if (running.length === 0) return 'no poller';
  const idle = running.find((loop) => !loop.outstanding);
  return idle ? `${idle.kind} poller not polling yet` : undefined;
}

/** The receiver's own health route, over HTTP as a compliance service's callback would come. */
async function receiverVerdict(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const status = await httpStatus(`${loopbackUrl(`${hostname}:${port || 80}`)}/health`, RECEIVER_TIMEOUT_MS);
  if (status === 200) return 'ok';
  return typeof status === 'number' ? `receiver answered ${status}` : `receiver ${status}`;
}

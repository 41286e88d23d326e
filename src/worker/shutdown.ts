// How a worker process stops on SIGTERM / SIGINT: at once not ready, no new task, the running ones given
// SHUTDOWN_GRACE_TIME, and an exit bounded whatever happens, before the orchestrator's SIGKILL.
import type { Logger } from 'pino';

/**
 * Past the grace the SDK cancels the activities still running (WORKER_SHUTDOWN): ours abort their call, and core
 * reports each attempt failed, so the server retries it at once instead of after a heartbeat timeout. This is their
 * time to do so; an activity that ignores the cancellation is abandoned when it is up (the Worker's run() rejects).
 */
export const SHUTDOWN_FORCE_AFTER_GRACE_MS = 2_000;

/**
 * After the grace, what the process has left before it exits: the SDK's forced stop (SHUTDOWN_FORCE_AFTER_GRACE_MS
 * past the grace, well within this), closing its connections and flushing its traces. A pod's
 * terminationGracePeriodSeconds must leave at least this beyond SHUTDOWN_GRACE_TIME (docs/deployment.md, "Health and
 * shutdown").
 */
export const EXIT_MARGIN_MS = SHUTDOWN_FORCE_AFTER_GRACE_MS + 3_000;

/** What a signal stops: `stopping` from the first shutdown() on. */
export interface Stoppable {
  readonly stopping: boolean;
  shutdown(): void;
  readonly graceMs: number;
  readonly logger: Logger;
}

export function stopOnSignals(process_: Stoppable): void {
  const { logger, graceMs } = process_;
  // `on`, not `once`: a terminal's Ctrl+C reaches the process from its group and again relayed by what runs it (npm,
  // tsx), and a second signal without a listener would kill the process in the middle of its drain.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (process_.stopping) return logger.info({ signal }, 'already shutting down');
      logger.info({ signal, graceSeconds: graceMs / 1000 }, 'shutting down: finishing in-flight tasks');
      process_.shutdown();
      setTimeout(() => {
        logger.error({ graceSeconds: graceMs / 1000 }, 'shutdown did not finish within its grace: exiting');
        process.exit(1);
      }, graceMs + EXIT_MARGIN_MS).unref();
    });
  }
}

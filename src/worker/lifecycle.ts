// A worker process from settings to exit: what it opens goes on one stack, closed in reverse; one signal stops it.
import type { Logger } from 'pino';
import { createLogger } from '../logger.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { installTracing } from '../temporal/tracing.js';
import { startProcessHealth } from './health.js';
import type { WorkerSettings } from './settings.js';
import { connectWorkerProcess, Resources, type WorkerProcess } from './start.js';
import { SHUTDOWN_FORCE_AFTER_GRACE_MS } from './workers.js';

/**
 * After the grace, what the process has left before it exits: the SDK's forced stop (SHUTDOWN_FORCE_AFTER_GRACE_MS
 * past the grace, well within this), closing its connections and flushing its traces. A pod's
 * terminationGracePeriodSeconds must leave at least this beyond SHUTDOWN_GRACE_TIME (docs/deployment.md, "Health and
 * shutdown").
 */
export const EXIT_MARGIN_MS = SHUTDOWN_FORCE_AFTER_GRACE_MS + 3_000;

export class WorkerLifecycle {
  readonly logger: Logger;
  private readonly resources: Resources;
  private readonly stop = new AbortController();
  private worker: WorkerProcess | undefined;

  constructor(private readonly settings: WorkerSettings) {
    this.logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
    this.resources = new Resources(this.logger);
  }

  /**
   * SIGTERM / SIGINT: at once not ready, no new task, the running ones given SHUTDOWN_GRACE_TIME, and an exit bounded
   * whatever happens, before the orchestrator's SIGKILL. Called before open(), so a signal during the start-up stops
   * it too, within the same bound.
   */
  stopOnSignals(): this {
    const { logger } = this;
    const graceSeconds = this.settings.worker.shutdownGraceMs / 1000;
    // `on`, not `once`: a terminal's Ctrl+C reaches the process from its group and again relayed by what runs it (npm,
    // tsx), and a second signal without a listener would kill the process in the middle of its drain.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (this.stop.signal.aborted) return logger.info({ signal }, 'already shutting down');
        logger.info({ signal, graceSeconds }, 'shutting down: finishing in-flight tasks');
        this.stop.abort();
        setTimeout(
          () => {
            logger.error({ graceSeconds }, 'shutdown did not finish within its grace: exiting');
            process.exit(1);
          },
          graceSeconds * 1000 + EXIT_MARGIN_MS,
        ).unref();
      });
    }
    return this;
  }

  /**
   * Health first, so the process is live while its start-up checks take their time and ready only once its workers
   * poll. False when a signal came meanwhile: nothing polls yet, nothing to drain.
   */
  async open(): Promise<boolean> {
    const { settings, logger, resources } = this;
    installTemporalRuntime(logger, { metricsBindAddress: settings.worker.metricsBindAddress });
    const tracing = await installTracing({ settings: settings.tracing, logger });
    if (tracing) resources.own('tracing', tracing, (t) => t.shutdown());
    const health = await startProcessHealth(settings.worker, logger);
    if (health) resources.own('health server', health, (h) => h.close());
    const connected = await connectWorkerProcess(settings, logger, { resources, stop: this.stop });
    this.worker = connected.worker;
    health?.attach(connected.worker);
    if (this.stop.signal.aborted) return false;
    const { temporal } = settings;
    logger.info(
      {
        address: temporal.address ?? DEFAULT_TEMPORAL_ADDRESS,
        namespace: temporal.namespace,
        profile: temporal.profile,
        tls: Boolean(temporal.tls),
        tenants: settings.tenants.origin,
        sandbox: connected.sandbox ? 'embedded' : 'none',
      },
      'worker running',
    );
    return true;
  }

  /** Until a signal stops it; rejects if a worker fails. */
  run(): Promise<void> {
    if (!this.worker) throw new Error('the worker process runs once opened');
    return this.worker.run();
  }

  /** Everything opened, newest first, whatever failed. */
  close(): Promise<void> {
    return this.resources.close();
  }
}

// A worker process from settings to exit: what it opens goes on one stack, closed in reverse; one signal stops it.
import type { Logger } from 'pino';
import { createLogger } from '../logger.js';
import { DEFAULT_TEMPORAL_ADDRESS } from '../temporal/connection.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { installTracing } from '../temporal/tracing.js';
import { startProcessHealth } from './process-health.js';
import { Resources } from './resources.js';
import type { WorkerSettings } from './settings.js';
import { connectWorkerProcess, type WorkerProcess } from './start.js';

export class WorkerLifecycle {
  readonly logger: Logger;
  readonly graceMs: number;
  private readonly resources: Resources;
  private readonly stop = new AbortController();
  private worker: WorkerProcess | undefined;

  constructor(private readonly settings: WorkerSettings) {
    this.logger = createLogger({ level: settings.services.logLevel, name: 'worker' });
    this.graceMs = settings.worker.shutdownGraceMs;
    this.resources = new Resources(this.logger);
  }

  get stopping(): boolean {
    return this.stop.signal.aborted;
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
    if (this.stopping) return false;
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

  /** Until shutdown(); rejects if a worker fails. */
  run(): Promise<void> {
    if (!this.worker) throw new Error('the worker process runs once opened');
    return this.worker.run();
  }

  /** Once, from any state: no new task, those running get their grace, readiness answers no at once. */
  shutdown(): void {
    this.stop.abort();
  }

  /** Everything opened, newest first, whatever failed. */
  close(): Promise<void> {
    return this.resources.close();
  }
}

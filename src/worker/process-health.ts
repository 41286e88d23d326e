// A worker process's health server (HEALTH_BIND_ADDRESS), up from before its start-up checks: live while it starts,
// ready once its workers poll.
import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/worker.js';
import { startHealthServer, type HealthServer } from './health.js';
import { startLiveness } from './liveness.js';
import { readinessOf, type ReadinessSource } from './readiness.js';

export interface ProcessHealth {
  url: string;
  /** The started process: readiness follows it from now on. */
  attach(started: ReadinessSource): void;
  close(): Promise<void>;
}

/** Undefined when HEALTH_BIND_ADDRESS is unset. Call after installTemporalRuntime: liveness watches that runtime. */
export async function startProcessHealth(
  config: Pick<WorkerConfig, 'healthBindAddress' | 'metricsBindAddress'>,
  logger: Logger,
): Promise<ProcessHealth | undefined> {
  if (!config.healthBindAddress) return undefined;
  const liveness = startLiveness({ metricsBindAddress: config.metricsBindAddress });
  let attached: ReadinessSource | undefined;
  let server: HealthServer;
  try {
    server = await startHealthServer({
      bindAddress: config.healthBindAddress,
      ready: () => readinessOf(attached),
      live: () => liveness.check(),
      logger: logger.child({ component: 'health' }),
    });
  } catch (err) {
    liveness.close();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`HEALTH_BIND_ADDRESS: cannot listen on ${config.healthBindAddress}: ${reason}`, { cause: err });
  }
  logger.info({ readyz: `${server.url}/readyz`, livez: `${server.url}/livez` }, 'health probes served');
  return {
    url: server.url,
    attach: (started) => void (attached = started),
    close: async () => {
      liveness.close();
      await server.close();
    },
  };
}

import { DefaultLogger, Runtime, makeTelemetryFilterString, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

let installed = false;

/** The SDK's wiring messages, which an operator does not act on (an activity-only worker polling no workflows is by design). */
const SDK_WIRING = /^(No (Nexus services|workflows|activities) registered, not polling|Worker state changed)/;

/**
 * Routes the SDK's and the Rust core's logs through pino and, given a bind address, serves the SDK's metrics and
 * the worker's own (src/temporal/metric-names.ts) on Prometheus' `/metrics`. Must run once, before any
 * connection or worker is created; later calls are no-ops so tests and the local stack can share it.
 */
export function installTemporalRuntime(
  logger: Logger,
  options: { level?: LogLevel; metricsBindAddress?: string | undefined } = {},
): void {
  if (installed) return;
  installed = true;
  const level = options.level ?? 'INFO';
  const temporalLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      const meta = { ...entry.meta, sdkComponent: entry.meta?.sdkComponent };
      const method =
        SDK_WIRING.test(entry.message) && entry.meta?.state !== 'FAILED'
          ? 'debug'
          : (entry.level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error');
      temporalLogger[method](meta, entry.message);
    }),
    telemetryOptions: {
      logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) },
      ...(options.metricsBindAddress
        ? {
            metrics: {
              prometheus: {
                bindAddress: options.metricsBindAddress,
                countersTotalSuffix: true,
                unitSuffix: true,
                useSecondsForDurations: true,
              },
            },
          }
        : {}),
    },
  });
  if (options.metricsBindAddress)
    logger.info({ metrics: `http://${options.metricsBindAddress}/metrics` }, 'Prometheus metrics served');
}

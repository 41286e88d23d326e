import { DefaultLogger, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import type { Logger } from 'pino';

let installed = false;

/** The SDK's wiring messages, which an operator does not act on (an activity-only worker is by design). */
const SDK_WIRING = /^(No (Nexus services|workflows|activities) registered, not polling|Worker state changed)/;

/** Before any connection or worker is created; later calls are no-ops, so tests and the local stack share it. */
export function installTemporalRuntime(
  logger: Logger,
  options: { metricsBindAddress?: string | undefined } = {},
): void {
  if (installed) return;
  installed = true;
  const temporalLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    logger: new DefaultLogger('INFO', (entry) => {
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

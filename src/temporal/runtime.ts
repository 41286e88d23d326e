import { DefaultLogger, Runtime, makeTelemetryFilterString, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';

let installed = false;

/**
 * Routes the SDK's and the Rust core's logs through pino. Must run once, before any connection or worker is
 * created; later calls are no-ops so tests and the local stack can share it.
 */
export function installTemporalRuntime(logger: Logger, level: LogLevel = 'INFO'): void {
  if (installed) return;
  installed = true;
  const temporalLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      const meta = { ...entry.meta, sdkComponent: entry.meta?.sdkComponent };
      const method = entry.level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
      temporalLogger[method](meta, entry.message);
    }),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
}

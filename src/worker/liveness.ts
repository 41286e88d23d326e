// `/livez`: whether this process is wedged and only a restart helps. Nothing here asks the Temporal server: an outage
// of Temporal (or of a service) is waited out by a live process, never answered by restarting every pod.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Runtime } from '@temporalio/worker';
import { httpStatus, loopbackUrl, reportOf, type HealthReport } from './health.js';

/**
 * A loop this late has starved the activities' heartbeats (a third of 10 s apart) and the Workers' own timers: the
 * process is wedged, not busy. A probe the loop cannot answer at all fails by its own timeout.
 */
export const EVENT_LOOP_DELAY_LIMIT_MS = 5_000;
/** The delay is the worst over the last full window and the one under way: one stall is seen by a probe or two. */
const WINDOW_MS = 10_000;
const SAMPLE_RESOLUTION_MS = 20;
const EXPORTER_TIMEOUT_MS = 2_000;

export interface Liveness {
  check(): Promise<HealthReport>;
  close(): void;
}

export function startLiveness(options: {
  /** METRICS_BIND_ADDRESS: core's own exporter, asked as the runtime's sign of life. */
  metricsBindAddress?: string | undefined;
  delayLimitMs?: number;
  windowMs?: number;
}): Liveness {
  const limitMs = options.delayLimitMs ?? EVENT_LOOP_DELAY_LIMIT_MS;
  const delay = monitorEventLoopDelay({ resolution: SAMPLE_RESOLUTION_MS });
  delay.enable();
  let previousMaxNs = 0;
  const window = setInterval(() => {
    previousMaxNs = delay.max;
    delay.reset();
  }, options.windowMs ?? WINDOW_MS);
  window.unref();
  // The runtime the process installed: Runtime.instance() would install a fresh one if it were gone.
  const installed = Runtime._instance;
  return {
    check: async () => {
      const worstMs = Math.round(Math.max(previousMaxNs, delay.max) / 1e6);
      return reportOf({
        eventLoop: worstMs > limitMs ? `delayed ${worstMs} ms` : 'ok',
        runtime: await runtimeVerdict(installed, options.metricsBindAddress),
      });
    },
    close: () => {
      clearInterval(window);
      delay.disable();
    },
  };
}

/**
 * The native Temporal runtime answers. Every call of the bridge that runs on core's Tokio runtime asks the Temporal
 * server, but one task on it never does: the Prometheus exporter core serves METRICS_BIND_ADDRESS from. Its answer on
 * loopback proves core's threads still schedule work (the same threads poll and complete every task), and costs one
 * scrape per probe. Without an exporter, what is left is the runtime still being the one installed.
 */
async function runtimeVerdict(installed: Runtime | undefined, metricsBindAddress: string | undefined): Promise<string> {
  if (installed === undefined || Runtime._instance !== installed) return 'not installed';
  if (!metricsBindAddress) return 'ok';
  const status = await httpStatus(`${loopbackUrl(metricsBindAddress)}/metrics`, EXPORTER_TIMEOUT_MS);
  if (status === 200) return 'ok';
  return typeof status === 'number' ? `metrics exporter answered ${status}` : `metrics exporter ${status}`;
}

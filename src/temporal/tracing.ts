/**
 * OpenTelemetry tracing of the workers and the clients, as the SDK's `interceptors-opentelemetry` sample sets it
 * up for 1.24: one `OpenTelemetryPlugin` (client interceptors; workflow interceptor modules and the span sink on
 * workers; activity interceptors) over a tracer provider whose batch processor sends OTLP/HTTP (JSON).
 *
 * Off unless an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): then none of the OpenTelemetry packages is even loaded, and
 * `tracingPlugins()` is empty. Spans carry names, workflow, run and activity ids and failure messages, never
 * payloads (those stay encrypted in Temporal) nor HTTP headers: nothing instruments the HTTP clients.
 *
 * Workflows are traced only when their bundle is built with `plugins: tracingPlugins()`, as the worker's own
 * `bundleWorkflows` (src/worker/workers.ts) does; a bundle built ahead of time must be built the same way.
 */
import type { DiagLogger } from '@opentelemetry/api';
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { ConfigError, type Env } from '../config/env.js';
import type { Logger } from '../logger.js';

export const DEFAULT_SERVICE_NAME = 'etims-worker';

export interface TracingSettings {
  /** Where spans are POSTed, e.g. `http://otel-collector:4318/v1/traces`. */
  url: string;
  serviceName: string;
}

export interface Tracing {
  settings: TracingSettings;
  /** Sends the spans still batched (tests; a short-lived CLI before it exits). */
  flush(): Promise<void>;
  /** Flushes and stops: call once the workers (or the client) are done. Never rejects (a failure is logged). */
  shutdown(): Promise<void>;
}

let installed: { tracing: Tracing; plugins: OpenTelemetryPlugin[] } | undefined;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name}: must be an absolute http(s) URL, e.g. http://otel-collector:4318`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name}: must use http or https`);
  return url;
}

/**
 * The standard OpenTelemetry variables, read the way the OTLP exporters read them: the traces endpoint as
 * given, or the base endpoint plus `/v1/traces`. Undefined when tracing is off (no endpoint,
 * `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`). Only OTLP over HTTP with JSON is shipped, so any other
 * `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL` is a configuration error rather than spans sent where nobody listens.
 */
export function tracingSettings(env: Env): TracingSettings | undefined {
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  if (read(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return undefined;
  const tracesEndpoint = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  let url: string;
  if (tracesEndpoint !== undefined) {
    url = httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint).href;
  } else if (endpoint !== undefined) {
    const base = httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint);
    url = new URL(`${base.pathname.replace(/\/+$/, '')}/v1/traces`, base).href;
  } else {
    return undefined;
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = read(env, name);
    if (protocol === undefined) continue;
    if (protocol !== 'http/json')
      throw new ConfigError(`${name}: only http/json is supported by this worker (got ${JSON.stringify(protocol)})`);
    break;
  }
  return { url, serviceName: read(env, 'OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME };
}

/**
 * Sets tracing up once per process when configured; later calls return the same. Must run before the
 * workers and clients that should be traced are created (they take `tracingPlugins()` at creation).
 */
export async function installTracing(options: {
  settings: TracingSettings | undefined;
  logger?: Logger;
}): Promise<Tracing | undefined> {
  if (installed) return installed.tracing;
  const { settings } = options;
  if (!settings) return undefined;
  const [
    otel,
    { AsyncLocalStorageContextManager },
    { BasicTracerProvider, BatchSpanProcessor },
    { Resource },
    { OTLPTraceExporter },
    { ATTR_SERVICE_NAME },
    { OpenTelemetryPlugin },
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/semantic-conventions'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  // Export failures (collector down) would otherwise be silent. Messages only: their arguments may be requests.
  const diag = diagLogger(options.logger);
  otel.diag.setLogger(diag, otel.DiagLogLevel.WARN);
  const resource = new Resource({ [ATTR_SERVICE_NAME]: settings.serviceName });
  // Headers (a collector's API key) come from OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, read by the exporter itself.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // Global, as the interceptors use the global tracer and propagator; the context manager carries the active
  // span across awaits, so a client's start, the workflow and its activities form one trace.
  provider.register({ contextManager: new AsyncLocalStorageContextManager() });
  const tracing: Tracing = {
    settings,
    flush: () => provider.forceFlush(),
    // Spans lost at exit are not worth a failed shutdown.
    shutdown: () =>
      provider
        .shutdown()
        .catch((err: unknown) =>
          diag.warn(`spans not sent at shutdown: ${err instanceof Error ? err.message : String(err)}`),
        ),
  };
  installed = { tracing, plugins: [new OpenTelemetryPlugin({ resource, spanProcessor })] };
  const target = new URL(settings.url);
  options.logger?.info(
    { traces: `${target.origin}${target.pathname}`, serviceName: settings.serviceName },
    'OpenTelemetry tracing on',
  );
  return tracing;
}

/** The tracing plugin for `Worker.create` and `new Client` once `installTracing()` has set it up; else none. */
export function tracingPlugins(): OpenTelemetryPlugin[] {
  return installed ? [...installed.plugins] : [];
}

function diagLogger(logger: Logger | undefined): DiagLogger {
  const warn = (message: string) =>
    logger ? logger.warn({ component: 'opentelemetry' }, message) : console.error(`opentelemetry: ${message}`);
  const ignore = () => undefined;
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}

// Why: docs/deployment.md, "Tracing (OpenTelemetry)".
import type { DiagLogger } from '@opentelemetry/api';
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { ConfigError, readVariable as read, type Env } from '../config/env.js';
import type { Logger } from '../logger.js';

export type TracingSettings = NonNullable<ReturnType<typeof tracingSettings>>;

export interface Tracing {
  settings: TracingSettings;
  flush(): Promise<void>;
  /** Never rejects (a failure is logged). */
  shutdown(): Promise<void>;
}

let installed: { tracing: Tracing; plugins: OpenTelemetryPlugin[] } | undefined;

function httpUrl(name: string, value: string): URL {
  const url = URL.parse(value);
  if (!url) throw new ConfigError(`${name}: must be an absolute http(s) URL, e.g. http://otel-collector:4318`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name}: must use http or https`);
  return url;
}

/** Read as the OTLP exporters read them. A protocol other than http/json is refused: its spans would reach nobody. */
export function tracingSettings(env: Env) {
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
  const protocols = ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'];
  const name = protocols.find((n) => read(env, n) !== undefined);
  const protocol = name && read(env, name);
  if (protocol !== undefined && protocol !== 'http/json')
    throw new ConfigError(`${name}: only http/json is supported by this worker (got ${JSON.stringify(protocol)})`);
  return { url, serviceName: read(env, 'OTEL_SERVICE_NAME') ?? 'etims-worker' };
}

/** Once per process; before the workers and clients to trace are created (they take `tracingPlugins()` then). */
export async function installTracing(options: { settings: TracingSettings | undefined; logger?: Logger }) {
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
  // Global: the interceptors use the global tracer; the context manager keeps one trace across awaits.
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

export function tracingPlugins(): OpenTelemetryPlugin[] {
  return installed ? [...installed.plugins] : [];
}

function diagLogger(logger: Logger | undefined): DiagLogger {
  const warn = (message: string) =>
    logger ? logger.warn({ component: 'opentelemetry' }, message) : console.error(`opentelemetry: ${message}`);
  const ignore = () => undefined;
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}

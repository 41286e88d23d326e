/**
 * OpenTelemetry tracing (src/temporal/tracing.ts): off and not even loaded without an OTLP endpoint; with one,
 * a sale started by the typed client and run by the real workers arrives at an OTLP/HTTP receiver as one trace
 * (client start → workflow → activity), and no span carries a secret or customer data.
 */
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bundleWorkflowCode } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectSalesClient } from '../../src/client/sales-client.js';
import { ConfigError } from '../../src/config/env.js';
import { localTemporalSettings } from '../../src/temporal/connection.js';
import { installTracing, tracingPlugins, tracingSettings, type Tracing } from '../../src/temporal/tracing.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { eventually } from '../helpers/eventually.js';
import { closeTestEnv, getTestEnv, testLogger } from '../helpers/temporal.js';
import { DEMO, saleInput, startSaleStack, type SaleStack } from '../workflows/sale-stack.js';

const SERVICE_NAME = 'etims-worker-tracing-test';
const CUSTOMER = 'Achieng Otieno-Tracing';

function loadedOpenTelemetryModules(): string[] {
  return Object.keys(createRequire(import.meta.url).cache).filter((path) =>
    /[\\/]@opentelemetry[\\/]|interceptors-opentelemetry/.test(path),
  );
}

describe('tracingSettings', () => {
  it('is off without an OTLP endpoint, and when the SDK or the traces exporter is switched off', () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBeUndefined();
  });

  it('appends /v1/traces to the base endpoint, takes the traces endpoint as given, and names the service', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318' })).toEqual({
      url: 'http://otel-collector:4318/v1/traces',
      serviceName: 'etims-worker',
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/prefix/' })?.url).toBe(
      'https://otlp.example/prefix/v1/traces',
    );
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/v1/traces',
        OTEL_SERVICE_NAME: 'till-7',
      }),
    ).toEqual({ url: 'http://tempo:4318/v1/traces', serviceName: 'till-7' });
  });

  it('refuses an unusable endpoint or another OTLP protocol, naming the variable', () => {
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' })).toThrow(ConfigError);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' })).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: /,
    );
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toThrow(
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: /,
    );
    expect(() =>
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toThrow(/^OTEL_EXPORTER_OTLP_PROTOCOL: only http\/json/);
    expect(
      tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.url,
    ).toBe('http://c:4318/v1/traces');
  });

  it('installs nothing and loads no OpenTelemetry module when off', async () => {
    expect(await installTracing({ settings: tracingSettings({}) })).toBeUndefined();
    expect(tracingPlugins()).toEqual([]);
    expect(loadedOpenTelemetryModules()).toEqual([]);
  });
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

interface OtlpRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

/** An OTLP/HTTP collector stand-in: keeps every JSON body POSTed to /v1/traces. */
async function startReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const ok =
        req.method === 'POST' &&
        req.url === '/v1/traces' &&
        (req.headers['content-type'] ?? '').startsWith('application/json');
      if (ok) bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(ok ? 200 : 415, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function spansOf(bodies: string[]): Array<OtlpSpan & { service: string | undefined }> {
  return bodies.flatMap((body) =>
    ((JSON.parse(body) as OtlpRequest).resourceSpans ?? []).flatMap((rs) => {
      const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue;
      return (rs.scopeSpans ?? []).flatMap((ss) => (ss.spans ?? []).map((span) => ({ ...span, service })));
    }),
  );
}

describe('tracing with an OTLP endpoint', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tracing: Tracing | undefined;
  let stack: SaleStack;

  beforeAll(async () => {
    receiver = await startReceiver();
    tracing = await installTracing({
      settings: tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: SERVICE_NAME }),
      logger: pino({ level: 'silent' }),
    });
    // A bundle built ahead of time carries the workflow interceptors only if built with the plugins.
    const bundle = await bundleWorkflowCode({
      ...workflowSources(),
      logger: testLogger,
      plugins: tracingPlugins(),
    });
    const env = await getTestEnv();
    stack = await startSaleStack(
      { client: env.client, nativeConnection: env.nativeConnection, namespace: env.namespace ?? 'default' },
      bundle,
      { callbacks: true },
    );
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await closeTestEnv();
    await tracing?.shutdown();
    await receiver?.close();
  });

  it('sends one trace per sale, from the client start through the workflow to its activities', async () => {
    expect(tracing?.settings.url).toBe(`${receiver.url}/v1/traces`);
    const { sales, close } = await connectSalesClient({
      settings: localTemporalSettings(inject('temporalAddress'), inject('temporalNamespace')),
      // The stack's workers run without payload encryption.
      env: { PAYLOAD_ENCRYPTION: 'off' },
      taskQueue: stack.taskQueue,
    });
    let workflowId: string;
    try {
      const started = await sales.startSale(saleInput({ customer: { name: CUSTOMER } }));
      workflowId = started.workflowId;
      await stack.client.workflow.getHandle(workflowId).result();
    } finally {
      await close();
    }

    const spans = await eventually(
      async () => {
        await tracing!.flush();
        return spansOf(receiver.bodies);
      },
      (found) =>
        [
          'StartWorkflow:saleWorkflow',
          'RunWorkflow:saleWorkflow',
          'StartActivity:signSale',
          'RunActivity:signSale',
        ].every((name) => found.some((s) => s.name === name)),
      { timeoutMs: 20_000, intervalMs: 250, what: 'client, workflow and activity spans at the receiver' },
    );
    const named = (name: string) => spans.filter((s) => s.name === name);
    const [start] = named('StartWorkflow:saleWorkflow');
    const [runActivity] = named('RunActivity:signSale');
    const [startActivity] = named('StartActivity:signSale');
    // One trace: the activity run on the compliance worker descends from the client's start.
    expect(runActivity!.traceId).toBe(start!.traceId);
    expect(named('RunWorkflow:saleWorkflow').map((s) => s.traceId)).toContain(start!.traceId);
    expect(runActivity!.parentSpanId).toBe(startActivity!.spanId);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set([SERVICE_NAME]));
    expect(receiver.bodies.join('\n')).toContain(workflowId);

    // Names and ids only: no API key, callback URL or token, nor the (encrypted-at-rest) customer data.
    const everything = receiver.bodies.join('\n');
    for (const key of Object.values(DEMO.keys)) expect(everything).not.toContain(key);
    expect(everything).not.toContain('/callbacks/');
    expect(everything).not.toContain(CUSTOMER);
  }, 60_000);
});

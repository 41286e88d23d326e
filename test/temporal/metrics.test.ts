/**
 * The worker's Prometheus endpoint (METRICS_BIND_ADDRESS) as an operator scrapes it: the SDK's metrics and the
 * worker's own (sales, API calls, callback verdicts), counted by a real sale on a real worker process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { payloadEncryptionFromEnv } from '../../src/codec/data-converter.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { DEMO_ACCOUNTING_CLIENT_SECRET } from '../../sandbox/accounting/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import { SALE_WORKFLOW_TYPE, saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { eventually } from '../helpers/eventually.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { sandboxWorkerEnv } from '../helpers/worker-child.js';
import { freePort } from '../../tools/free-port.js';

const PAYLOAD_KEYS = 'test-1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';
const CUSTOMER = 'Wanjiru Kamau-Metrics';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

let sandbox: Sandbox;
let worker: ChildProcess | undefined;
let output = '';
let metricsUrl: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  const port = await freePort();
  const callbackPort = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  worker = spawn(tsx, ['src/cli/worker.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      LOG_LEVEL: 'info',
      ...sandboxWorkerEnv(sandbox),
      ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
      COMPLIANCE_REQUESTS_PER_MINUTE: '3000',
      WORKER_MAKE_CURRENT: 'true',
      METRICS_BIND_ADDRESS: `127.0.0.1:${port}`,
      PAYLOAD_KEYS,
      // The sandbox calls the receiver back on loopback, so its verdicts are counted too.
      COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
      CALLBACK_PUBLIC_BASE_URL: `http://127.0.0.1:${callbackPort}`,
      CALLBACK_SECRET: 'metrics-test-callback-secret-0123456789',
      CALLBACK_HOST: '127.0.0.1',
      CALLBACK_PORT: String(callbackPort),
    },
  });
  worker.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  worker.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await eventually(
    () => output,
    (text) => text.includes('worker running'),
    { timeoutMs: 90_000, intervalMs: 200, what: 'worker running' },
  );
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker!.once('close', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await sandbox?.close();
});

describe('METRICS_BIND_ADDRESS', () => {
  it("serves the SDK's metrics and the worker's own on /metrics, counting a real sale", async () => {
    expect(output).toContain('Prometheus metrics served');
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const client = new Client({
        connection,
        namespace: inject('temporalNamespace'),
        dataConverter: payloadEncryptionFromEnv({ PAYLOAD_KEYS }).dataConverter,
      });
      const input: SaleInput = {
        businessId: DEMO.businesses.nairobi,
        traderInvoiceNumber: invoiceNumber(),
        saleDate: '2026-11-21',
        lines: [{ itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 }],
        customer: { name: CUSTOMER },
        options: { refundWindowDays: 0 },
      };
      const handle = await client.workflow.start(SALE_WORKFLOW_TYPE, {
        taskQueue: WORKFLOW_TASK_QUEUE,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      });
      await handle.result();
      // The worker and the client encrypt: the raw history, read without the codec, holds no customer data.
      const raw = new Client({ connection, namespace: inject('temporalNamespace') });
      const history = historyToJSON(await raw.workflow.getHandle(handle.workflowId).fetchHistory());
      // Proto JSON keeps payload bytes (metadata and data) in base64: look at them decoded.
      const decoded = history.replace(/"([A-Za-z0-9+/]{4,}={0,2})"/g, (_m, data: string) =>
        Buffer.from(data, 'base64').toString('latin1'),
      );
      expect(decoded).toContain('binary/encrypted');
      expect(decoded).not.toContain(CUSTOMER);
    } finally {
      await connection.close();
    }
    const metrics = await eventually(
      async () => (await fetch(metricsUrl)).text(),
      (text) =>
        /^etims_sales_signed_total\{[^}]*\} [1-9]/m.test(text) &&
        /^etims_callbacks_total\{[^}]*verdict="(accepted|ignored|duplicate)"[^}]*\} [1-9]/m.test(text),
      { timeoutMs: 20_000, intervalMs: 500, what: 'etims_sales_signed_total and etims_callbacks_total on /metrics' },
    );
    expect(metrics).toMatch(/^etims_api_calls_total\{[^}]*outcome="ok"[^}]*service="compliance"[^}]*\} [1-9]/m);
    // Rate budget in use: the budget (3000 a minute, no fixed headroom = 50 a second), the requests sent,
    // and the service's own count of what is left of its window (the sandbox allows this application 120).
    expect(metrics).toMatch(/^etims_compliance_rate_budget_per_second\{[^}]*task_queue="sales"[^}]*\} 50(\.0+)?$/m);
    expect(metrics).toMatch(/^etims_compliance_requests_total\{[^}]*operation="createSale"[^}]*\} [1-9]/m);
    const remaining = /^etims_compliance_rate_limit_remaining(?:\{[^}]*\})? (\d+(?:\.\d+)?)$/m.exec(metrics);
    expect(remaining, 'etims_compliance_rate_limit_remaining on /metrics').not.toBeNull();
    expect(Number(remaining![1])).toBeGreaterThanOrEqual(0);
    expect(Number(remaining![1])).toBeLessThan(120);
    expect(metrics).toMatch(/^temporal_workflow_completed_total\{/m);
    // Durations in seconds, named so (Prometheus' conventions, set on the SDK's exporter).
    expect(metrics).toMatch(/^temporal_activity_execution_latency_seconds_bucket\{/m);
    // One label style: snake_case everywhere, no camelCase from the SDK's workflow or activity meters.
    expect(metrics).not.toMatch(/[{,](taskQueue|activityType|workflowType)=/);
    // Rare events are there at zero before they happen, so increase() sees their first one.
    expect(metrics).toMatch(/^etims_sales_cancelled_total\{[^}]*task_queue="sales"[^}]*\} 0$/m);
    expect(metrics).toMatch(/^etims_sales_parked_total\{[^}]*code="authority_rejected"[^}]*\} 0$/m);
    // Nothing secret reaches the scrape.
    expect(metrics).not.toContain(DEMO.keys.nairobi);
    expect(metrics).not.toContain('metrics-test-callback-secret');
  }, 120_000);
});

/**
 * What every measurement shares: one Temporal server (a dev server started through the project's CLI resolver, or
 * TEMPORAL_ADDRESS), a client and worker connection with payload encryption as a deployment has it, the workflow
 * bundles (built once), a sandbox per measurement and in-process sale workers on their own task queues.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, type Connection, type WorkflowHandle } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type NativeConnection,
  type WorkflowBundle,
} from '@temporalio/worker';
import { pino } from 'pino';
import { SalesClient } from '../../src/client/sales-client.js';
import { payloadEncryptionFromEnv, type PayloadEncryption } from '../../src/codec/data-converter.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { loadPurchasesConfig } from '../../src/config/purchases.js';
import { loadAccountingWorkerConfig } from '../../src/config/accounting-worker.js';
import { loadStockReporting } from '../../src/config/stock-reporting.js';
import { loadWorkerConfig, type WorkerConfig } from '../../src/config/worker.js';
import type { PurchaseEventSink } from '../../src/purchases/event-sink.js';
import { loadReconciliationConfig } from '../../src/config/reconciliation.js';
import { loadVersioningSettings } from '../../src/config/versioning.js';
import { singleKeyTenants } from '../../src/tenants/single-key.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { DEMO_ACCOUNTING_API_KEY } from '../../sandbox/accounting/default-fixture.js';
import type { ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import { DEMO, defaultComplianceFixtureInput } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import type { ServiceEndpoints } from '../../src/services/endpoints.js';
import {
  connectClient,
  connectNative,
  loadTemporalSettings,
  localTemporalSettings,
  type TemporalSettings,
} from '../../src/temporal/connection.js';
import { startDevServer, type DevServer } from '../temporal-cli/dev-server.js';
import { projectSearchAttributes, toCliSearchAttributes } from '../../src/contracts/search-attributes.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { bundleFloor, createFloorActivities } from './floor-activity.js';
import { FLOOR_WORKFLOW_TYPE } from './floor-workflow.js';
import { toBenchEvents, type BenchEvent } from './history.js';

export { DEMO };

/** Progress lines go to stderr, so stdout is the report alone. */
export const progress = (message: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

export interface BenchTemporal {
  server: 'dev' | 'postgres';
  settings: TemporalSettings;
  client: Client;
  native: NativeConnection;
  encryption: PayloadEncryption;
  /** PAYLOAD_KEYS for worker processes, so they encrypt with the bench's key. */
  payloadKeys: string;
  saleBundle: WorkflowBundle;
  floorBundle: WorkflowBundle;
  /** PID of the dev server process, when the bench started it. */
  devServer: DevServer | undefined;
  /** The history of a workflow, activity results decoded. */
  events(workflowId: string): Promise<BenchEvent[]>;
  close(): Promise<void>;
}

/** TEMPORAL_ADDRESS set: that server (`postgres` unless BENCH_SERVER says otherwise); else a dev server started here. */
export async function openTemporal(): Promise<BenchTemporal> {
  // Terminating a flood mid-run makes the core warn about completions of ended workflows: expected, kept out of the output.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const external = process.env.TEMPORAL_ADDRESS?.trim();
  let devServer: DevServer | undefined;
  let settings: TemporalSettings;
  if (external) {
    settings = loadTemporalSettings(process.env);
  } else {
    devServer = await startDevServer({
      headless: true,
      searchAttributes: toCliSearchAttributes(projectSearchAttributes),
    });
    settings = localTemporalSettings(devServer.address, devServer.namespace);
  }
  const server =
    process.env.BENCH_SERVER === 'dev' || process.env.BENCH_SERVER === 'postgres'
      ? process.env.BENCH_SERVER
      : external
        ? 'postgres'
        : 'dev';
  const payloadKeys = `bench-1:${randomBytes(32).toString('base64')}`;
  const encryption = payloadEncryptionFromEnv({ PAYLOAD_KEYS: payloadKeys });
  let connection: Connection | undefined;
  let native: NativeConnection | undefined;
  try {
    connection = await connectClient(settings);
    native = await connectNative(settings);
    const bundleLogger = new DefaultLogger('ERROR');
    const saleBundle = await bundleWorkflowCode({ ...workflowSources(), logger: bundleLogger });
    const floorBundle = await bundleFloor();
    const client = new Client({ connection, namespace: settings.namespace, dataConverter: encryption.dataConverter });
    const nativeConnection = native;
    const openConnection = connection;
    return {
      server,
      settings,
      client,
      native: nativeConnection,
      encryption,
      payloadKeys,
      saleBundle,
      floorBundle,
      devServer,
      events: async (workflowId) =>
        toBenchEvents((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [], encryption.codec),
      close: async () => {
        await nativeConnection.close();
        await openConnection.close();
        await devServer?.stop();
      },
    };
  } catch (err) {
    await native?.close();
    await connection?.close();
    await devServer?.stop();
    throw err;
  }
}

/** The retail application of the demo world: both demo businesses and the organisation-wide key belong to it. */
export const RETAIL_APP = DEMO.applications.retail;

/**
 * The demo world with its rate limit set (requests per window of `windowMs`, default a minute) and a short authority
 * delay and callback schedule, so the async path takes a fraction of a second.
 */
export function benchFixture(options: {
  requestsPerWindow: number;
  windowMs?: number;
  adjust?: (f: ComplianceFixtureInput) => void;
}): ComplianceFixtureInput {
  const fixture = structuredClone(defaultComplianceFixtureInput);
  fixture.applications = (fixture.applications ?? []).map((a) =>
    a.id === RETAIL_APP ? { ...a, requestsPerMinute: options.requestsPerWindow } : a,
  );
  if (options.windowMs !== undefined) fixture.rateLimitWindowMs = options.windowMs;
  fixture.authority = { ...fixture.authority, asyncDelayMs: 300 };
  fixture.callbacks = { retryScheduleMs: [0, 200, 500], timeoutMs: 1_000 };
  options.adjust?.(fixture);
  return fixture;
}

export const startBenchSandbox = (fixture: ComplianceFixtureInput): Promise<Sandbox> =>
  startSandbox({ fixture: { compliance: fixture } });

/** How a worker reaches the sandbox: the organisation-wide key, as a deployment serving several businesses would. */
export function sandboxEndpoints(
  sandbox: Sandbox,
  options: { callbacks: boolean },
): Pick<ServiceEndpoints, 'compliance' | 'accounting'> {
  return {
    compliance: {
      baseUrl: sandbox.complianceUrl,
      apiKey: DEMO.keys.orgWide,
      businessId: DEMO.businesses.nairobi,
      timeoutMs: 30_000,
      allowLoopbackCallbacks: options.callbacks,
    },
    accounting: {
      baseUrl: sandbox.accountingUrl,
      apiKey: DEMO_ACCOUNTING_API_KEY,
      clientSecret: undefined,
      clientId: undefined,
      webhookSecret: undefined,
      signRequests: false,
      signQuery: false,
      timeoutMs: 30_000,
    },
  };
}

/** Environment of a worker process (`tsx src/cli/worker.ts`) on this sandbox and server. */
export function workerProcessEnv(
  t: BenchTemporal,
  sandbox: Sandbox,
  requestsPerMinute: number,
): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: t.settings.address ?? '',
    TEMPORAL_NAMESPACE: t.settings.namespace,
    COMPLIANCE_BASE_URL: sandbox.complianceUrl,
    COMPLIANCE_API_KEY: DEMO.keys.orgWide,
    COMPLIANCE_BUSINESS_ID: DEMO.businesses.nairobi,
    ACCOUNTING_BASE_URL: sandbox.accountingUrl,
    ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
    COMPLIANCE_REQUESTS_PER_MINUTE: String(requestsPerMinute),
    PAYLOAD_KEYS: t.payloadKeys,
    LOG_LEVEL: 'info',
    // The bench's workers are the only build its server has: made current, as the local stack's are.
    WORKER_MAKE_CURRENT: 'true',
    // One build for every process of the section: a worker started again after a kill is the same build even when a
    // commit lands in the work tree meanwhile (the derived id names the commit; a new one would leave the workflows
    // pinned to the killed build waiting for it).
    TEMPORAL_WORKER_BUILD_ID: loadVersioningSettings(process.env).buildId,
  };
}

const discardSink: PurchaseEventSink = {
  description: 'discard (bench)',
  deliver: async () => {},
  close: async () => {},
};

export interface BenchWorkers {
  taskQueue: string;
  sales: SalesClient;
  /** Starts a floor workflow on the floor worker's queue (with `floor: true`); `matched`: its call is not eager. */
  startFloor(matched?: boolean): Promise<WorkflowHandle>;
  /** Runs a floor workflow by `executeWorkflow` until its result is in hands (with `floor: true`); answers its id. */
  executeFloor(matched?: boolean): Promise<{ workflowId: string; result: unknown }>;
  stop(): Promise<void>;
}

/** A bench worker process's settings around its worker config: no purchases, no links, its own deployment. */
export function benchWorkerSettings(worker: WorkerConfig) {
  return {
    worker,
    activitiesPerSecond: { accounting: loadAccountingWorkerConfig(process.env).activitiesPerSecond },
    purchases: loadPurchasesConfig({}),
    reconciliation: loadReconciliationConfig({}),
    // Each run's queue is a deployment of its own, made current by the run.
    versioning: { ...loadVersioningSettings(process.env), makeCurrent: true },
  };
}

/**
 * The sale workers of one worker process, run in this process on a task queue of their own (and, with `floor`,
 * the floor worker beside them, on its own queue): what src/cli/worker.ts runs, with the bench's sandbox and budget.
 */
export async function startBenchWorkers(
  t: BenchTemporal,
  sandbox: Sandbox,
  options: {
    requestsPerMinute: number;
    callbacks?: boolean;
    floor?: boolean;
    purchases?: boolean;
    /** STOCK_MAX_DELAY of the coalesced stock reporting (default: the worker's, 180 s). */
    stockMaxDelay?: string;
  },
): Promise<BenchWorkers> {
  const taskQueue = `bench-${randomUUID().slice(0, 8)}`;
  const floorQueue = `${taskQueue}.floor`;
  const logger = pino({ level: 'silent' });
  const worker = loadWorkerConfig({
    ...process.env,
    COMPLIANCE_REQUESTS_PER_MINUTE: String(options.requestsPerMinute),
  });
  const tenants = singleKeyTenants(sandboxEndpoints(sandbox, { callbacks: options.callbacks ?? false }), {
    requestsPerMinute: options.requestsPerMinute,
  });
  const settings = {
    ...benchWorkerSettings(worker),
    ...(options.stockMaxDelay
      ? { stockReporting: loadStockReporting({ STOCK_MAX_DELAY: options.stockMaxDelay }) }
      : {}),
  };
  const sale = await WorkerProcess.start(settings, {
    brought: { connection: t.native, client: t.client, tenants },
    logger,
    taskQueue,
    workflowBundle: t.saleBundle,
    ...(options.purchases ? { purchasesSink: discardSink } : {}),
  });
  const running = [sale.run()];
  await sale.routing;
  let floorWorker: Worker | undefined;
  let floorClient: ComplianceClient | undefined;
  if (options.floor) {
    floorClient = new ComplianceClient({
      baseUrl: sandbox.complianceUrl,
      apiKey: DEMO.keys.orgWide,
      businessId: DEMO.businesses.nairobi,
    });
    floorWorker = await Worker.create({
      connection: t.native,
      namespace: t.settings.namespace,
      taskQueue: floorQueue,
      workflowBundle: t.floorBundle,
      activities: createFloorActivities(floorClient),
      dataConverter: t.encryption.dataConverter,
    });
    running.push(floorWorker.run());
  }
  return {
    taskQueue,
    sales: new SalesClient(t.client, { taskQueue }),
    startFloor: (matched = false) =>
      t.client.workflow.start(FLOOR_WORKFLOW_TYPE, {
        taskQueue: floorQueue,
        workflowId: `floor-${randomUUID()}`,
        args: [{ matched }],
      }),
    executeFloor: async (matched = false) => {
      const workflowId = `floor-${randomUUID()}`;
      const args = [{ matched }];
      return {
        workflowId,
        result: await t.client.workflow.execute(FLOOR_WORKFLOW_TYPE, { taskQueue: floorQueue, workflowId, args }),
      };
    },
    stop: async () => {
      sale.shutdown();
      floorWorker?.shutdown();
      await Promise.allSettled(running);
      await sale.close();
      await floorClient?.close();
    },
  };
}

/** A sale of `lines` to `businessId` that closes as soon as it is signed and its stock reported (no refund window). */
export function benchSale(
  traderInvoiceNumber: string,
  lines: SaleInput['lines'],
  businessId: string = DEMO.businesses.nairobi,
): SaleInput {
  return { businessId, traderInvoiceNumber, saleDate: '2026-11-21', lines, options: { refundWindowDays: 0 } };
}

/** Two stock-tracked, registered Nairobi items (L = 2). */
export const NAIROBI_LINES: SaleInput['lines'] = [
  { itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 },
  { itemId: DEMO.items.milk, quantity: 1, unitPrice: 65 },
];

/** Two stock-tracked, registered Mombasa items. */
export const MOMBASA_LINES: SaleInput['lines'] = [
  { itemId: DEMO.items.mombasaWater, quantity: 1, unitPrice: 50 },
  { itemId: DEMO.items.mombasaFish, quantity: 1, unitPrice: 780 },
];

export const saleHandle = (t: BenchTemporal, sale: SaleInput) =>
  t.client.workflow.getHandle(saleWorkflowId(sale.businessId, sale.traderInvoiceNumber));

/** A short unique tag per run, so invoice numbers never collide on a server that outlives the bench. */
export const runTag = () => randomUUID().slice(0, 8).toUpperCase();

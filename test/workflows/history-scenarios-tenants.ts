/**
 * The sales of a worker serving a tenants file, whose histories are committed under test/histories/ beside those
 * of the single-key worker (history-scenarios.ts): the placement (workflows/placement.ts) on each of its paths. A single-key worker places every business as `default` with the
 * business as fairness key; a tenants worker places it with its application's rate window, either on the shared
 * compliance queue with the window as fairness key, or on the window's own queue with the business as key when the
 * window serves several businesses; or refuses it (`business_not_served`), and the sale waits until the file serves it.
 *
 * One real worker process (WorkerProcess.start with tenants, reading its file again every second as a fleet would)
 * against the sandbox over HTTP; the file is rewritten between scenarios as an operator onboarding a merchant
 * would. tools/record-histories.ts runs them; no vitest here.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import { pino } from 'pino';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import {
  getSaleStateQuery,
  SALE_WORKFLOW_TYPE,
  saleWorkflowId,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { Application } from '../../src/contracts/search-attributes.js';
import { complianceTaskQueue, windowComplianceTaskQueue } from '../../src/contracts/task-queues.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { eventually } from '../helpers/eventually.js';
import { scenarioFixture, type RecordedRun } from './history-scenarios.js';
import { DEMO, invoiceNumber, type SaleWorkflowType, type TemporalAccess } from './sale-stack.js';

const B = DEMO.businesses;
const K = DEMO.keys;

/** The tenants file's entries the scenarios write; the demo keys are sandbox-only, and never enter a history. */
interface ComplianceEntry {
  application: string;
  apiKey: { value: string };
  baseUrl: string;
  requestsPerMinute?: number;
  businesses?: string[];
}

function expectThat(ok: boolean, what: string, value: unknown): void {
  if (!ok)
    throw new Error(
      `tenants scenario went another way than recorded histories need: ${what} (${JSON.stringify(value)})`,
    );
}

function sale(businessId: string, itemId: string): SaleInput {
  return {
    businessId,
    traderInvoiceNumber: invoiceNumber(),
    saleDate: '2026-11-21',
    lines: [{ itemId, quantity: 1, unitPrice: 250 }],
    options: { refundWindowDays: 0 },
  };
}

/** Where a history's compliance activities were scheduled: their queues and fairness keys. */
async function routesOf(
  handle: WorkflowHandle,
): Promise<{ queues: Set<string | null | undefined>; fairnessKeys: Set<string | null | undefined> }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : [],
  );
  return {
    queues: new Set(scheduled.map((a) => a.taskQueue?.name)),
    fairnessKeys: new Set(scheduled.map((a) => a.priority?.fairnessKey)),
  };
}

export async function runTenantsScenarios(temporal: TemporalAccess, bundle: WorkflowBundle): Promise<RecordedRun[]> {
  const { client } = temporal;
  const sandbox: Sandbox = await startSandbox({ fixture: { compliance: scenarioFixture() } });
  const dir = await mkdtemp(join(tmpdir(), 'record-tenants-'));
  const tenantsFile = join(dir, 'tenants.json');
  const retail = (businesses: string[]): ComplianceEntry => ({
    application: 'retail',
    apiKey: { value: K.orgWide },
    baseUrl: sandbox.complianceUrl,
    businesses,
  });
  const other: ComplianceEntry = {
    application: 'other',
    apiKey: { value: K.otherApplication },
    baseUrl: sandbox.complianceUrl,
    requestsPerMinute: 60,
  };
  const writeTenants = (compliance: ComplianceEntry[]) =>
    writeFile(tenantsFile, JSON.stringify({ compliance }, null, 2));

  let workerProcess: WorkerProcess | undefined;
  let running: Promise<void> | undefined;
  try {
    await writeTenants([retail([B.nairobi])]);
    // Polling only (no loopback receiver): what a tenants worker against the real service does without a public URL.
    const settings = loadWorkerSettings({
      PAYLOAD_ENCRYPTION: 'off',
      TENANTS_FILE: tenantsFile,
      TENANTS_RELOAD_SECONDS: '1',
      WORKER_MAKE_CURRENT: 'true',
    });
    const taskQueue = `tenants-${randomUUID()}`;
    workerProcess = await WorkerProcess.start(settings, {
      brought: { connection: temporal.nativeConnection, client, tenants: settings.tenants! },
      logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      taskQueue,
      workflowBundle: bundle,
    });
    running = workerProcess.run();
    const worker = workerProcess;
    const served = (businessId: string, application: string) =>
      eventually(
        async () => worker.tenants?.current().applicationOf(businessId),
        (a) => a === application,
        { timeoutMs: 20_000, intervalMs: 100, what: `${businessId} served by ${application}` },
      );
    const start = (input: SaleInput) =>
      client.workflow.start<SaleWorkflowType>(SALE_WORKFLOW_TYPE, {
        taskQueue,
        workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
        args: [input],
      });
    const signed = async (handle: WorkflowHandle<SaleWorkflowType>, what: string) => {
      const state: SaleState = await handle.result();
      expectThat(state.sale?.status === 'completed', `${what} signed`, state.step);
    };
    const application = async (handle: WorkflowHandle) =>
      (await handle.describe()).typedSearchAttributes.get(Application);

    // A business no entry serves: the sale waits at once, having sent nothing.
    const notServed = await start(sale(B.kisumu, DEMO.items.kisumuRice));
    const waiting = await eventually(
      () => notServed.query(getSaleStateQuery),
      (s) => s.step === 'awaiting_business',
      { timeoutMs: 20_000, intervalMs: 200, what: 'the Kisumu sale waiting for its business' },
    );
    expectThat(waiting.parked === null && waiting.awaitingBusiness !== undefined, 'waiting, not parked', waiting);

    // The other application onboarded: one business in its window, so the shared queue with the window as key.
    await writeTenants([retail([B.nairobi]), other]);
    await served(B.kisumu, 'other');
    const shared = await start(sale(B.kisumu, DEMO.items.kisumuRice));
    await signed(shared, 'the Kisumu sale');
    const sharedRoutes = await routesOf(shared);
    expectThat(
      sharedRoutes.queues.size === 1 &&
        sharedRoutes.queues.has(complianceTaskQueue(taskQueue)) &&
        sharedRoutes.fairnessKeys.size === 1 &&
        sharedRoutes.fairnessKeys.has(DEMO.applications.other),
      'the Kisumu sale on the shared queue, keyed by its window',
      { queues: [...sharedRoutes.queues], fairnessKeys: [...sharedRoutes.fairnessKeys] },
    );
    expectThat(
      (await application(shared)) === 'other',
      'the Kisumu sale’s Application is other',
      await application(shared),
    );

    // The waiting sale, once its business is served, goes on by itself: the worker tells it after its reload.
    await signed(notServed, 'the waiting Kisumu sale');
    expectThat(
      (await application(notServed)) === 'other',
      'the waiting sale’s Application is other',
      await application(notServed),
    );

    // Retail's window now serves two businesses: its own queue, each business its own fairness key.
    await writeTenants([retail([B.nairobi, B.mombasa]), other]);
    await served(B.mombasa, 'retail');
    const own = await start(sale(B.mombasa, DEMO.items.mombasaWater));
    await signed(own, 'the Mombasa sale');
    const ownRoutes = await routesOf(own);
    const ownQueue = windowComplianceTaskQueue(taskQueue, DEMO.applications.retail);
    expectThat(
      ownRoutes.queues.size === 1 &&
        ownRoutes.queues.has(ownQueue) &&
        ownRoutes.fairnessKeys.size === 1 &&
        ownRoutes.fairnessKeys.has(B.mombasa),
      'the Mombasa sale on its window’s own queue, keyed by its business',
      { queues: [...ownRoutes.queues], fairnessKeys: [...ownRoutes.fairnessKeys] },
    );
    expectThat(
      (await application(own)) === 'retail',
      'the Mombasa sale’s Application is retail',
      await application(own),
    );

    return [
      { name: 'sale-tenant-shared-queue', handle: shared },
      { name: 'sale-tenant-own-queue', handle: own },
      { name: 'sale-tenant-not-served-then-served', handle: notServed },
    ];
  } finally {
    try {
      if (workerProcess) {
        workerProcess.shutdown();
        try {
          await running;
        } finally {
          await workerProcess.close();
        }
      }
    } finally {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    }
  }
}

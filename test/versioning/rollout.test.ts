/**
 * Rolling a new build out and back, end to end on the run's dev server: build A (the real workflows) serves with
 * work in flight at every step a sale can wait in, a stock ledger holding lines, an outage watch holding a sale and
 * a catalogue import between its chunks;
 * build B (test/versioning/build-b-workflows.ts, every workflow type changed incompatibly) starts beside it and is
 * made current. What started on A finishes on A, the ledger, the watch and the import continue as new onto B with
 * what they carry, new sales run on B, A is shown drained and stops. Then the same the other way. The operator's side of it:
 * docs/deployment.md, "Rolling out a new build".
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client, WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Sandbox } from '../../sandbox/server.js';
import { deploymentNameFor } from '../../src/config/versioning.js';
import {
  addCatalogueChunkUpdate,
  CATALOGUE_IMPORT_WORKFLOW_TYPE,
  catalogueChunkWorkflowId,
  catalogueImportWorkflowId,
  type CatalogueChunk,
} from '../../src/contracts/catalogue-import.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { getOutageWatchStateQuery, OUTAGE_WATCH_WORKFLOW_TYPE } from '../../src/contracts/outage-watch.js';
import {
  getSaleStateQuery,
  itemFixedUpdate,
  saleWorkflowId,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { getStockLedgerStateQuery } from '../../src/contracts/stock-ledger.js';
import { resolveServices } from '../../src/services/endpoints.js';
import { versionCommands, type VersionRouting } from '../../src/worker/deployment.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { workflowSources } from '../../src/temporal/workflow-bundle.js';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';
import { eventually } from '../helpers/eventually.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';
import { singleKeyTestTenants, testWorkerSettings } from '../helpers/worker-settings.js';
import { ledgerHandle, type LedgerAt } from '../workflows/ledger-reads.js';
import { addItemCopy, DEMO, fastFixture, invoiceNumber, saleInput } from '../workflows/sale-stack.js';

const { VersionDrainageStatus } = proto.temporal.api.enums.v1;
const UNHANDLED_COMMAND =
  proto.temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND;
const STOCK = { service: 'compliance', method: 'POST', path: '/v1/stock/adjustments' } as const;
const ITEMS = { service: 'compliance', method: 'POST', path: '/v1/items' } as const;
const nairobi = DEMO.businesses.nairobi;

interface Build {
  buildId: string;
  process: WorkerProcess;
  routing: VersionRouting;
  stop(): Promise<void>;
}

let client: Client;
let namespace: string;
let sandbox: Sandbox;
let closeServices: () => Promise<void>;
let startBuild: (buildId: string, bundle: WorkflowBundle) => Promise<Build>;
let bundleA: WorkflowBundle;
let bundleB: WorkflowBundle;
const taskQueue = uniqueTaskQueue('rollout');
const deploymentName = deploymentNameFor(taskQueue);
const running: Build[] = [];
let spice = '';

beforeAll(async () => {
  const env = await getTestEnv();
  client = env.client;
  namespace = env.namespace ?? 'default';
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const fixture = fastFixture((f) => {
    spice = addItemCopy(f, DEMO.items.spiceMix, 'rollout');
  });
  const services = await resolveServices({ compliance: undefined, accounting: undefined, logLevel: 'silent' }, logger, {
    sandboxFixture: { compliance: fixture },
  });
  sandbox = services.sandbox as Sandbox;
  closeServices = () => services.close();
  [bundleA, bundleB] = await Promise.all([
    workflowBundle(),
    bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./build-b-workflows.ts', import.meta.url)),
      preloadModules: workflowSources().preloadModules,
      logger: testLogger,
    }),
  ]);
  startBuild = async (buildId, bundle) => {
    // As an operator's second command would: the build is made current once its workers poll.
    const settings = testWorkerSettings({
      worker: { complianceRequestsPerMinute: 3_000, complianceRateHeadroom: 0 },
      versioning: { buildId, makeCurrent: true },
    });
    const started = await WorkerProcess.start(settings, {
      brought: { connection: env.nativeConnection, client, tenants: singleKeyTestTenants(services, settings) },
      logger,
      taskQueue,
      workflowBundle: bundle,
    });
    const run = started.run();
    const build: Build = {
      buildId,
      process: started,
      routing: await started.routing,
      stop: async () => {
        running.splice(running.indexOf(build), 1);
        started.shutdown();
        await run;
        await started.close();
      },
    };
    running.push(build);
    return build;
  };
}, 120_000);

afterAll(async () => {
  for (const build of [...running].reverse()) await build.stop().catch(() => undefined);
  await closeServices?.();
  await closeTestEnv();
});

const ledgerAt = (): LedgerAt => ({ client, taskQueue, businessId: nairobi, branchId: DEMO.branches.nairobiCbd });
/** The application's watch on this queue, as visibility lists it. */
async function watchId(): Promise<string | undefined> {
  const query = `WorkflowType = '${OUTAGE_WATCH_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}'`;
  for await (const watch of client.workflow.list({ query })) return watch.workflowId;
  return undefined;
}

function startSale(input: SaleInput): Promise<WorkflowHandle> {
  return client.workflow.start('saleWorkflow', {
    taskQueue,
    workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
    args: [input],
  });
}

const saleState = (handle: WorkflowHandle) => handle.query(getSaleStateQuery);

function saleWhen(handle: WorkflowHandle, predicate: (s: SaleState) => boolean, what: string): Promise<SaleState> {
  return eventually(
    () => saleState(handle).catch(() => undefined),
    (s) => s !== undefined && predicate(s),
    { timeoutMs: 30_000, what },
  ).then((s) => s!);
}

/** The build the execution's (or run's) versioning info names. */
async function buildOf(handle: WorkflowHandle): Promise<string | undefined> {
  const described = await handle.describe();
  return described.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId ?? undefined;
}

/** The latest run of `workflowId` once it runs on `buildId`. */
async function runOn(workflowId: string, buildId: string, what: string): Promise<WorkflowHandle> {
  const described = await eventually(
    async () => {
      const d = await client.workflow.getHandle(workflowId).describe();
      return { runId: d.runId, buildId: d.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId };
    },
    (d) => d.buildId === buildId,
    { timeoutMs: 60_000, intervalMs: 250, what },
  );
  return client.workflow.getHandle(workflowId, described.runId);
}

/** Every workflow task of the run completed on `buildId`, none failed (no non-determinism), and it has closed. */
async function ranOnlyOn(handle: WorkflowHandle, buildId: string): Promise<void> {
  const events = (await handle.fetchHistory()).events ?? [];
  const completed = events.flatMap((e) => (e.workflowTaskCompletedEventAttributes ? [e] : []));
  expect(completed.length, handle.workflowId).toBeGreaterThan(0);
  for (const event of completed)
    expect(event.workflowTaskCompletedEventAttributes?.deploymentVersion, handle.workflowId).toMatchObject({
      deploymentName,
      buildId,
    });
  // A completion the server turned down because a signal came meanwhile (UnhandledCommand) is Temporal's ordinary
  // retry, not a failure of the code.
  const failed = events.flatMap((e) => {
    const attributes = e.workflowTaskFailedEventAttributes;
    return attributes && attributes.cause !== UNHANDLED_COMMAND ? [attributes.failure?.message ?? ''] : [];
  });
  expect(failed, handle.workflowId).toEqual([]);
  const { status } = await handle.describe();
  expect(status.name, handle.workflowId).not.toBe('RUNNING');
}

const drainage = (buildId: string) =>
  client.workflowService
    .describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId } })
    .then((d) => d.workerDeploymentVersionInfo?.drainageInfo?.status);

/** `temporal worker deployment <command> --deployment-name … --build-id …`, as docs/deployment.md has it run. */
async function deploymentCli(command: string, buildId: string, ...more: string[]): Promise<string> {
  const { path } = await resolveTemporalExecutable('temporal', { install: false });
  const target = ['--deployment-name', deploymentName, '--build-id', buildId];
  const server = ['--address', inject('temporalAddress'), '--namespace', namespace];
  const { stdout } = await promisify(execFile)(path, ['worker', 'deployment', command, ...target, ...more, ...server]);
  return stdout;
}

/** Two rows the service creates and registers at once. */
function catalogueRows(importId: string, chunk: number): CatalogueChunk['rows'] {
  return [0, 1].map((i) => ({
    line: chunk * 2 + i + 2,
    row: {
      externalId: `ROLL-${importId}-${chunk}-${i}`,
      name: `Roll-out item ${chunk}-${i}`,
      taxTypeCode: 'B',
      unitPrice: 10 + i,
      classificationCode: '5016150100',
      productTypeCode: '2',
    },
  }));
}

/** A sale signed at once whose stock lines go to the branch's ledger. */
const stockSale = () => saleInput({ lines: [{ itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 }] });

describe('rolling a build out and back', () => {
  it('runs what started on A to its end on A, moves the long-lived workflows to B, drains A; and back', async () => {
    // Build A serves, with work waiting at every step.
    const a = await startBuild('A', bundleA);
    expect(a.routing).toBe('made-current');

    // The ledger holds lines: its first movement fails (the service answers 503) while the sales' lines wait.
    const stockFault = await sandbox.inspector.addFault({ ...STOCK, kind: 'error', status: 503 });
    const ledgerSales = [await startSale(stockSale()), await startSale(stockSale())];
    const handedOver = await Promise.all(ledgerSales.map((h) => h.result() as Promise<SaleState>));
    const ledger = ledgerHandle(ledgerAt());
    await eventually(
      () => ledger.query(getStockLedgerStateQuery).catch(() => undefined),
      (s) => s !== undefined && Object.values(s.pending).reduce((n, c) => n + c, 0) + s.open.length > 0,
      { timeoutMs: 30_000, what: 'the ledger holding lines' },
    );
    // A sale waiting for its callback.
    const heldTin = invoiceNumber('HELD-');
    await sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${heldTin}$` },
      outcome: 'async',
      delayMs: 600_000,
    });
    const held = await startSale(saleInput({ traderInvoiceNumber: heldTin }));
    const heldDocument = (await saleWhen(held, (s) => s.step === 'awaiting_outcome', 'the held sale in flight')).sale!
      .id;
    // A sale parked for an item.
    const parked = await startSale(saleInput({ lines: [{ itemId: spice, quantity: 1, unitPrice: 120 }] }));
    await saleWhen(parked, (s) => s.step === 'parked', 'the sale parked for its item');
    // A sale waiting out the authority's outage on the application's watch.
    const outage = await sandbox.inspector.addOutage({ kind: 'authority' });
    const waiting = await startSale(saleInput({ traderInvoiceNumber: invoiceNumber('DOWN-') }));
    await saleWhen(waiting, (s) => s.step === 'waiting_out_outage', 'the sale waiting out the outage');
    const watch = client.workflow.getHandle(
      (await eventually(watchId, (id) => id !== undefined, { what: 'the watch listed' }))!,
    );
    await eventually(
      () => watch.query(getOutageWatchStateQuery).catch(() => undefined),
      (s) => s?.waiting.authority === 1,
      { timeoutMs: 30_000, what: 'the watch holding the sale' },
    );
    // A catalogue import whose first chunk's creations the service fails meanwhile, its second chunk waiting.
    const itemsFault = await sandbox.inspector.addFault({ ...ITEMS, kind: 'error', status: 503 });
    const importId = `rollout-${randomUUID().slice(0, 8)}`;
    const catalogue = await client.workflow.start(CATALOGUE_IMPORT_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: catalogueImportWorkflowId(nairobi, importId),
      args: [{ businessId: nairobi, importId, items: 4, chunks: 2 }],
    });
    for (const index of [0, 1])
      await catalogue.executeUpdate(addCatalogueChunkUpdate, {
        args: [{ index, rows: catalogueRows(importId, index) }],
      });
    const firstChunk = client.workflow.getHandle(catalogueChunkWorkflowId(catalogue.workflowId, 0));
    await eventually(
      () => buildOf(firstChunk).catch(() => undefined),
      (b) => b === 'A',
      {
        what: "the import's first chunk running",
      },
    );
    const ledgerOnA = client.workflow.getHandle(ledger.workflowId, (await ledger.describe()).runId);
    const watchOnA = client.workflow.getHandle(watch.workflowId, (await watch.describe()).runId);
    const registration = client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, spice));
    const catalogueOnA = client.workflow.getHandle(catalogue.workflowId, catalogue.firstExecutionRunId);
    const openOnA = [held, parked, waiting, registration, ledgerOnA, watchOnA, catalogueOnA, firstChunk];
    for (const handle of openOnA) expect(await buildOf(handle), handle.workflowId).toBe('A');
    // B cannot replay what A wrote: whatever of it runs on B would fail.
    await expect(Worker.runReplayHistory({ workflowBundle: bundleB }, await held.fetchHistory())).rejects.toThrow(
      /Nondeterminism/,
    );

    // Build B starts beside A and is made current.
    const b = await startBuild('B', bundleB);
    expect(b.routing).toBe('made-current');
    // What holds A, as an operator lists it (docs/deployment.md): the open sales, and the one waiting for a person.
    const onA = `TemporalWorkerDeploymentVersion = '${deploymentName}:A'`;
    const count = (query: string) => client.workflow.count(query).then((c) => c.count);
    await eventually(
      () => count(`${onA} AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`),
      (n) => n >= 3,
      { what: 'the workflows pinned to A listed' },
    );
    expect(await count(`NeedsAttention = true AND ${onA} AND ExecutionStatus = 'Running'`)).toBeGreaterThanOrEqual(1);

    // The service answers again: the ledger continues as new between movements with the lines it holds, the import
    // between chunks (its first ends on A, its second runs on B), the watch at its next probe with the waiting sale.
    await sandbox.inspector.removeFault(stockFault.id!);
    await sandbox.inspector.removeFault(itemsFault.id!);
    const [ledgerOnB, catalogueOnB, watchOnB] = await Promise.all([
      runOn(ledger.workflowId, 'B', 'the ledger on B'),
      runOn(catalogue.workflowId, 'B', 'the catalogue import on B'),
      runOn(watch.workflowId, 'B', 'the watch on B'),
    ]);
    // B's code registers its handlers after its first timer: asked before, the run does not know the query yet.
    await eventually(
      () => watchOnB.query(getOutageWatchStateQuery).catch(() => undefined),
      (s) => s?.waiting.authority === 1,
      { what: 'the watch on B holding the sale' },
    );
    await eventually(
      () => ledgerOnB.query(getStockLedgerStateQuery).catch(() => undefined),
      (s) =>
        s !== undefined &&
        handedOver.every((sale) => sale.stockMovements.every((m) => s.recent.some((r) => recorded(r, m)))),
      { timeoutMs: 30_000, what: "the ledger on B recording A's sales' lines" },
    );
    expect(await catalogueOnB.result()).toMatchObject({ state: 'done', items: 4, done: 4 });
    await ranOnlyOn(client.workflow.getHandle(catalogueChunkWorkflowId(catalogue.workflowId, 1)), 'B');

    // Each sale started on A ends there.
    await sandbox.inspector.removeOutage(outage.id);
    await sandbox.inspector.settle(heldDocument, 'completed');
    await sandbox.inspector.fixItem(spice);
    await parked.executeUpdate(itemFixedUpdate, { args: [{ itemId: spice }] });
    for (const sale of [held, parked, waiting])
      expect(((await sale.result()) as SaleState).sale?.status, sale.workflowId).toBe('completed');
    await registration.result();
    for (const handle of openOnA) await ranOnlyOn(handle, 'A');

    // New sales run on B.
    const onB = await startSale(saleInput());
    expect(((await onB.result()) as SaleState).sale?.status).toBe('completed');
    await ranOnlyOn(onB, 'B');

    // A is drained, as the operator sees it, and stops.
    await eventually(drainage.bind(null, 'A'), (s) => s === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: 'A drained',
    });
    expect(await deploymentCli('describe-version', 'A')).toMatch(/^\s*DrainageStatus\s+drained$/m);
    await a.stop();

    // Back to A: the same two steps, with work on B.
    const heldOnBTin = invoiceNumber('HELD-');
    await sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${heldOnBTin}$` },
      outcome: 'async',
      delayMs: 600_000,
    });
    const heldOnB = await startSale(saleInput({ traderInvoiceNumber: heldOnBTin }));
    const heldOnBDocument = (await saleWhen(heldOnB, (s) => s.step === 'awaiting_outcome', 'the sale held on B')).sale!
      .id;
    // A was current before: its process does not take the deployment back by itself (WORKER_MAKE_CURRENT or not), the
    // operator's command does.
    const again = await startBuild('A', bundleA);
    expect(again.routing).toBe('inactive');
    await deploymentCli('set-current-version', 'A', '--yes');

    // A sale on A hands lines to the ledger, which moves back; one meeting an outage wakes the watch, which does too.
    expect(((await (await startSale(stockSale())).result()) as SaleState).sale?.status).toBe('completed');
    const ledgerBackOnA = await runOn(ledger.workflowId, 'A', 'the ledger back on A');
    const secondOutage = await sandbox.inspector.addOutage({ kind: 'authority' });
    const waitingOnA = await startSale(saleInput({ traderInvoiceNumber: invoiceNumber('DOWN-') }));
    const watchBackOnA = await runOn(watch.workflowId, 'A', 'the watch back on A');
    expect(await buildOf(waitingOnA)).toBe('A');
    await sandbox.inspector.removeOutage(secondOutage.id);
    await sandbox.inspector.settle(heldOnBDocument, 'completed');
    expect(((await heldOnB.result()) as SaleState).sale?.status).toBe('completed');
    expect(((await waitingOnA.result()) as SaleState).sale?.status).toBe('completed');
    for (const handle of [heldOnB, onB, ledgerOnB, watchOnB]) await ranOnlyOn(handle, 'B');
    expect(await buildOf(ledgerBackOnA)).toBe('A');
    expect(await buildOf(watchBackOnA)).toBe('A');
    await eventually(drainage.bind(null, 'B'), (s) => s === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: 'B drained',
    });
    await b.stop();
    // What an operator would have run instead of WORKER_MAKE_CURRENT.
    expect(versionCommands({ deploymentName, buildId: 'A' }, namespace).current).toBe(
      `temporal worker deployment set-current-version --deployment-name ${deploymentName} --build-id A` +
        (namespace === 'default' ? '' : ` --namespace ${namespace}`),
    );
  }, 240_000);
});

function recorded(
  movement: { status: string; lines: Array<{ lineId: string }> },
  line: { referenceId: string },
): boolean {
  return movement.status === 'recorded' && movement.lines.some((l) => l.lineId === line.referenceId);
}

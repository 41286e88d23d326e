/**
 * A tenants worker while its file changes: each application held to its own budget on the compliance
 * queue (the server's per-fairness-key limits, read back from the server), the application on each sale, and
 * onboarding, offboarding and a key rotation served without a restart: a real worker on the run's Temporal server,
 * the sandbox over real HTTP, the file rewritten as an operator (or a mounted secret) would.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { purchasesScheduleId } from '../../src/contracts/purchases-sync.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  cancelUpdate,
  getSaleStateQuery,
  SALE_WORKFLOW_TYPE,
  saleWorkflowId,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { Application, AttentionReason } from '../../src/contracts/search-attributes.js';
import { complianceTaskQueue } from '../../src/contracts/task-queues.js';
import { readComplianceBudgets } from '../../src/temporal/compliance-budgets.js';
import { SalesClient } from '../../src/client/sales-client.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { invoiceNumber } from '../helpers/invoice-number.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';

const B = DEMO.businesses;
const K = DEMO.keys;

describe('a tenants worker while its tenants file changes', () => {
  let sandbox: Sandbox;
  let connected: WorkerProcess;
  let running: Promise<void>;
  let taskQueue: string;
  let dir: string;
  const handles: WorkflowHandle[] = [];

  const retail = (apiKey: string, businesses: string[] = [B.nairobi]) => ({
    application: 'retail',
    apiKey: { value: apiKey },
    baseUrl: sandbox.complianceUrl,
    businesses,
  });
  const other = () => ({
    application: 'other',
    apiKey: { value: K.otherApplication },
    baseUrl: sandbox.complianceUrl,
    requestsPerMinute: 60,
  });
  const writeTenants = (compliance: unknown[]) =>
    writeFileSync(join(dir, 'tenants.json'), JSON.stringify({ compliance }, null, 2));

  beforeAll(async () => {
    await getTestEnv();
    sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
    dir = mkdtempSync(join(tmpdir(), 'tenants-live-'));
    writeTenants([retail(K.orgWide)]);
    const settings = loadWorkerSettings({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      PAYLOAD_ENCRYPTION: 'off',
      TENANTS_FILE: join(dir, 'tenants.json'),
      TENANTS_RELOAD_SECONDS: '1',
      WORKER_MAKE_CURRENT: 'true',
      // Whole rates to compare with (a tenants worker leaves 4 % by default: test/worker/tenants.test.ts).
      COMPLIANCE_RATE_HEADROOM: '0',
      COMPLIANCE_ALLOW_LOOPBACK_CALLBACKS: 'true',
      PURCHASES_SINK: `file:${join(dir, 'purchases.ndjson')}`,
    });
    taskQueue = uniqueTaskQueue('tenants-live');
    connected = await WorkerProcess.start(settings, { logger: pino({ level: 'silent' }), taskQueue });
    running = connected.run();
  });

  afterAll(async () => {
    for (const handle of handles) await handle.terminate('test over').catch(() => undefined);
    for (const businessId of [B.nairobi, B.kisumu])
      await connected?.client.schedule
        .getHandle(purchasesScheduleId(businessId, taskQueue))
        .delete()
        .catch(() => undefined);
    if (connected) {
      connected.shutdown();
      await running;
      await connected.close();
    }
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
    await closeTestEnv();
  });

  function sale(businessId: string, itemId: string, refundWindowDays = 0): SaleInput {
    return {
      businessId,
      traderInvoiceNumber: invoiceNumber(),
      saleDate: '2026-11-21',
      lines: [{ itemId, quantity: 1, unitPrice: 250 }],
      options: { refundWindowDays },
    };
  }

  async function start(input: SaleInput): Promise<WorkflowHandle> {
    const handle = await connected.client.workflow.start(SALE_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
      args: [input],
    });
    handles.push(handle);
    return handle;
  }

  const stateOf = (handle: WorkflowHandle, done: (s: SaleState) => boolean, what: string, timeoutMs = 30_000) =>
    eventually(() => handle.query(getSaleStateQuery), done, { timeoutMs, intervalMs: 200, what });
  const signed = (s: SaleState) => s.sale?.status === 'completed';
  const served = (businessId: string) => connected.tenants.current().applicationOf(businessId);

  it('holds each application to its budget on the compliance queue, and each sale’s calls carry its application', async () => {
    const budgets = await readComplianceBudgets(connected.client, complianceTaskQueue(taskQueue));
    // One application of 120 a minute: 2 activity starts a second per key, and the queue as a whole the same.
    expect(budgets).toEqual({ queuePerSecond: 2, defaultPerSecond: 2, weights: {} });

    const handle = await start(sale(B.nairobi, DEMO.items.sugar));
    await stateOf(handle, signed, 'the Nairobi sale signed');
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(Application)).toBe('retail');
    const events = (await handle.fetchHistory()).events ?? [];
    const keys = new Set(
      events.flatMap((e) =>
        e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.priority?.fairnessKey] : [],
      ),
    );
    // The service application's id: every entry whose key belongs to it spends the one window it counts.
    expect(keys).toEqual(new Set([DEMO.applications.retail]));
  });

  it('onboards an application without a restart: its waiting sale goes on by itself, new sales sign, its schedule exists', async () => {
    const waiting = await start(sale(B.kisumu, DEMO.items.kisumuRice));
    const unserved = await stateOf(waiting, (s) => s.step === 'awaiting_business', 'the Kisumu sale waiting');
    expect(unserved.parked).toBeNull();
    expect(unserved.awaitingBusiness?.message).toContain(B.kisumu);
    expect((await waiting.describe()).typedSearchAttributes.get(AttentionReason)).toBe(FAILURE_TYPES.businessNotServed);

    const changed = Date.now();
    writeTenants([retail(K.orgWide), other()]);
    await eventually(
      async () => served(B.kisumu),
      (a) => a === 'other',
      { timeoutMs: 15_000, intervalMs: 100, what: 'Kisumu served' },
    );
    const fresh = await start(sale(B.kisumu, DEMO.items.kisumuRice));
    await stateOf(fresh, signed, 'a new Kisumu sale signed');
    // Told by the worker once its reload served the business: well before its own next try (5 s, then 10 s).
    const goneOn = await stateOf(waiting, signed, 'the waiting Kisumu sale signed by itself');
    expect(Date.now() - changed).toBeLessThan(30_000);
    expect(goneOn.history.map((h) => h.event)).toContain('business served after 1 refused placement');

    // Each key's rate is the default × its weight: retail 120 a minute (2 a second), other 60 (1 a second).
    const rateOf = (b: Awaited<ReturnType<typeof readComplianceBudgets>>, key: string) =>
      (b.defaultPerSecond ?? 0) * (b.weights[key] ?? 1);
    const budgets = await eventually(
      () => readComplianceBudgets(connected.client, complianceTaskQueue(taskQueue)),
      (b) => b.queuePerSecond === 3,
      { timeoutMs: 10_000, intervalMs: 200, what: 'the queue paced to both applications' },
    );
    expect([rateOf(budgets, DEMO.applications.retail), rateOf(budgets, DEMO.applications.other)]).toEqual([2, 1]);
    const schedule = await connected.client.schedule.getHandle(purchasesScheduleId(B.kisumu, taskQueue)).describe();
    expect(schedule.state.paused).toBe(false);
  });

  it('offboards an application: new sales are refused, a sale under way still finishes (its refund), its schedule pauses', async () => {
    const underway = await start(sale(B.kisumu, DEMO.items.kisumuRice, 1));
    await stateOf(underway, signed, 'the Kisumu sale signed');

    writeTenants([retail(K.orgWide)]);
    await eventually(
      async () => served(B.kisumu),
      (a) => a === undefined,
      { timeoutMs: 15_000, intervalMs: 100, what: 'Kisumu no longer served' },
    );

    const refused = await start(sale(B.kisumu, DEMO.items.kisumuRice));
    const state = await stateOf(refused, (s) => s.step === 'awaiting_business', 'the new Kisumu sale waiting');
    expect(state.awaitingBusiness?.message).toContain(B.kisumu);
    const history = (await refused.fetchHistory()).events ?? [];
    expect(history.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    // A business that stays unserved is still there to cancel, with nothing sent.
    const cancelled = await refused.executeUpdate(cancelUpdate, { args: [{ reason: 'offboarded' }] });
    expect(cancelled.step).toBe('cancelled');

    // The sale filed before the removal is still served by the key that filed it: its refund is signed.
    const { businessId, traderInvoiceNumber } = await stateOf(underway, (s) => s.step === 'completed', 'closed');
    const result = await new SalesClient(connected.client, { taskQueue }).refund(businessId, traderInvoiceNumber, {
      reason: '01',
      returnDate: '2026-11-22',
      traderInvoiceNumber: invoiceNumber('CN-'),
    });
    expect(result).toMatchObject({ creditNote: { status: 'completed' } });

    await eventually(
      () => connected.client.schedule.getHandle(purchasesScheduleId(B.kisumu, taskQueue)).describe(),
      (d) => d.state.paused,
      { timeoutMs: 10_000, intervalMs: 200, what: 'the Kisumu purchases schedule paused' },
    );
  });

  it('rotates a key without losing a sale in flight', async () => {
    const before = await start(sale(B.nairobi, DEMO.items.sugar));
    // The Nairobi till's key belongs to the same service application as the organisation-wide one.
    writeTenants([retail(K.nairobi)]);
    await eventually(
      async () => (await connected.tenants.current().complianceClient('retail')?.getIdentity())?.data.apiKey?.id,
      (id) => id === 'key_demo_nairobi',
      { timeoutMs: 15_000, intervalMs: 100, what: 'the rotated key served' },
    );
    const after = await start(sale(B.nairobi, DEMO.items.sugar));
    await stateOf(before, signed, 'the sale started before the rotation signed');
    await stateOf(after, signed, 'the sale started after the rotation signed');
  });

  it('gives a window serving several businesses a queue of its own, held to its budget, where its businesses share it fairly', async () => {
    writeTenants([retail(K.orgWide, [B.nairobi, B.mombasa])]);
    await eventually(
      async () => served(B.mombasa),
      (a) => a === 'retail',
      { timeoutMs: 15_000, intervalMs: 100, what: 'Mombasa served' },
    );
    const ownQueue = `${complianceTaskQueue(taskQueue)}.${DEMO.applications.retail}`;
    const own = await eventually(
      () => readComplianceBudgets(connected.client, ownQueue),
      (b) => b.queuePerSecond === 2,
      { timeoutMs: 10_000, intervalMs: 200, what: 'the window’s own queue held to 120 a minute' },
    );
    expect(own.weights).toEqual({});
    const handles = await Promise.all([
      start(sale(B.mombasa, DEMO.items.mombasaWater)),
      start(sale(B.nairobi, DEMO.items.sugar)),
    ]);
    for (const handle of handles) {
      await stateOf(handle, signed, 'a sale of the shared window signed');
      const { businessId } = await handle.query(getSaleStateQuery);
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) =>
        e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : [],
      );
      expect(new Set(scheduled.map((a) => a.taskQueue?.name))).toEqual(new Set([ownQueue]));
      // Each business is its own fairness key on the window's queue.
      expect(new Set(scheduled.map((a) => a.priority?.fairnessKey))).toEqual(new Set([businessId]));
    }
  });

  it('keeps serving the tenants it has when the file turns bad, and says so without the key', async () => {
    writeFileSync(
      join(dir, 'tenants.json'),
      '{ "compliance": [ { "application": "retail", "apiKey": { "value": "not-a-key" } } ] }',
    );
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(served(B.nairobi)).toBe('retail');
    const handle = await start(sale(B.nairobi, DEMO.items.sugar));
    await stateOf(handle, signed, 'a Nairobi sale signed under the old tenants');
  });
});

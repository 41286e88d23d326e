import { randomUUID } from 'node:crypto';
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PurchasesSyncError, syncPurchasesNow } from '../../src/client/purchases.js';
import { ensurePurchasesSyncSchedules, PURCHASES_CATCHUP_WINDOW_MS } from '../../src/purchases/schedule.js';
import { WorkerProcess } from '../../src/worker/process.js';
import { resolveServices, type ServiceEndpoints } from '../../src/services/endpoints.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { purchasesScheduleId } from '../../src/contracts/purchases-sync.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { closeTestEnv, getTestEnv } from '../helpers/temporal.js';
import { singleKeyTestTenants, testWorkerSettings } from '../helpers/worker-settings.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';

const logger = pino({ level: 'silent' });
let client: Client;
const made: string[] = [];

beforeAll(async () => {
  client = (await getTestEnv()).client;
});
afterAll(async () => {
  for (const id of made) {
    const handle = client.schedule.getHandle(id);
    // The first sync a start-up triggers waits for a worker that this file never runs.
    const running = await handle.describe().then(
      (d) => d.info.runningActions,
      () => [],
    );
    for (const run of running)
      await client.workflow
        .getHandle(run.workflow.workflowId)
        .terminate('test over')
        .catch(() => undefined);
    await handle.delete().catch(() => undefined);
  }
  await closeTestEnv();
});

/** A task queue of its own, so the schedule ids are this test's (nothing polls it: no sync runs). */
function queue(): string {
  const taskQueue = `schedules-${randomUUID().slice(0, 8)}`;
  made.push(
    purchasesScheduleId(DEMO.businesses.nairobi, taskQueue),
    purchasesScheduleId(DEMO.businesses.mombasa, taskQueue),
  );
  return taskQueue;
}

describe('purchases sync schedules', () => {
  it('are created once: a second start-up finds them unchanged; an interval or options change updates them', async () => {
    const taskQueue = queue();
    const settings = {
      businessIds: [DEMO.businesses.nairobi, DEMO.businesses.mombasa],
      taskQueue,
      triggerImmediately: false,
    };
    expect((await ensurePurchasesSyncSchedules(client, settings)).map((s) => s.outcome)).toEqual([
      'created',
      'created',
    ]);
    expect((await ensurePurchasesSyncSchedules(client, settings)).map((s) => s.outcome)).toEqual([
      'unchanged',
      'unchanged',
    ]);

    const handle = client.schedule.getHandle(purchasesScheduleId(DEMO.businesses.nairobi, taskQueue));
    const created = await handle.describe();
    expect(created.spec.intervals).toMatchObject([{ every: 15 * 60_000 }]);
    expect(created.policies).toMatchObject({
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: PURCHASES_CATCHUP_WINDOW_MS,
      pauseOnFailure: false,
    });
    expect(created.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'purchasesSyncWorkflow',
      taskQueue,
      args: [{ businessId: DEMO.businesses.nairobi }],
    });

    // An operator paused one; a new interval must not unpause it.
    await handle.pause('supplier portal maintenance');
    const changed = await ensurePurchasesSyncSchedules(client, { ...settings, interval: '5m' });
    expect(changed.map((s) => s.outcome)).toEqual(['updated', 'updated']);
    const updated = await handle.describe();
    expect(updated.spec.intervals).toMatchObject([{ every: 5 * 60_000 }]);
    expect(updated.state.paused).toBe(true);

    const withOptions = await ensurePurchasesSyncSchedules(client, {
      ...settings,
      interval: '5m',
      options: { pageSize: 50 },
    });
    expect(withOptions.map((s) => s.outcome)).toEqual(['updated', 'updated']);
    expect((await handle.describe()).action).toMatchObject({
      args: [{ businessId: DEMO.businesses.nairobi, options: { pageSize: 50 } }],
    });
    expect(
      (await ensurePurchasesSyncSchedules(client, { ...settings, interval: 300_000, options: { pageSize: 50 } })).map(
        (s) => s.outcome,
      ),
    ).toEqual(['unchanged', 'unchanged']);
  });

  it('two start-ups of the worker with PURCHASES_SINK make one schedule per business', async () => {
    const taskQueue = queue();
    let services: ServiceEndpoints | undefined;
    try {
      services = await resolveServices({ compliance: undefined, accounting: undefined, logLevel: 'silent' }, logger, {
        sandboxFixture: { compliance: fastFixture() },
      });
      const env = await getTestEnv();
      const bundle = await workflowBundle();
      // No businesses configured: every business the key acts for (the demo key: Nairobi and Mombasa).
      const config = {
        sink: { kind: 'file' as const, path: '/dev/null' },
        intervalMs: 3_600_000,
        businessIds: undefined,
        listing: {},
      };
      const settings = testWorkerSettings({ purchases: config });
      const start = () =>
        WorkerProcess.start(settings, {
          brought: { connection: env.nativeConnection, client, tenants: singleKeyTestTenants(services!, settings) },
          logger,
          taskQueue,
          workflowBundle: bundle,
          purchasesSink: { description: 'none', deliver: async () => {}, close: async () => {} },
        });
      // Each start-up is a worker process that starts and stops (a restart or a rolling deploy).
      const startAndStop = async () => {
        const service = await start();
        const running = service.run();
        service.shutdown();
        await running;
        await service.close();
        return service;
      };
      const first = await startAndStop();
      const second = await startAndStop();
      expect(first.purchases.schedules.map((s) => [s.businessId, s.outcome])).toEqual([
        [DEMO.businesses.nairobi, 'created'],
        [DEMO.businesses.mombasa, 'created'],
      ]);
      expect(second.purchases.schedules.map((s) => s.outcome)).toEqual(['unchanged', 'unchanged']);
      // Schedule ids are unique: "unchanged" is the existing schedule found, not a second one made.
      for (const id of made.slice(-2)) expect((await client.schedule.getHandle(id).describe()).scheduleId).toBe(id);
    } finally {
      await services?.close();
    }
  });

  it('an on-demand sync of a business without a schedule says how to get one', async () => {
    const err = await syncPurchasesNow(client, 'biz_unscheduled', { taskQueue: `none-${randomUUID()}` }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PurchasesSyncError);
    expect(err).toMatchObject({ failure: 'not_scheduled' });
    expect((err as Error).message).toContain('PURCHASES_SINK');
  });
});

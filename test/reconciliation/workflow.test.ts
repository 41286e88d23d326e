import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReconciliationActivities, type ReconcileBusinessResult } from '../../activities/reconciliation.js';
import { AccountingClient } from '../../src/accounting/client.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { ensureReconciliationSchedules, reconciliationScheduleId } from '../../src/reconciliation/schedule.js';
import { DEMO_RECONCILIATION_LINK, OTHER_COMPANY_ID } from '../../src/sandbox/accounting/default-fixture.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { resolveServices, type ServiceEndpoints } from '../../src/services.js';
import { PRIORITY } from '../../workflows/activity-options.js';
import { complianceTaskQueue } from '../../workflows/definitions.js';
import type { ReconciliationInput, reconciliationWorkflow } from '../../workflows/reconciliation.js';
import { eventually } from '../helpers/eventually.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';

// The workflow file alone: the worker's workflows/index.ts is wired by the worker, not by this test.
const workflowsPath = fileURLToPath(new URL('../../workflows/reconciliation.ts', import.meta.url));

/** The demo world's counts (src/sandbox/accounting/default-fixture.ts RECONCILIATION_CASES). */
const DEMO_COUNTS = {
  purchases: 45,
  billPayments: 25,
  matched: 3,
  suggested: 1,
  amountMismatches: 1,
  unpaidPurchases: 33,
  unmatchedPayments: 19,
  rejectedPurchases: 7,
  ties: 1,
};

let client: Client;
let taskQueue: string;
let services: ServiceEndpoints;
let sandbox: Sandbox;
let compliance: ComplianceClient;
let accounting: AccountingClient;
let workers: Worker[] = [];
let running: Promise<unknown> | undefined;

beforeAll(async () => {
  const env = await getTestEnv();
  client = env.client;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // Neither service configured: the embedded sandbox, over HTTP, as `npm run reconcile` gets it.
  services = await resolveServices({ compliance: undefined, accounting: undefined, logLevel: logger.level }, logger);
  sandbox = services.sandbox as Sandbox;
  compliance = new ComplianceClient(services.compliance);
  accounting = new AccountingClient(services.accounting);
  taskQueue = uniqueTaskQueue('reconciliation');
  const common = { connection: env.nativeConnection, namespace: env.namespace ?? 'default' };
  workers = [
    await Worker.create({ ...common, taskQueue, workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: testLogger }) }),
    await Worker.create({ ...common, taskQueue: complianceTaskQueue(taskQueue), activities: createReconciliationActivities({ compliance, accounting, logger }) }),
  ];
  running = Promise.all(workers.map((w) => w.run()));
});

afterAll(async () => {
  for (const worker of workers) worker.shutdown();
  await running;
  await compliance?.close();
  await accounting?.close();
  await services?.close();
  await closeTestEnv();
});

function start(input: ReconciliationInput): Promise<WorkflowHandle<typeof reconciliationWorkflow>> {
  return client.workflow.start<typeof reconciliationWorkflow>('reconciliationWorkflow', {
    taskQueue,
    workflowId: `reconciliation-test-${randomUUID()}`,
    args: [input],
  });
}

/** What the Temporal UI shows as the execution's current details. */
async function currentDetails(handle: WorkflowHandle): Promise<string> {
  const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

function expectDemoSummary(result: ReconcileBusinessResult): void {
  expect(result.counts).toEqual(DEMO_COUNTS);
  const pairs = (list: ReconcileBusinessResult['summary']['matched']) => list.map((p) => [p.purchaseId, p.billPaymentIds]);
  expect(pairs(result.summary.matched)).toEqual([
    ['pur_nbo_001', ['bp_nbo_rec_01']],
    ['pur_nbo_004', ['bp_nbo_rec_02']],
    ['pur_nbo_006', ['bp_nbo_rec_03', 'bp_nbo_rec_04']],
  ]);
  expect(pairs(result.summary.suggested)).toEqual([['pur_nbo_016', ['bp_nbo_rec_07']]]);
  expect(pairs(result.summary.amountMismatches)).toEqual([['pur_nbo_007', ['bp_nbo_rec_05']]]);
  expect(result.summary.ties).toEqual([{ reason: 'several_candidates', purchaseIds: ['pur_nbo_025'], billPaymentIds: ['bp_nbo_rec_08', 'bp_nbo_rec_09'] }]);
  expect(result.summary.unmatchedPayments).toEqual(expect.arrayContaining(['bp_nbo_rec_06', 'bp_nbo_rec_08', 'bp_nbo_rec_09']));
}

describe('reconciliationWorkflow', () => {
  it('sorts the demo world, on the compliance queue at background priority, and shows the counts in the UI', async () => {
    const before = sandbox.stats.snapshot().total;
    const handle = await start({ ...DEMO_RECONCILIATION_LINK, asOf: '2025-07-31' });
    const result = await handle.result();
    expectDemoSummary(result);
    expect(result.summary.unpaidAgeDays.pur_nbo_045).toBe(97);
    // Businesses, one page of purchases, companies, one page of bill payments: and the services saw just those.
    expect(result.calls).toEqual({ compliance: { listBusinesses: 1, listPurchases: 1 }, accounting: { listCompanies: 1, listBillPayments: 1 }, total: 4 });
    expect(sandbox.stats.snapshot().total - before).toBe(4);

    const details = await currentDetails(handle);
    for (const row of ['| Matched | 3 |', '| Suggested (confirm by hand) | 1 |', '| Amount mismatches | 1 |', '| Unpaid invoices | 33 |', '| Payments without an invoice | 19 |', '| Ties to review | 1 |']) {
      expect(details).toContain(row);
    }

    const scheduled = ((await handle.fetchHistory()).events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
    expect(scheduled).toHaveLength(1);
    expect(scheduled[0]?.activityType?.name).toBe('reconcileBusiness');
    expect(scheduled[0]?.taskQueue?.name).toBe(complianceTaskQueue(taskQueue));
    expect(scheduled[0]?.priority?.priorityKey).toBe(PRIORITY.background);
  });

  it.each([
    ['a business the compliance key cannot act for', { businessId: 'biz_does_not_exist', companyId: DEMO_RECONCILIATION_LINK.companyId }, /business biz_does_not_exist is not one/],
    ["another application's company", { businessId: DEMO_RECONCILIATION_LINK.businessId, companyId: OTHER_COMPANY_ID }, /company cmp_other_kisumu is not visible/],
  ])('fails at once, without retrying, for %s', async (_name, link, message) => {
    const handle = await start(link);
    const error = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const activity = (error as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    const cause = (activity as ActivityFailure).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('not_configured');
    expect((cause as ApplicationFailure).message).toMatch(message);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.find((e) => e.activityTaskStartedEventAttributes)?.activityTaskStartedEventAttributes?.attempt).toBe(1);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(1);
  });

  it('refuses a plain-JSON input without a company before calling anything', async () => {
    const handle = await start({ businessId: DEMO_RECONCILIATION_LINK.businessId } as ReconciliationInput);
    const error = await handle.result().catch((err: unknown) => err);
    expect(((error as WorkflowFailedError).cause as ApplicationFailure).type).toBe('invalid_input');
  });
});

describe('ensureReconciliationSchedules', () => {
  it('creates one schedule per link once, updates it on later start-ups, and its runs reconcile', async () => {
    const idPrefix = `reconciliation-test-${randomUUID().slice(0, 8)}`;
    const links = [DEMO_RECONCILIATION_LINK];
    const scheduleId = reconciliationScheduleId(DEMO_RECONCILIATION_LINK.businessId, idPrefix);
    const schedule = client.schedule.getHandle(scheduleId);
    try {
      expect((await ensureReconciliationSchedules(client, { links, taskQueue, idPrefix })).map((s) => s.outcome)).toEqual(['created']);
      // A restart: the same schedule, brought up to date, never a second one.
      expect((await ensureReconciliationSchedules(client, { links, taskQueue, idPrefix })).map((s) => s.outcome)).toEqual(['updated']);
      let description = await schedule.describe();
      expect(description.spec.intervals?.map((i) => i.every)).toEqual([86_400_000]);
      expect(description.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 86_400_000 });
      const listed = await eventually(
        async () => {
          const ids: string[] = [];
          for await (const s of client.schedule.list()) if (s.scheduleId.startsWith(`${idPrefix}:`)) ids.push(s.scheduleId);
          return ids;
        },
        (ids) => ids.length > 0,
        { timeoutMs: 15_000, what: 'the schedule in the list' },
      );
      expect(listed).toEqual([scheduleId]);

      // A changed interval updates it; an operator's pause survives the restart.
      await schedule.pause('held by an operator');
      await ensureReconciliationSchedules(client, { links, taskQueue, idPrefix, interval: '12h' });
      description = await schedule.describe();
      expect(description.spec.intervals?.map((i) => i.every)).toEqual([43_200_000]);
      expect(description.state.paused).toBe(true);
      await ensureReconciliationSchedules(client, { links, taskQueue, idPrefix, cron: '0 6 * * *' });
      description = await schedule.describe();
      expect(description.spec.timezone).toBe('Africa/Nairobi');
      expect(description.spec.calendars?.length ?? 0).toBeGreaterThan(0);

      // A run the schedule starts is the scheduled run: its summary is on its own execution.
      await schedule.trigger();
      const started = await eventually(() => schedule.describe(), (d) => d.info.recentActions.length > 0, { timeoutMs: 15_000, what: 'a run of the schedule' });
      const run = client.workflow.getHandle<typeof reconciliationWorkflow>(started.info.recentActions[0]!.action.workflow.workflowId);
      expectDemoSummary(await run.result());
      expect(await currentDetails(run)).toContain('| Matched | 3 |');
    } finally {
      await schedule.delete().catch(() => undefined);
    }
  });
});

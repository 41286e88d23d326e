import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../src/accounting/client.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { loadReconciliationData } from '../../src/reconciliation/load.js';
import { calendarDay, dayNumber, reconcile, reconciliationPeriod } from '../../src/reconciliation/rules.js';
import { summarize } from '../../src/reconciliation/summary.js';
import { ensureReconciliationSchedules } from '../../src/reconciliation/schedule.js';
import { reconciliationScheduleId } from '../../src/contracts/reconciliation.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_COMPANY_IDS,
  DEMO_RECONCILIATION_LINK,
  OTHER_COMPANY_ID,
  defaultAccountingFixture,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { singleApplication } from '../helpers/single-application.js';
import { createWorkers, type Workers } from '../../src/worker/workers.js';
import { routeDeploymentVersion } from '../../src/worker/deployment.js';
import { deploymentNameFor } from '../../src/config/versioning.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import { accountingTaskQueue, complianceTaskQueue } from '../../src/contracts/task-queues.js';
import type { ReconcileBusinessResult, ReconciliationInput } from '../../src/contracts/reconciliation.js';
import type { reconciliationWorkflow } from '../../workflows/reconciliation.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { closeTestEnv, getTestEnv, testLogger, uniqueTaskQueue } from '../helpers/temporal.js';

// The workflow file alone: the worker's workflows/index.ts is wired by the worker, not by this test.
const workflowsPath = fileURLToPath(new URL('../../workflows/reconciliation.ts', import.meta.url));

/**
 * The demo world's counts (sandbox/accounting/default-fixture.ts RECONCILIATION_CASES) as of 2025-07-31, over the
 * default period: the invoices from 2025-05-03, the payments that pair with them, and those from 2025-06-02.
 */
const DEMO_AS_OF = '2025-07-31';
const DEMO_COUNTS = {
  purchases: 40,
  billPayments: 12,
  matched: 3,
  suggested: 1,
  amountMismatches: 1,
  unpaidPurchases: 29,
  unmatchedPayments: 6,
  rejectedPurchases: 6,
  ties: 1,
};

/** Mombasa, grown to three pages of each list; Nairobi stays the demo world. */
const PAGES_LINK = { businessId: DEMO.businesses.mombasa, companyId: DEMO_COMPANY_IDS[1] };
const EXTRA_PURCHASES = 244;
const EXTRA_PAYMENTS = 190;

const COMPACT_PURCHASE_KEYS = ['id', 'invoiceDate', 'status', 'supplier', 'supplierInvoiceNumber', 'totals'];
const COMPACT_PAYMENT_KEYS = ['billRef', 'currency', 'date', 'id', 'lines', 'supplierRef', 'totalAmount'];

const COMPLIANCE_ACTIVITIES = new Set(['checkReconciliationBusiness', 'listReconciliationPurchases']);

let client: Client;
let taskQueue: string;
let sandbox: Sandbox;
let compliance: ComplianceClient;
let accounting: AccountingClient;
let workers: Workers | undefined;
const stop = new AbortController();
let running: Promise<unknown> | undefined;

beforeAll(async () => {
  const env = await getTestEnv();
  client = env.client;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const complianceFixture = fastFixture((f) => {
    const business = f.businesses?.find((b) => b.id === PAGES_LINK.businessId);
    const template = business?.purchases?.[0];
    if (!business || !template) throw new Error('the demo world has no Mombasa purchases');
    business.purchases = [
      ...(business.purchases ?? []),
      ...Array.from({ length: EXTRA_PURCHASES }, (_, i) => ({
        ...template,
        id: `pur_pages_${i}`,
        supplierInvoiceNumber: `PAGES-${i}`,
        pendingPull: false,
      })),
    ];
  });
  const accountingFixture = structuredClone(defaultAccountingFixture);
  const template = accountingFixture.billPayments.find((b) => b.companyId === PAGES_LINK.companyId)!;
  accountingFixture.billPayments.push(
    ...Array.from({ length: EXTRA_PAYMENTS }, (_, i) => ({
      ...template,
      id: `bp_pages_${i}`,
      billRef: { id: `bill_pages_${i}`, billCode: `PB-${i}` },
      // In the period, so that the run reads every page of them.
      date: `2025-07-${String(1 + (i % 28)).padStart(2, '0')}`,
      createdAt: new Date(Date.parse('2025-08-01T00:00:00Z') + i * 60_000).toISOString(),
    })),
  );
  sandbox = await startSandbox({
    fixture: { compliance: complianceFixture, accounting: accountingFixture },
    logger: false,
  });
  compliance = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: DEMO.keys.orgWide });
  accounting = new AccountingClient({ baseUrl: sandbox.accountingUrl, apiKey: DEMO_ACCOUNTING_API_KEY });
  taskQueue = uniqueTaskQueue('reconciliation');
  const version = { deploymentName: deploymentNameFor(taskQueue), buildId: 'test' };
  // The production wiring: every activity registered on the queue it runs on in the worker.
  workers = await createWorkers(
    {
      namespace: env.namespace ?? 'default',
      client,
      logger,
      taskQueue,
      version,
      services: singleApplication({ compliance, accounting }),
    },
    {
      connection: env.nativeConnection,
      signal: stop.signal,
      workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: testLogger }),
      activitiesPerSecond: { compliance: 50, accounting: 50 },
    },
  );
  running = workers.run();
  const taskQueues = [workers.workflows, workers.compliance, workers.accounting].map((w) => w.options.taskQueue);
  await routeDeploymentVersion({
    client,
    namespace: env.namespace ?? 'default',
    version,
    taskQueues,
    makeCurrent: true,
    logger,
  });
});

afterAll(async () => {
  stop.abort();
  await running;
  await compliance?.close();
  await accounting?.close();
  await sandbox?.close();
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

interface ActivityRun {
  type: string;
  queue: string;
  priority: number | null | undefined;
  input: unknown;
  /** Decoded result, when it completed. */
  result?: unknown;
}

function decode(payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown {
  const data = payloads?.payloads?.[0]?.data;
  // An activity that returns nothing completes with an empty (binary/null) payload.
  return data?.length ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined;
}

/** Every activity the run scheduled, in order, with its queue, priority, input and result (plain JSON here: no codec). */
async function activityRuns(handle: WorkflowHandle): Promise<ActivityRun[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const runs = new Map<string, ActivityRun>();
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      runs.set(String(event.eventId), {
        type: scheduled.activityType?.name ?? '',
        queue: scheduled.taskQueue?.name ?? '',
        priority: scheduled.priority?.priorityKey,
        input: decode(scheduled.input),
      });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) runs.get(String(completed.scheduledEventId))!.result = decode(completed.result);
  }
  return [...runs.values()];
}

/** One activity per request, each on its service's queue, all at background priority. */
function expectQueues(runs: ActivityRun[]): void {
  for (const run of runs) {
    const queue = COMPLIANCE_ACTIVITIES.has(run.type) ? complianceTaskQueue(taskQueue) : accountingTaskQueue(taskQueue);
    expect(run, run.type).toMatchObject({ queue, priority: PRIORITY.background });
  }
}

function expectDemoSummary(result: ReconcileBusinessResult): void {
  expect(result.counts).toEqual(DEMO_COUNTS);
  const pairs = (list: ReconcileBusinessResult['summary']['matched']) =>
    list.map((p) => [p.purchaseId, p.billPaymentIds]);
  // Matched and rejected invoices are counted, not listed: `npm run reconcile` lists them.
  expect(result.summary.matched).toEqual([]);
  expect(result.summary.truncated).toEqual({ matched: 3, rejectedPurchases: 6 });
  expect(pairs(result.summary.suggested)).toEqual([['pur_nbo_016', ['bp_nbo_rec_07']]]);
  expect(pairs(result.summary.amountMismatches)).toEqual([['pur_nbo_007', ['bp_nbo_rec_05']]]);
  expect(result.summary.ties).toEqual([
    { reason: 'several_candidates', purchaseIds: ['pur_nbo_025'], billPaymentIds: ['bp_nbo_rec_08', 'bp_nbo_rec_09'] },
  ]);
  expect(result.summary.unmatchedPayments).toEqual(
    expect.arrayContaining(['bp_nbo_rec_06', 'bp_nbo_rec_08', 'bp_nbo_rec_09']),
  );
}

describe('reconciliationWorkflow', () => {
  it('sorts the demo world, one request per activity, with compact records, and shows the counts in the UI', async () => {
    const before = sandbox.stats.snapshot().total;
    const handle = await start({ ...DEMO_RECONCILIATION_LINK, asOf: DEMO_AS_OF });
    const result = await handle.result();
    expectDemoSummary(result);
    expect(result.summary.unpaidAgeDays.pur_nbo_040).toBe(88);
    expect(result.summary.period).toEqual(reconciliationPeriod(DEMO_AS_OF));
    // Businesses, companies, one page of purchases, one page of bill payments: and the services saw just those.
    expect(sandbox.stats.snapshot().total - before).toBe(4);

    const details = await currentDetails(handle);
    for (const row of [
      '| Matched | 3 |',
      '| Suggested (confirm by hand) | 1 |',
      '| Amount mismatches | 1 |',
      '| Unpaid invoices | 29 |',
      '| Payments without an invoice | 6 |',
      '| Rejected invoices (not owed) | 6 |',
      '| Ties to review | 1 |',
    ]) {
      expect(details).toContain(row);
    }
    expect(details).toContain('40 invoices dated 2025-05-03 to 2025-07-31 (90 days), 12 bill payments.');

    const runs = await activityRuns(handle);
    expect(runs.map((r) => r.type)).toEqual([
      'checkReconciliationBusiness',
      'checkReconciliationCompany',
      'listReconciliationPurchases',
      'listReconciliationBillPayments',
    ]);
    expectQueues(runs);
    // The period's invoices were asked for; the history holds what the rules read and nothing more.
    expect(runs[2]!.input).toEqual({
      businessId: DEMO_RECONCILIATION_LINK.businessId,
      cursor: null,
      fromDate: '2025-05-03',
      toDate: DEMO_AS_OF,
    });
    const purchases = (runs[2]!.result as { purchases: Array<Record<string, unknown>> }).purchases;
    const payments = (runs[3]!.result as { billPayments: Array<Record<string, unknown>> }).billPayments;
    expect(purchases).toHaveLength(40);
    // The books' 25 payments fit one page, newest first: the older ones are read, and left out by the rules.
    expect(payments).toHaveLength(25);
    expect(payments[0]).toMatchObject({ date: '2025-07-15' });
    for (const p of purchases) expect(Object.keys(p).sort()).toEqual(COMPACT_PURCHASE_KEYS);
    for (const b of payments) expect(Object.keys(b).sort()).toEqual(COMPACT_PAYMENT_KEYS);
    expect(purchases.find((p) => p.id === 'pur_nbo_001')).toEqual({
      id: 'pur_nbo_001',
      status: expect.any(String),
      supplier: { name: expect.any(String) },
      supplierInvoiceNumber: 'INV-2400',
      invoiceDate: expect.any(String),
      totals: { total: 6_200 },
    });
  });

  it('reads every page as its own activity, and sorts exactly as `npm run reconcile` does', async () => {
    const directBefore = sandbox.stats.snapshot().total;
    const period = reconciliationPeriod(DEMO_AS_OF);
    const direct = await loadReconciliationData({ compliance, accounting }, { ...PAGES_LINK, period });
    const directCalls = sandbox.stats.snapshot().total - directBefore;
    const purchasePages = Math.ceil(direct.purchases.length / 100);
    const paymentPages = Math.ceil(direct.billPayments.length / 100);
    expect(purchasePages).toBe(3);
    expect(paymentPages).toBe(3);

    const before = sandbox.stats.snapshot().total;
    const handle = await start({ ...PAGES_LINK, asOf: DEMO_AS_OF });
    const result = await handle.result();
    expect(result.summary).toEqual(
      summarize(reconcile(direct.purchases, direct.billPayments, DEMO_AS_OF), direct.billPayments),
    );
    expect(sandbox.stats.snapshot().total - before).toBe(directCalls);

    const runs = await activityRuns(handle);
    expect(runs.map((r) => r.type)).toEqual([
      'checkReconciliationBusiness',
      'checkReconciliationCompany',
      ...Array<string>(purchasePages).fill('listReconciliationPurchases'),
      ...Array<string>(paymentPages).fill('listReconciliationBillPayments'),
    ]);
    expectQueues(runs);
    // Each purchases page passes on the cursor the one before it returned.
    const purchaseRuns = runs.filter((r) => r.type === 'listReconciliationPurchases');
    expect(purchaseRuns.map((r) => (r.input as { cursor: string | null }).cursor)).toEqual([
      null,
      ...purchaseRuns.slice(0, -1).map((r) => (r.result as { nextCursor: string }).nextCursor),
    ]);
    expect(
      runs.filter((r) => r.type === 'listReconciliationBillPayments').map((r) => (r.input as { page: number }).page),
    ).toEqual([1, 2, 3]);

    const details = await currentDetails(handle);
    expect(details).toContain(`| Unpaid invoices | ${result.counts.unpaidPurchases} |`);
    expect(details).toContain(`| Payments without an invoice | ${result.counts.unmatchedPayments} |`);
    expect(details).toContain(
      `${direct.purchases.length} invoices dated ${period.from} to ${period.to} (90 days), ` +
        `${result.counts.billPayments} bill payments.`,
    );
  });

  it.each([
    [
      'a business the compliance key cannot act for',
      { businessId: 'biz_does_not_exist', companyId: DEMO_RECONCILIATION_LINK.companyId },
      /^business biz_does_not_exist is not one the compliance API key may act for/,
      ['checkReconciliationBusiness'],
    ],
    [
      "another application's company",
      { businessId: DEMO_RECONCILIATION_LINK.businessId, companyId: OTHER_COMPANY_ID },
      /^accounting company cmp_other_kisumu is not visible to the accounting API key$/,
      ['checkReconciliationBusiness', 'checkReconciliationCompany'],
    ],
  ])('fails at once, without retrying, for %s', async (_name, link, message, activities) => {
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
    expect((cause as ApplicationFailure).nonRetryable).toBe(true);
    expect((cause as ApplicationFailure).message).toMatch(message);
    const runs = await activityRuns(handle);
    expect(runs.map((r) => r.type)).toEqual(activities);
    expectQueues(runs);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(
      events.flatMap((e) =>
        e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : [],
      ),
    ).toEqual(activities.map(() => 1));
  });

  it.each([
    ['without a company', { businessId: DEMO_RECONCILIATION_LINK.businessId }],
    ['with a day that does not exist', { ...DEMO_RECONCILIATION_LINK, asOf: '2025-02-30' }],
  ])('refuses a plain-JSON input %s before calling anything', async (_name, input) => {
    const handle = await start(input as ReconciliationInput);
    const error = await handle.result().catch((err: unknown) => err);
    expect(((error as WorkflowFailedError).cause as ApplicationFailure).type).toBe('invalid_input');
    expect(await activityRuns(handle)).toEqual([]);
  });
});

describe('ensureReconciliationSchedules', () => {
  it('creates one schedule per link once, updates it on later start-ups, and its runs reconcile', async () => {
    const idPrefix = `reconciliation-test-${randomUUID().slice(0, 8)}`;
    const links = [DEMO_RECONCILIATION_LINK];
    const scheduleId = reconciliationScheduleId(DEMO_RECONCILIATION_LINK.businessId, idPrefix);
    const schedule = client.schedule.getHandle(scheduleId);
    // A period (RECONCILE_PERIOD_DAYS) that reaches back from today to the demo world's, as the 90 days to
    // 2025-07-31 do: the same invoices, the same counts. A day either way changes none.
    const periodDays = dayNumber(calendarDay(Date.now()))! - dayNumber('2025-05-03')! + 1;
    const ensure = (interval?: '12h') =>
      ensureReconciliationSchedules(client, {
        links,
        taskQueue,
        idPrefix,
        periodDays,
        ...(interval ? { interval } : {}),
      });
    try {
      expect((await ensure()).map((s) => s.outcome)).toEqual(['created']);
      // A restart: the same schedule, brought up to date, never a second one.
      expect((await ensure()).map((s) => s.outcome)).toEqual(['updated']);
      let description = await schedule.describe();
      expect(description.action.args).toEqual([{ ...DEMO_RECONCILIATION_LINK, options: { periodDays } }]);
      expect(description.spec.intervals?.map((i) => i.every)).toEqual([86_400_000]);
      expect(description.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 86_400_000 });
      const listed = await eventually(
        async () => {
          const ids: string[] = [];
          for await (const s of client.schedule.list())
            if (s.scheduleId.startsWith(`${idPrefix}:`)) ids.push(s.scheduleId);
          return ids;
        },
        (ids) => ids.length > 0,
        { timeoutMs: 15_000, what: 'the schedule in the list' },
      );
      expect(listed).toEqual([scheduleId]);

      // A changed interval updates it; an operator's pause survives the restart.
      await schedule.pause('held by an operator');
      await ensure('12h');
      description = await schedule.describe();
      expect(description.spec.intervals?.map((i) => i.every)).toEqual([43_200_000]);
      expect(description.state.paused).toBe(true);

      // A run the schedule starts is the scheduled run: its summary is on its own execution.
      await schedule.trigger();
      const started = await eventually(
        () => schedule.describe(),
        (d) => d.info.recentActions.length > 0,
        { timeoutMs: 15_000, what: 'a run of the schedule' },
      );
      const run = client.workflow.getHandle<typeof reconciliationWorkflow>(
        started.info.recentActions[0]!.action.workflow.workflowId,
      );
      const result = await run.result();
      expectDemoSummary(result);
      // No asOf in the schedule's input: the period ends, and ages count to, the day the run started, in Nairobi.
      expect(result.summary.asOf).toBe(calendarDay((await run.describe()).startTime.getTime()));
      expect(result.summary.period.days).toBe(periodDays);
      expect(await currentDetails(run)).toContain('| Matched | 3 |');
    } finally {
      await schedule.delete().catch(() => undefined);
    }
  });
});

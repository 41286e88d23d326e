/**
 * Tills before bulk work: how long a till sale's signing activity waits for the throttled budget (scheduled →
 * started, from its history) while bulk work is queued on the same budget: the stock movements of sales with many
 * lines (queued once those sales are signed), item registrations and purchases syncs. The same till sales on the
 * idle budget first, for comparison. Reported, no target.
 */
import { randomUUID } from 'node:crypto';
import type { ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import { ITEM_REGISTRATION_WORKFLOW_TYPE, itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { type SaleInput } from '../../src/contracts/sale.js';
import type { BenchTemporal, BenchWorkers } from './env.js';
import { benchFixture, benchSale, DEMO, NAIROBI_LINES, progress, startBenchSandbox, startBenchWorkers } from './env.js';
import { activityWait, signedRecorded, signingActivity, waitsBefore } from './history.js';
import type { PriorityReport } from './report.js';
import { mapLimit, medianByKey, summarise } from './stats.js';
import type { Sandbox } from '../../sandbox/server.js';

export const PRIORITY_REQUESTS_PER_MINUTE = 600;
const PURCHASES_SYNC_WORKFLOW_TYPE = 'purchasesSyncWorkflow';

/** Every stock-tracked Nairobi item once: the most stock movements one sale makes. */
const MANY_LINES: SaleInput['lines'] = [
  DEMO.items.milk,
  DEMO.items.sugar,
  DEMO.items.cookingOil,
  DEMO.items.maizeSeed,
  DEMO.items.lpgRefill,
].map((itemId) => ({
  itemId,
  quantity: 1,
  unitPrice: 100,
}));

/** `count` fresh Nairobi items that lack nothing and are not registered yet: each registers with one request. */
function addPendingItems(fixture: ComplianceFixtureInput, count: number, tag: string): string[] {
  const business = fixture.businesses?.find((b) => b.id === DEMO.businesses.nairobi);
  const source = business?.items?.find((i) => i.id === DEMO.items.bathSoap);
  if (!business || !source) throw new Error('the demo world has no Nairobi bath soap');
  const ids = Array.from({ length: count }, (_, i) => `${source.id}_bench_${tag}_${i}`);
  business.items = [
    ...(business.items ?? []),
    ...ids.map((id, i) => ({ ...source, id, externalId: `${source.externalId}-bench-${tag}-${i}` })),
  ];
  return ids;
}

async function tillWaits(t: BenchTemporal, w: BenchWorkers, tag: string, count: number) {
  const waits: number[] = [];
  const activityWaits: Record<string, number>[] = [];
  let activity: string | undefined;
  await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    count,
    async (i) => {
      // A till rings up a sale every half second or so, not all in the same millisecond.
      await new Promise((r) => setTimeout(r, i * 500));
      const { workflowId } = await w.sales.startSale(benchSale(`BENCH-TILL-${tag}-${i}`, NAIROBI_LINES));
      await t.client.workflow.getHandle(workflowId).result();
      const events = await t.events(workflowId);
      activity ??= signingActivity(events);
      const wait = activity ? activityWait(events, activity) : undefined;
      if (wait !== undefined) waits.push(wait);
      const recorded = signedRecorded(events);
      if (recorded) activityWaits.push(waitsBefore(events, recorded));
    },
  );
  return { waits, activity, activityWaits: medianByKey(activityWaits) };
}

async function signedCount(sandbox: Sandbox, since: number): Promise<number> {
  return sandbox.stats
    .records({ since, service: 'compliance' })
    .filter((r) => r.method === 'POST' && r.route === '/v1/sales' && r.status < 300).length;
}

export async function measurePriority(
  t: BenchTemporal,
  options: { tills: number; stockSales: number; registrations: number; purchasesSyncs: number; tag: string },
): Promise<PriorityReport> {
  const rpm = PRIORITY_REQUESTS_PER_MINUTE;
  let itemIds: string[] = [];
  const sandbox = await startBenchSandbox(
    benchFixture({
      requestsPerWindow: rpm,
      adjust: (f) => {
        itemIds = addPendingItems(f, options.registrations, options.tag);
      },
    }),
  );
  const workers = await startBenchWorkers(t, sandbox, { requestsPerMinute: rpm, purchases: true });
  const backlog: string[] = [];
  try {
    progress(`priority: ${options.tills} till sales on the idle budget, then behind a backlog (budget ${rpm}/min)`);
    await tillWaits(t, workers, `WARM-${options.tag}`, 1);
    const idle = await tillWaits(t, workers, `IDLE-${options.tag}`, options.tills);
    const since = Date.now();
    backlog.push(
      ...(await mapLimit(
        Array.from({ length: options.stockSales }, (_, i) => i),
        20,
        async (i) =>
          (await workers.sales.startSale(benchSale(`BENCH-BULK-${options.tag}-${i}`, MANY_LINES))).workflowId,
      )),
    );
    // The bulk sales' own signing goes first (same priority as a till's): the till comes once only their stock is left.
    while ((await signedCount(sandbox, since)) < options.stockSales) await new Promise((r) => setTimeout(r, 100));
    for (const itemId of itemIds) {
      const workflowId = itemRegistrationWorkflowId(DEMO.businesses.nairobi, itemId);
      await t.client.workflow.start(ITEM_REGISTRATION_WORKFLOW_TYPE, {
        taskQueue: workers.taskQueue,
        workflowId,
        args: [{ businessId: DEMO.businesses.nairobi, itemId }],
      });
      backlog.push(workflowId);
    }
    for (let i = 0; i < options.purchasesSyncs; i++) {
      const workflowId = `bench-purchases-${randomUUID().slice(0, 8)}`;
      await t.client.workflow.start(PURCHASES_SYNC_WORKFLOW_TYPE, {
        taskQueue: workers.taskQueue,
        workflowId,
        args: [{ businessId: DEMO.businesses.nairobi }],
      });
      backlog.push(workflowId);
    }
    const busy = await tillWaits(t, workers, `BUSY-${options.tag}`, options.tills);
    const running = await mapLimit(
      backlog,
      20,
      async (id) => (await t.client.workflow.getHandle(id).describe()).status.name === 'RUNNING',
    );
    return {
      backlogStillRunning: running.filter(Boolean).length,
      tillActivityWaitsMs: busy.activityWaits,
      tillWaitMs: summarise(busy.waits),
      idleWaitMs: summarise(idle.waits),
      signingActivity: busy.activity ?? idle.activity,
      backlog: {
        stockSales: options.stockSales,
        stockLinesEach: MANY_LINES.length,
        registrations: options.registrations,
        purchasesSyncs: options.purchasesSyncs,
      },
      requestsPerMinute: rpm,
    };
  } finally {
    await mapLimit(backlog, 20, (id) =>
      t.client.workflow
        .getHandle(id)
        .terminate('bench: priority measured')
        .catch(() => undefined),
    );
    await workers.stop();
    await sandbox.close();
  }
}

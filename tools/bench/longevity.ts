/**
 * What a merchant meets in its second year (`npm run bench -- --only longevity`): one business of a chain whose
 * service already holds two years of supplier invoices, stock-in switched on from a year back, a till selling; then
 * a day of purchases syncs while invoices up to a year old change status and late ones arrive.
 *
 * The world (longevity-world.ts): full, 100 branches, 10,000 items, 400 suppliers with 20,000 mappings, 300 invoices
 * a day for 730 days (~219,000, 3–8 lines each); quick (~4 min on 2 cores), 4 branches, 2,000 items, 40 suppliers
 * with 2,000 mappings, 12 invoices on every day of the last two weeks and on every 20th day before (~600 over the
 * same 730 days: fewer days, so fewer purchases books, the quick run's cost). One worker process (longevity-worker.ts:
 * `npm run worker`'s start-up, with the sync's options) on a task queue of its own, a file sink (NDJSON),
 * STOCK_IN_BY_BUSINESS from a year back, coalesced stock reporting.
 *
 * Time runs k times faster (full k = 24, quick k = 120): the sandbox's window is a minute over k with 120 requests
 * in it (the real limit for the whole run, seeding included: the sandbox's limit cannot be changed at run time, and
 * the first sync fits in it), the worker's budget and STOCK_MAX_DELAY alike, the stock-in is started by the bench
 * with `settledKept` an hour over k, the syncs are triggered every 15 minutes over k. The sync sizes its sweep by the
 * real time between syncs, so a sweep of the horizon once per 24 simulated hours needs `sweepHours` = 24 / k; the
 * workflow refuses below 1 (settingsOf), so a run with k > 24 passes 1 and its sweep is k / 24 times slower than the
 * product's (said in the report's notes).
 *
 * The run, in order:
 * 1. The schedule is made by the bench (as the worker would, not triggered), the worker started, the stock-in started
 *    with `settledKept`, the mappings put (StockInClient.putMappings, 1,000 an update).
 * 2. The first sync (the schedule triggered): it lists the whole horizon; the bench waits until the sandbox holds every
 *    line of the last year's confirmed invoices, then until the stock-in has put its settled invoices in their books
 *    (it does so when work wakes it: after the first sync none comes, so the bench signals an empty `purchasesSeen`).
 * 3. The till alone (3 to warm up, then `tillAlone`), a sale about every `tillEveryMs` (real).
 * 4. The day: a sync every interval (the schedule triggered, BUFFER_ONE), the plan's changes between them through
 *    the inspection API (`POST /__sandbox/purchases/{id}/review`, `POST /__sandbox/purchases` held until the next
 *    pull), the till selling; then up to `drainSyncs` more syncs until every change is delivered.
 * 5. The till alone again; the ledgers drained; the figures.
 *
 * The figures (longevity-math.ts): payloads and history lengths from every run's history on the task queue
 * (longevity-histories.ts); the sync's requests from the sandbox's log (route `/v1/purchases*`) over the day's syncs
 * ÷ (120 × the day's simulated minutes); each change's delay from the sink file (polled) and the sandbox's movements
 * (carried by quantity per branch, item, action and price); duplicates and losses from both; stock from the sandbox's
 * levels against opening + lines of invoices confirmed at the end and dated from the start date − sales. A change no
 * listing reached by the run's end is not due yet: left out of `lost` and of the stock expected, counted apart.
 *
 * Quick, and how its figures reach the full scale (the method; full runs measure every key directly):
 * - `maxPayloadBytes`: the largest payload of each kind (workflow type, event, part, name) grows with what it holds,
 *   by the ratio of the full world's count to the quick one's (longevity-math.ts payloadScale): bounded kinds (a page
 *   of the sync, measured on the quick run's full pages of 100; an update of the mappings client) stay; a book's
 *   records × the invoices a day (at most a date-shard's, 75); a sync's carry and result × the invoices in review;
 *   a stock-in's carry and writes × the invoices held (unless its largest share one record count: cut in batches);
 *   a ledger's carry up to its caps. The key is the largest so scaled; the largest measured is beside it.
 * - `syncBudgetShare`: a full day of the model (syncDayModel: the product's planListings for the sweep at 15 minutes
 *   and sweepHours 24, a page per 100 invoices of each listing, the world's review shares and change rates), checked
 *   against the same model at the run's scale, which the run measures (requests per sync by pass, side by side).
 * - `oldChangeDelayHours`: measured; an old change only the sweep lists that the run's slower sweep had not reached
 *   counts at the product's bound: the longest a date waits between two listings by the window or the sweep over
 *   three days of the model, plus one interval.
 * - `stateBytes`: each state's bytes per record × the full world's records (a book's a date-shard's; the stock-in's the
 *   last hour's changes; the sync's result its invoices in review); a year's growth per record × those a year keeps.
 */
import { MIN_SWEEP_HOURS } from '../../workflows/purchases-sync/ledger.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/server.js';
import { syncPurchasesNow, type SyncPurchasesResult } from '../../src/client/purchases.js';
import { StockInClient } from '../../src/client/stock-in.js';
import {
  PURCHASES_SYNC_WORKFLOW_TYPE,
  purchasesScheduleId,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../../src/contracts/purchases-sync.js';
import {
  PURCHASES_BOOK_SHARDS,
  PURCHASES_BOOK_WORKFLOW_TYPE,
  purchasesBookId,
  purchasesBookShard,
  readBookUpdate,
} from '../../src/contracts/purchases-book.js';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { BusinessId } from '../../src/contracts/search-attributes.js';
import {
  STOCK_LEDGER_WORKFLOW_TYPE,
  getStockLedgerStateQuery,
  stockLedgerWorkflowId,
} from '../../src/contracts/stock-ledger.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  getStockInStateQuery,
  purchasesSeenSignal,
  stockInWorkflowId,
  type StockInInput,
  type StockInState,
} from '../../src/contracts/stock-in.js';
import { ensurePurchasesSyncSchedules } from '../../src/purchases/schedule.js';
import { todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { perMinute } from './budget-math.js';
import type { BenchTemporal } from './env.js';
import { progress, startBenchSandbox, workerProcessEnv } from './env.js';
import { decodeSite, readHistories, type Histories } from './longevity-histories.js';
import {
  budgetShare,
  carriedAt,
  changeOutcomes,
  chunkBound,
  duplicateEvents,
  expectedOnHand,
  finalStatuses,
  groupKey,
  passOf,
  payloadScale,
  recordsIn,
  scaledLedgerCarry,
  scaledPayload,
  simHours,
  stockExact,
  stockGroups,
  stockMoves,
  syncDayModel,
  type LongevityMovement,
  type PassName,
  type RunScales,
  type SinkEvent,
  type StockDemand,
} from './longevity-math.js';
import type { LongevityReport, PayloadKind, StateSize } from './longevity-report.js';
import {
  RECENT_STATUS_SHARES,
  TILL_OPENING_STOCK,
  addDays,
  longevityWorld,
  purchaseFixture,
  tillSale,
  type LongevityWorld,
  type LongevityWorldOptions,
  type PlannedChange,
} from './longevity-world.js';
import { spawnBenchWorker, type StockWorkerProcess as WorkerProcess } from './stock-process.js';
import { mapLimit, median, percentile, round } from './stats.js';
import { tillCall } from './till.js';

export interface LongevitySizes {
  k: number;
  requestsPerMinute: number;
  maxDelaySeconds: number;
  days: number;
  /** Invoices of a day with invoices: every day of the last 14, every `stride`-th day before. */
  invoicesPerDay: number;
  stride: number;
  items: number;
  suppliers: number;
  mappedPerSupplier: number;
  byNamePerSupplier: number;
  branches: number;
  syncs: number;
  /** At most this many syncs after the day, until every change is delivered. */
  drainSyncs: number;
  windowDays: number;
  horizonDays: number;
  lateInvoices: number;
  newInvoices: number;
  atLeast: number;
  tillAlone: number;
  tillEveryMs: number;
  /** Longest waits (real ms): the first sync and its stock; a sync of the day. */
  firstSyncMs: number;
  settleMs: number;
}

/** The full run's world and day; the quick one's (~4 min on 2 cores) is a smaller history and a shorter day. */
export function longevitySizes(quick: boolean): LongevitySizes {
  const shared = {
    requestsPerMinute: 120,
    maxDelaySeconds: 180,
    days: 730,
    mappedPerSupplier: 50,
    byNamePerSupplier: 5,
    windowDays: 7,
    horizonDays: 730,
    tillEveryMs: 1_000,
  };
  return quick
    ? {
        ...shared,
        k: 120,
        invoicesPerDay: 12,
        stride: 20,
        items: 2_000,
        suppliers: 40,
        branches: 4,
        syncs: 8,
        drainSyncs: 2,
        lateInvoices: 3,
        newInvoices: 4,
        atLeast: 2,
        tillAlone: 10,
        firstSyncMs: 900_000,
        settleMs: 180_000,
      }
    : {
        ...shared,
        k: 24,
        invoicesPerDay: 300,
        stride: 1,
        items: 10_000,
        suppliers: 400,
        branches: 100,
        syncs: 96,
        // A direct rejection waits for the sweep: up to a whole cycle (about 91 syncs) after the day's last change.
        drainSyncs: 100,
        lateInvoices: 20,
        newInvoices: 300,
        atLeast: 1,
        tillAlone: 20,
        firstSyncMs: 6 * 3_600_000,
        settleMs: 600_000,
      };
}

/** The full run's invoices a day: what a quick run's per-invoice figures are scaled to. */
const FULL_PER_DAY = 300;
/** The full run's late invoices a day. */
const FULL_LATE = 20;
const SEED = 41;
const TILL_ITEMS = 30;
/** Every day of the last two weeks has invoices (the window and the review statuses are a merchant's). */
const DENSE_DAYS = 14;
const TILL_WARM_UP = 3;
const POLL_MS = 500;
const SINK_POLL_MS = 250;
const OLD_PENDING_SHARE = 0.005;
const OLD_REJECTED_SHARE = 0.05;
const SHARES = { unconfirmThenConfirm: 0.01, unconfirmThenReject: 0.002, rejectAtOnce: 0.002, recentReview: 0.6 };

interface TillSale {
  workflowId: string;
  sale: SaleInput;
  clientStart: number;
  ms: number;
}

/** A sale about every `everyMs` (moved by −250…+249 ms), each timed from its one call to the signed receipt in hand. */
function startTill(
  t: BenchTemporal,
  taskQueue: string,
  make: (n: number) => SaleInput,
  counter: { n: number },
  everyMs: number,
) {
  const sales: TillSale[] = [];
  let stopping = false;
  const running = (async () => {
    while (!stopping) {
      const n = counter.n++;
      const sale = make(n);
      const clientStart = Date.now();
      const began = performance.now();
      for (let attempt = 0; ; attempt++) {
        try {
          const answer = await tillCall(t, taskQueue, sale);
          if (answer.signed) break;
          throw new Error(`longevity: till sale ${sale.traderInvoiceNumber} not signed (${answer.state.step})`);
        } catch (err) {
          if (attempt >= 20) throw err;
          await sleep(500);
        }
      }
      sales.push({
        workflowId: saleWorkflowId(sale.businessId, sale.traderInvoiceNumber),
        sale,
        clientStart,
        ms: performance.now() - began,
      });
      const phaseMs = ((n * 377) % 500) - 250;
      await sleep(Math.max(0, everyMs + phaseMs - (performance.now() - began)));
    }
  })();
  return {
    sales,
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}

async function tillSales(
  t: BenchTemporal,
  taskQueue: string,
  make: (n: number) => SaleInput,
  counter: { n: number },
  everyMs: number,
  count: number,
): Promise<TillSale[]> {
  const till = startTill(t, taskQueue, make, counter, everyMs);
  while (till.sales.length < count) await sleep(100);
  await till.stop();
  return till.sales;
}

async function until(done: () => Promise<boolean>, deadline: number, everyMs = POLL_MS): Promise<boolean> {
  for (;;) {
    if (await done().catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/** The sink's NDJSON, read as it grows: each event with the moment the bench first saw it. */
function sinkReader(path: string) {
  const events: SinkEvent[] = [];
  let offset = 0;
  let rest = '';
  const read = () => {
    if (!existsSync(path)) return;
    const buffer = readFileSync(path);
    if (buffer.length <= offset) return;
    const text = rest + buffer.subarray(offset).toString('utf8');
    offset = buffer.length;
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    const now = Date.now();
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        const e = JSON.parse(line) as { id: string; type: string; purchase: { id: string; status: string } };
        const fingerprint = e.id.slice(e.id.lastIndexOf('.') + 1);
        events.push({
          id: e.id,
          type: e.type,
          purchaseId: e.purchase.id,
          status: e.purchase.status,
          fingerprint,
          seenAt: now,
        });
      } catch {
        // A line cut short: the sink writes the event again on a line of its own.
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    events,
    read,
    start: () => {
      timer = setInterval(read, SINK_POLL_MS);
    },
    stop: () => {
      clearInterval(timer);
      read();
    },
  };
}

/** The compliance requests of the application to `/v1/purchases*`, collected as the log (a ring) turns over. */
function purchaseRequests(box: Sandbox, application: string) {
  const seen = new Map<string, { at: number; status: number; path: string }>();
  let since = 0;
  const read = () => {
    for (const r of box.stats.records({ since, service: 'compliance', applicationId: application })) {
      if (!r.route.startsWith('/v1/purchases')) continue;
      seen.set(`${r.at}|${r.method}|${r.path}|${r.status}`, { at: r.at, status: r.status, path: r.path });
    }
    since = Math.max(0, Date.now() - 5_000);
  };
  return { read, within: (from: number, to: number) => [...seen.values()].filter((r) => r.at >= from && r.at < to) };
}

async function recorded(box: Sandbox, businessId: string): Promise<LongevityMovement[]> {
  return (await box.inspector.stockMovements({ businessId })).map((m) => ({
    branchId: m.branchId,
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
    referenceId: m.referenceId,
    at: Date.parse(m.at),
  }));
}

function worldOptions(
  options: LongevitySizes,
  tag: string,
  today: string,
  key: string,
  scale: { requestsPerWindow: number; windowMs: number },
): LongevityWorldOptions {
  return {
    businessId: `biz_lg_${tag}`,
    tag,
    key,
    today,
    days: options.days,
    invoicesPerDay: options.invoicesPerDay,
    stride: options.stride,
    denseDays: DENSE_DAYS,
    items: options.items,
    suppliers: options.suppliers,
    mappedPerSupplier: options.mappedPerSupplier,
    byNamePerSupplier: options.byNamePerSupplier,
    branches: options.branches,
    linesMin: 3,
    linesMax: 8,
    stockInDaysBack: 365,
    oldRejectedShare: OLD_REJECTED_SHARE,
    oldPendingShare: OLD_PENDING_SHARE,
    requestsPerWindow: scale.requestsPerWindow,
    windowMs: scale.windowMs,
    tillItems: TILL_ITEMS,
    seed: SEED,
    plan: {
      intervals: options.syncs,
      unconfirmThenConfirm: SHARES.unconfirmThenConfirm,
      unconfirmThenReject: SHARES.unconfirmThenReject,
      rejectAtOnce: SHARES.rejectAtOnce,
      atLeast: options.atLeast,
      lateInvoices: options.lateInvoices,
      lateDaysBack: [14, 42],
      newInvoices: options.newInvoices,
      recentReviewShare: SHARES.recentReview,
    },
  };
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');

export async function measureLongevity(
  t: BenchTemporal,
  options: LongevitySizes & { tag: string },
): Promise<LongevityReport> {
  const began = Date.now();
  const seconds: Record<string, number> = {};
  const lap = (name: string, from: number) => (seconds[name] = round((Date.now() - from) / 1000));
  const { k } = options;
  const windowMs = 60_000 / k;
  if (!Number.isInteger(windowMs)) throw new RangeError(`longevity: k = ${k} does not scale a minute to whole ms`);
  const intervalMs = (15 * 60_000) / k;
  const sweepHoursWanted = 24 / k;
  const sweepHoursUsed = Math.max(MIN_SWEEP_HOURS, sweepHoursWanted);
  const settledKept = { minutes: 60 / k, batch: 25 };
  const workerPerMinute = perMinute(options.requestsPerMinute, windowMs);
  const tag = options.tag.toLowerCase();
  const today = todayInKenya(Date.now());
  const world = longevityWorld(
    worldOptions(options, tag, today, `cmp_sk_test_bench_${randomBytes(18).toString('base64url')}`, {
      requestsPerWindow: options.requestsPerMinute,
      windowMs,
    }),
  );
  const { businessId, application } = world;
  const taskQueue = `bench-longevity-${randomUUID().slice(0, 8)}`;
  const scheduleId = purchasesScheduleId(businessId, taskQueue);
  const sinkPath = join(tmpdir(), `bench-longevity-${tag}.ndjson`);
  rmSync(sinkPath, { force: true });
  const syncOptions: PurchasesSyncOptions = {
    windowDays: options.windowDays,
    horizonDays: options.horizonDays,
    sweepHours: sweepHoursUsed,
  };
  const notes: string[] = [];
  if (sweepHoursWanted < 1)
    notes.push(
      `sweepHours ${round(sweepHoursWanted, 3)} (24 simulated hours at k = ${k}) is refused by the workflow (must be 1 to 744): ` +
        `the run passes 1, so its sweep covers the horizon once per ${round(k / 24, 2)} simulated days`,
    );
  const fixturePurchases = world.invoices.filter((v) => !v.arrives);
  // What the full world has more of: invoices a day with invoices, invoices in all, in review, changes an hour,
  // mappings, a branch's invoices a day.
  const inReviewOf = (perDay: number, stride: number) =>
    perDay *
    (RECENT_STATUS_SHARES.lastDay.pending_review +
      6 * RECENT_STATUS_SHARES.lastWeek.pending_review +
      (DENSE_DAYS - 7) * OLD_PENDING_SHARE +
      ((options.days - DENSE_DAYS) / stride) * OLD_PENDING_SHARE);
  const fullLastYear = FULL_PER_DAY * 365 * (1 - OLD_PENDING_SHARE - OLD_REJECTED_SHARE);
  // A full day's plan: old invoices un-confirmed then confirmed or rejected, rejected at once; late ones arriving and
  // confirmed; new ones arriving, four in five confirmed; last week's in review, some confirmed.
  const fullChangesPerDay =
    fullLastYear * (2 * SHARES.unconfirmThenConfirm + 2 * SHARES.unconfirmThenReject + SHARES.rejectAtOnce) +
    2 * FULL_LATE +
    1.8 * FULL_PER_DAY +
    SHARES.recentReview *
      FULL_PER_DAY *
      (RECENT_STATUS_SHARES.lastDay.pending_review + 6 * RECENT_STATUS_SHARES.lastWeek.pending_review);
  const simulatedDayHours = (options.syncs * 15) / 60;
  const scales: RunScales = {
    density: FULL_PER_DAY / options.invoicesPerDay,
    volume: (FULL_PER_DAY * options.days) / fixturePurchases.length,
    review: inReviewOf(FULL_PER_DAY, 1) / inReviewOf(options.invoicesPerDay, options.stride),
    activity: fullChangesPerDay / ((world.plan.length / simulatedDayHours) * 24),
    mappings: (400 * 50) / world.mappings.length,
    perBranch: FULL_PER_DAY / 100 / (fixturePurchases.length / (options.days * options.branches)),
  };
  progress(
    `longevity: ${businessId}, ${fixturePurchases.length} invoices over ${options.days} days, ${world.mappings.length} mappings, ` +
      `${world.plan.length} changes in a day of ${options.syncs} syncs every ${intervalMs} ms (k = ${k}, ${windowMs} ms windows)`,
  );

  let box: Sandbox | undefined;
  let worker: WorkerProcess | undefined;
  const reader = sinkReader(sinkPath);
  try {
    let phase = Date.now();
    box = await startBenchSandbox(world.fixture);
    const sandbox = box;
    const requests = purchaseRequests(sandbox, application);
    lap('sandbox', phase);

    // 1. The schedule as the worker would make it, not triggered: the first sync waits for the stock-in and mappings.
    phase = Date.now();
    await ensurePurchasesSyncSchedules(t.client, {
      businessIds: [businessId],
      interval: '7d',
      taskQueue,
      options: syncOptions,
      triggerImmediately: false,
    });
    const env = {
      ...workerProcessEnv(t, sandbox, workerPerMinute),
      COMPLIANCE_API_KEY: world.key,
      COMPLIANCE_BUSINESS_ID: businessId,
      STOCK_REPORTING: 'coalesced',
      STOCK_MAX_DELAY: `${(options.maxDelaySeconds * 1000) / k}ms`,
      STOCK_IN_BY_BUSINESS: `${businessId}=${world.stockInFrom}`,
      PURCHASES_SYNC_INTERVAL: '7d',
      PURCHASES_SINK: `file:${sinkPath}`,
      BENCH_TASK_QUEUE: taskQueue,
      BENCH_SYNC_OPTIONS: JSON.stringify(syncOptions),
    };
    worker = spawnBenchWorker('tools/bench/longevity-worker.ts', 'longevity worker', env);
    await worker.ready;
    const stockInId = stockInWorkflowId(taskQueue, businessId);
    await t.client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
      workflowId: stockInId,
      taskQueue,
      args: [{ businessId, settledKept } satisfies StockInInput],
      typedSearchAttributes: [{ key: BusinessId, value: businessId }],
    });
    const stockInClient = new StockInClient(t.client, { taskQueue });
    const put = await stockInClient.putMappings(businessId, world.mappings);
    lap('workerAndMappings', phase);
    progress(`longevity: worker ready, ${put.imported} mappings put (the stock-in holds ${put.mappings})`);

    // 2. The first sync: the whole horizon, the last year's confirmed invoices stocked, then put away.
    const salePrices = new Map(world.catalogue.map((c) => [c.id, c.unitPrice]));
    const tillBranch = world.branches[0]!.id;
    const isStockIn = (m: LongevityMovement) =>
      m.quantity > 0 && (m.action === 'ADD' || m.branchId !== tillBranch || salePrices.get(m.itemId) !== m.unitPrice);
    const startMoves = stockMoves(world.invoices, [], world.stockInFrom);
    phase = Date.now();
    const first = await syncPurchasesNow(t.client, businessId, {
      taskQueue,
      wait: true,
      timeoutMs: options.firstSyncMs,
    });
    const firstSyncSeconds = round((Date.now() - phase) / 1000);
    progress(`longevity: first sync done in ${firstSyncSeconds} s (${first.result?.counts.seen ?? '?'} invoices seen)`);
    const stocked = await until(
      async () =>
        stockGroups(world.invoices, startMoves, await recorded(sandbox, businessId), isStockIn).under.length === 0,
      phase + options.firstSyncMs,
      1_000,
    );
    const stockedSeconds = round((Date.now() - phase) / 1000);
    progress(`longevity: the last year's stock ${stocked ? 'recorded' : 'NOT all recorded'} after ${stockedSeconds} s`);
    const stateOf = async (): Promise<StockInState | undefined> =>
      t.client.workflow
        .getHandle(stockInId)
        .query(getStockInStateQuery)
        .catch(() => undefined);
    // A settled invoice goes to its book once it has been settled `settledKept` and the stock-in wakes (work comes):
    // after the first sync nothing comes, so the bench sends what an empty tell would (no invoice, its settings).
    const putAwayFrom = Date.now();
    const nudge = () =>
      t.client.workflow.getHandle(stockInId).signal(purchasesSeenSignal, {
        purchases: [],
        settings: { from: world.stockInFrom, allOrNothing: false },
        taskQueue,
      });
    let held = Number.NaN;
    let nudged = 0;
    await until(
      async () => {
        // The first once the last invoice told has been settled `settledKept`; then as the later ones come due.
        await sleep(nudged++ === 0 ? settledKept.minutes * 60_000 + 1_000 : 5_000);
        await nudge();
        await sleep(3_000);
        held = (await stateOf())?.invoices.length ?? Number.NaN;
        return held < 100;
      },
      putAwayFrom + settledKept.minutes * 60_000 * 4 + 30_000,
      0,
    );
    const putAwaySeconds = round((Date.now() - putAwayFrom) / 1000);
    progress(`longevity: the stock-in holds ${held} invoices after ${putAwaySeconds} s (the rest in their books)`);
    const firstSyncRequests = requests;
    requests.read();
    lap('firstSync', phase);

    // 3. The till alone.
    const make = tillSale(world, { tillItems: TILL_ITEMS, tag: `${tag}-T`, today });
    const counter = { n: 0 };
    await tillSales(t, taskQueue, make, counter, options.tillEveryMs, TILL_WARM_UP);
    const aloneBefore = await tillSales(t, taskQueue, make, counter, options.tillEveryMs, options.tillAlone);

    // 4. The day.
    const loadBefore = loadavg()[0]!;
    phase = Date.now();
    reader.start();
    const dayStart = Date.now();
    const syncs: Array<{ index: number; triggeredAt: number; done: Promise<SyncPurchasesResult | undefined> }> = [];
    const triggerSync = (index: number) => {
      const done = syncPurchasesNow(t.client, businessId, { taskQueue, wait: true, timeoutMs: options.settleMs }).catch(
        (err: unknown) => {
          progress(`longevity: sync ${index} did not finish: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        },
      );
      syncs.push({ index, triggeredAt: Date.now(), done });
    };
    const byId = new Map(world.invoices.map((v) => [v.id, v]));
    const applied: Array<PlannedChange & { at: number }> = [];
    const apply = async (c: PlannedChange) => {
      const at = Date.now();
      if (c.kind === 'late_arrival' || c.kind === 'new_arrival')
        await sandbox.inspector.addPurchase(
          businessId,
          purchaseFixture(byId.get(c.purchaseId)!, world.suppliers, true),
        );
      else await sandbox.inspector.reviewPurchase(c.purchaseId, c.status);
      applied.push({ ...c, at });
    };
    const till = startTill(t, taskQueue, make, counter, options.tillEveryMs);
    const timeline = [
      ...Array.from({ length: options.syncs }, (_, i) => ({ at: i + 1, sync: i + 1 })),
      ...world.plan.map((change) => ({ at: change.atInterval, change })),
    ].sort((a, b) => a.at - b.at);
    for (const step of timeline) {
      const wait = dayStart + step.at * intervalMs - Date.now();
      if (wait > 0) await sleep(wait);
      if ('sync' in step) triggerSync(step.sync);
      else await apply(step.change);
      requests.read();
    }
    const dayEnd = Date.now();
    const daySyncs = await Promise.all(syncs.map((s) => s.done));
    const lastDaySyncEnd = Date.now();
    requests.read();
    progress(`longevity: the day's ${options.syncs} syncs done, ${applied.length} changes made`);

    // Drain: more syncs until every change is in the sink (and its stock recorded), or `drainSyncs` of them.
    const moves = () => stockMoves(world.invoices, applied, world.stockInFrom);
    const delivered = async () => {
      reader.read();
      const outcomes = outcomesOf(await recorded(sandbox, businessId));
      return outcomes.every((o) => o.lost === undefined);
    };
    const outcomesOf = (movements: LongevityMovement[]) => {
      const all = moves();
      const demands: StockDemand[] = [];
      applied.forEach((c, i) => {
        for (const move of all.filter((m) => m.change === i)) {
          const v = byId.get(move.purchaseId)!;
          for (const l of v.lines)
            demands.push({
              group: groupKey(v.branchId, l.itemId, move.action, l.unitPrice),
              quantity: l.quantity,
              at: c.at,
              change: i,
            });
        }
      });
      const dayMovements = movements
        .filter((m) => isStockIn(m) && m.at >= dayStart)
        .map((m) => ({ group: groupKey(m.branchId, m.itemId, m.action, m.unitPrice), quantity: m.quantity, at: m.at }));
      const times = carriedAt(demands, dayMovements);
      const stock = applied.map((_, i) => {
        const mine = demands.map((d, j) => [d, times[j]] as const).filter(([d]) => d.change === i);
        if (mine.length === 0) return { moves: false, at: undefined };
        const missing = mine.some(([, at]) => at === undefined);
        return { moves: true, at: missing ? undefined : Math.max(...mine.map(([, at]) => at!)) };
      });
      return changeOutcomes({ changes: applied, events: reader.events, stock, k });
    };
    let drained = 0;
    await sleep(1_000);
    while (!(await delivered()) && drained < options.drainSyncs) {
      drained++;
      const next = dayEnd + drained * intervalMs - Date.now();
      if (next > 0) await sleep(next);
      triggerSync(options.syncs + drained);
      await syncs.at(-1)!.done;
      await sleep(1_000);
      requests.read();
    }
    const allSyncs = await Promise.all(syncs.map((s) => s.done));
    const loadAfter = loadavg()[0]!;
    await till.stop();
    reader.read();
    lap('day', phase);
    progress(`longevity: ${drained} sync(s) after the day; the till alone again`);

    // 5. The till alone again; the ledgers drained.
    phase = Date.now();
    const aloneAfter = await tillSales(t, taskQueue, make, counter, options.tillEveryMs, options.tillAlone);
    const saleIds = Array.from({ length: counter.n }, (_, n) => {
      const s = make(n);
      return saleWorkflowId(s.businessId, s.traderInvoiceNumber);
    });
    await mapLimit(saleIds, 20, (id) =>
      Promise.race([
        t.client.workflow
          .getHandle(id)
          .result()
          .catch(() => undefined),
        sleep(60_000),
      ]),
    );
    const ledgersQuiet = await until(
      async () => {
        const states = await Promise.all(
          world.branches.map((b) =>
            t.client.workflow
              .getHandle(stockLedgerWorkflowId(taskQueue, businessId, b.id))
              .query(getStockLedgerStateQuery)
              .catch(() => undefined),
          ),
        );
        return states.every(
          (s) => s === undefined || (s.open.length === 0 && Object.values(s.pending).every((n) => n === 0)),
        );
      },
      Date.now() + 120_000,
      1_000,
    );
    if (!ledgersQuiet) notes.push('a stock ledger still held lines or open movements 120 s after the till stopped');
    reader.stop();
    lap('tillAfterAndDrain', phase);

    // The figures.
    phase = Date.now();
    progress('longevity: reading every history of the task queue');
    const histories = await readHistories(t, taskQueue, { syncType: PURCHASES_SYNC_WORKFLOW_TYPE });
    lap('histories', phase);
    phase = Date.now();
    // Which old changes a listing covered after they were made (the others: only the sweep would, later).
    const windowStart = addDays(today, -options.windowDays);
    const oldest = addDays(today, -options.horizonDays);
    const pulls = histories.listings.filter((l) => l.activity === 'pullPurchases');
    const listedAfter = (c: (typeof applied)[number]) => {
      const v = byId.get(c.purchaseId)!;
      const arrival = c.kind === 'late_arrival' || c.kind === 'new_arrival';
      // An arrival is listed once a pull after it fetched it, in that sync (a run of it: the same workflow id).
      const fetched = (l: (typeof histories.listings)[number]) =>
        !arrival || pulls.some((p) => p.workflowId === l.workflowId && p.at > c.at && p.at <= l.at);
      return histories.listings.some(
        (l) =>
          l.activity === 'listPurchasesPage' &&
          l.at > c.at &&
          fetched(l) &&
          (l.query.status === undefined || l.query.status === c.status) &&
          (l.query.fromDate === undefined || l.query.fromDate <= v.invoiceDate) &&
          (l.query.toDate === undefined || v.invoiceDate <= l.query.toDate),
      );
    };
    const listed = applied.map(listedAfter);

    const movements = await recorded(sandbox, businessId);
    const outcomes = outcomesOf(movements);
    const lostChanges = outcomes.filter((o, i) => o.lost !== undefined && listed[i]);
    const notYetListed = outcomes.filter((o, i) => o.lost !== undefined && !listed[i]);
    // What the shelves should hold counts the changes a sync has listed: one no listing reached yet is not due.
    const due = applied.filter((_, i) => !(outcomes[i]!.lost !== undefined && !listed[i]));
    const levels = new Map(
      (await sandbox.inspector.stockLevels(businessId)).map((l) => [`${l.branchId}|${l.itemId}`, l.quantity]),
    );
    const final = finalStatuses(world.invoices, due);
    const sold = Array.from({ length: counter.n }, (_, n) => make(n).lines).flatMap((lines) =>
      lines.map((l) => ({ branchId: tillBranch, itemId: l.itemId, quantity: l.quantity })),
    );
    const expected = expectedOnHand({
      invoices: world.invoices,
      final,
      from: world.stockInFrom,
      opening: world.catalogue
        .slice(0, TILL_ITEMS)
        .map((c) => ({ branchId: tillBranch, itemId: c.id, quantity: TILL_OPENING_STOCK })),
      sold,
    });
    const exact = stockExact(expected, levels);
    const groups = stockGroups(
      world.invoices,
      stockMoves(world.invoices, due, world.stockInFrom),
      movements,
      isStockIn,
    );
    const startGroups = stockGroups(
      world.invoices,
      startMoves,
      movements.filter((m) => m.at < dayStart),
      isStockIn,
    );
    const dup = duplicateEvents(reader.events);

    // The sync's budget: the day's syncs' requests (the log) over what 120 a minute allows over the day.
    const dayRequests = requests.within(dayStart, lastDaySyncEnd);
    const simulatedMinutes = (options.syncs * intervalMs * k) / 60_000;
    const measuredShare = budgetShare(dayRequests.length, options.requestsPerMinute, simulatedMinutes);
    const dayRuns = new Set(daySyncs.flatMap((s) => (s?.workflowId ? [s.workflowId] : [])));
    const perSync = new Map<string, Partial<Record<PassName, number>>>();
    for (const l of histories.listings) {
      if (!dayRuns.has(l.workflowId)) continue;
      const counts = perSync.get(l.workflowId) ?? {};
      const pass: PassName = l.activity === 'pullPurchases' ? 'pull' : passOf(l.query, { windowStart, oldest });
      counts[pass] = (counts[pass] ?? 0) + 1;
      perSync.set(l.workflowId, counts);
    }
    const perSyncByPass: Partial<Record<PassName, number>> = {};
    for (const counts of perSync.values())
      for (const [pass, n] of Object.entries(counts))
        perSyncByPass[pass as PassName] = (perSyncByPass[pass as PassName] ?? 0) + n;
    for (const pass of Object.keys(perSyncByPass) as PassName[])
      perSyncByPass[pass] = round(perSyncByPass[pass]! / Math.max(1, perSync.size), 2);
    const modelOf = (
      perDay: number,
      stride: number,
      syncsOfDay: number,
      intervalMinutes: number,
      sweepHours: number,
      exits: number,
    ) =>
      syncDayModel({
        invoicesPerDay: perDay,
        stride,
        days: options.days,
        windowDays: options.windowDays,
        horizonDays: options.horizonDays,
        sweepHours,
        intervalMinutes,
        syncs: syncsOfDay,
        pageSize: 100,
        pulled: perDay * RECENT_STATUS_SHARES.lastDay.pulled,
        inReview:
          perDay *
          (RECENT_STATUS_SHARES.lastDay.pending_review +
            6 * RECENT_STATUS_SHARES.lastWeek.pending_review +
            (DENSE_DAYS - 7) * OLD_PENDING_SHARE +
            ((options.days - DENSE_DAYS) / stride) * OLD_PENDING_SHARE),
        oldReviewExitsPerDay: exits,
        newPerDay: perDay,
      });
    const yearConfirmed = (perDay: number) => perDay * 365 * (1 - OLD_PENDING_SHARE - OLD_REJECTED_SHARE);
    const exitsPerDay = (perDay: number) =>
      yearConfirmed(perDay) * (SHARES.unconfirmThenConfirm + SHARES.unconfirmThenReject);
    // The run's model: its day (syncs every interval, real minutes) and its exits over that day.
    const runExits = applied.filter(
      (c) => c.kind === 'reconfirm' || c.kind === 'reject_after_unconfirm' || c.kind === 'late_confirm',
    ).length;
    const runModel = modelOf(
      options.invoicesPerDay,
      options.stride,
      options.syncs,
      intervalMs / 60_000,
      sweepHoursUsed,
      (runExits * 24 * 60) / ((options.syncs * intervalMs) / 60_000),
    );
    const fullModel = modelOf(FULL_PER_DAY, 1, 96, 15, 24, exitsPerDay(FULL_PER_DAY) + FULL_LATE);
    const fullShare = budgetShare(fullModel.requests, options.requestsPerMinute, 24 * 60);
    const quick = options.invoicesPerDay < FULL_PER_DAY;

    // Delays: measured; old changes no listing reached count at the product's sweep bound (a quick run's sweep is slow).
    const oldDelivered = outcomes.filter((o) => o.old && o.delayHours !== undefined).map((o) => o.delayHours!);
    const oldLost = outcomes.some((o, i) => o.old && o.lost !== undefined && listed[i]);
    // The longest a date waits between two listings by the window or the sweep, plus one interval for the sync's own.
    const sweepBoundHours = fullModel.maxListingGapHours + 0.25;
    const oldNotListed = notYetListed.filter((o) => o.old).length;
    const oldChangeDelayHours = oldLost
      ? Number.POSITIVE_INFINITY
      : Math.max(0, ...oldDelivered, ...(oldNotListed > 0 ? [sweepBoundHours] : []));
    const byKind: LongevityReport['delays']['byKind'] = {};
    for (const kind of new Set(outcomes.map((o) => o.kind))) {
      const of = outcomes.filter((o) => o.kind === kind);
      const hours = of.flatMap((o) => (o.delayHours === undefined ? [] : [o.delayHours]));
      byKind[kind] = {
        changes: of.length,
        delivered: hours.length,
        maxHours: round(Math.max(0, ...hours), 3),
        p50Hours: round(hours.length ? median(hours) : Number.NaN, 3),
      };
    }

    // Payloads: the largest of each kind, its records, at the full scale.
    const kinds = new Map<string, (typeof histories.payloads)[number]>();
    for (const p of histories.payloads) {
      const kind = `${p.workflowType} ${p.event} ${p.part} ${p.name}`.trim();
      if (!kinds.has(kind)) kinds.set(kind, p);
    }
    const sitesOf = new Map<string, Array<(typeof histories.payloads)[number]>>();
    for (const p of histories.payloads) {
      const kind = `${p.workflowType} ${p.event} ${p.part} ${p.name}`.trim();
      sitesOf.set(kind, [...(sitesOf.get(kind) ?? []), p]);
    }
    const payloadKinds: PayloadKind[] = await mapLimit([...kinds].slice(0, 40), 4, async ([kind, site]) => {
      const value = await decodeSite(t, site).catch(() => undefined);
      const records = recordsIn(value);
      let ratio = payloadScale(site, scales);
      // A book holds one date's invoices of one shard: at most 75 at 300 a day.
      if (site.workflowType === PURCHASES_BOOK_WORKFLOW_TYPE && records > 0)
        ratio = Math.min(ratio, Math.max(1, FULL_PER_DAY / PURCHASES_BOOK_SHARDS / records));
      // A kind that grows with the business but whose largest payloads share one record count is cut in batches.
      if (ratio > 1 && site.workflowType === STOCK_IN_WORKFLOW_TYPE) {
        const top = (sitesOf.get(kind) ?? []).slice(0, 5);
        const counts = await mapLimit(top, 2, async (x) => recordsIn(await decodeSite(t, x).catch(() => undefined)));
        if (chunkBound(counts)) ratio = 1;
      }
      return {
        kind,
        bytes: site.bytes,
        at: { workflowId: site.workflowId, runId: site.runId, eventId: site.eventId },
        records,
        ratio: round(ratio, 2),
        scaledBytes:
          site.workflowType === STOCK_LEDGER_WORKFLOW_TYPE && site.part === 'input'
            ? scaledLedgerCarry(site.bytes, value, ratio)
            : scaledPayload({ bytes: site.bytes, records, ratio }),
      };
    });
    payloadKinds.sort((a, b) => b.scaledBytes - a.scaledBytes);
    const measuredMax = histories.payloads[0]!;
    const maxPayloadBytes = quick ? (payloadKinds[0]?.scaledBytes ?? measuredMax.bytes) : measuredMax.bytes;
    const longest = [...histories.runs].sort((a, b) => b.events - a.events)[0]!;
    const runsByType: LongevityReport['runsByType'] = {};
    for (const r of histories.runs) {
      const e = (runsByType[r.workflowType] ??= { runs: 0, maxEvents: 0 });
      e.runs++;
      e.maxEvents = Math.max(e.maxEvents, r.events);
    }

    // Long-lived state at the end.
    const stateBytes = await statesAtEnd(t, {
      world,
      taskQueue,
      today,
      horizonDays: options.horizonDays,
      scales,
      lastResult: [...allSyncs].reverse().find((s) => s?.result)?.result,
      stockIn: await stateOf(),
      histories,
      invoicesPerDay: options.invoicesPerDay,
    });

    const dayTill = till.sales;
    const alone = [...aloneBefore, ...aloneAfter];
    const p50 = (sales: readonly TillSale[]) => median(sales.map((s) => s.ms));
    const atStart: Record<string, number> = {};
    for (const v of fixturePurchases) atStart[v.status] = (atStart[v.status] ?? 0) + 1;
    const planCounts: Record<string, number> = {};
    for (const c of world.plan) planCounts[c.kind] = (planCounts[c.kind] ?? 0) + 1;
    const stockedInvoices = new Set(startMoves.map((m) => m.purchaseId));
    lap('figures', phase);
    seconds.total = round((Date.now() - began) / 1000);
    if (quick)
      notes.push(
        'quick: maxPayloadBytes and syncBudgetShare are at the full scale (the header of tools/bench/longevity.ts says how); measured beside them',
      );
    return {
      k,
      windowMs,
      requestsPerMinute: options.requestsPerMinute,
      syncIntervalMs: intervalMs,
      syncs: options.syncs,
      drainSyncs: drained,
      simulatedHours: simHours(options.syncs * intervalMs, k),
      sweepHoursWanted,
      sweepHoursUsed,
      settledKeptMinutes: settledKept.minutes,
      scales,
      world: {
        business: businessId,
        branches: world.branches.length,
        items: world.catalogue.length,
        suppliers: world.suppliers.length,
        mappings: world.mappings.length,
        days: options.days,
        invoicesPerDay: options.invoicesPerDay,
        invoices: fixturePurchases.length,
        lines: fixturePurchases.reduce((n, v) => n + v.lines.length, 0),
        stockInFrom: world.stockInFrom,
        atStart,
        stockedAtStart: {
          invoices: stockedInvoices.size,
          lines: [...stockedInvoices].reduce((n, id) => n + byId.get(id)!.lines.length, 0),
        },
      },
      firstSync: {
        seconds: firstSyncSeconds,
        stockedSeconds,
        stocked,
        putAwaySeconds,
        heldAfter: held,
        requests: firstSyncRequests.within(0, dayStart).length,
        seen: first.result?.counts.seen ?? Number.NaN,
      },
      plan: planCounts,
      maxPayloadBytes,
      maxPayloadMeasured: measuredMax,
      payloadKinds,
      maxHistoryEventsPerRun: longest.events,
      longestRun: longest,
      runsByType,
      syncBudgetShare: quick ? fullShare : measuredShare,
      budget: {
        keyFrom: quick ? 'model at full scale' : 'measured',
        measuredShare,
        requests: dayRequests.length,
        simulatedMinutes,
        rateLimited: dayRequests.filter((r) => r.status === 429).length,
        perSyncByPass,
        daySyncsSeen: perSync.size,
        model: { run: runModel, full: fullModel, fullShare },
      },
      oldChangeDelayHours,
      delays: {
        byKind,
        notYetListed: notYetListed.length,
        sweepBoundHours,
        keyIncludesSweepBound: oldNotListed > 0,
      },
      duplicates: dup.sameId + dup.sameFact + groups.duplicateReferenceIds.length + groups.over.length,
      duplicatesDetail: {
        eventIdsTwice: dup.sameId,
        eventFactsTwice: dup.sameFact,
        referenceIdsTwice: groups.duplicateReferenceIds.length,
        groupsOver: groups.over.length,
        examples: [
          ...dup.examples,
          ...groups.duplicateReferenceIds.slice(0, 3),
          ...groups.over.slice(0, 3).map((g) => g.key),
        ],
      },
      lost: lostChanges.length + startGroups.under.length,
      lostDetail: {
        changes: lostChanges.map((o) => ({ purchaseId: o.purchaseId, kind: o.kind, lost: o.lost! })),
        groupsUnder: groups.under.length,
        groupsUnderOfStart: startGroups.under.length,
      },
      stockExact: round(exact.share, 4),
      stockDetail: { pairs: exact.pairs, off: exact.off.slice(0, 10) },
      tillLatencyRatio: round(p50(dayTill) / p50(alone), 3),
      till: {
        aloneP50Ms: round(p50(alone)),
        aloneSales: alone.length,
        dayP50Ms: round(p50(dayTill)),
        daySales: dayTill.length,
        p90DayMs: round(
          percentile(
            dayTill.map((s) => s.ms),
            90,
          ),
        ),
        loadAverage: { beforeDay: round(loadBefore, 2), afterDay: round(loadAfter, 2) },
      },
      stateBytes,
      histories: {
        runs: histories.runs.length,
        payloads: histories.payloads.length,
        readSeconds: round(histories.readMs / 1000),
      },
      seconds,
      sinkPath,
      notes,
    };
  } finally {
    reader.stop();
    rmSync(sinkPath, { force: true });
    await t.client.schedule
      .getHandle(scheduleId)
      .delete()
      .catch(() => undefined);
    await worker?.stop();
    // Every workflow of the section (books wait for their horizon's end): terminated in one batch.
    await t.client.workflowService
      .startBatchOperation({
        namespace: t.settings.namespace,
        jobId: `bench-longevity-${randomUUID()}`,
        visibilityQuery: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
        reason: 'bench: longevity section over',
        terminationOperation: {},
      })
      .catch(() => undefined);
    await box?.close();
  }
}

/** The largest purchases book's carry, the stock-in's carry and the sync's result at the end, and their growth. */
async function statesAtEnd(
  t: BenchTemporal,
  o: {
    world: LongevityWorld;
    taskQueue: string;
    today: string;
    horizonDays: number;
    scales: RunScales;
    lastResult: PurchasesSyncResult | undefined;
    stockIn: StockInState | undefined;
    histories: Histories;
    invoicesPerDay: number;
  },
): Promise<LongevityReport['stateBytes']> {
  const perYear = FULL_PER_DAY * 365;
  // The book with the most invoices: read whole (stock records too), as its carry would hold it.
  const books = new Map<string, { date: string; ids: string[] }>();
  for (const v of o.world.invoices) {
    const id = purchasesBookId(o.taskQueue, o.world.businessId, v.invoiceDate, v.id);
    const book = books.get(id) ?? { date: v.invoiceDate, ids: [] };
    book.ids.push(v.id);
    books.set(id, book);
  }
  // The fullest books of the last year (their records carry what each stocked) and of the year before.
  const fullest = (inYear: boolean) =>
    [...books]
      .filter(([, b]) => b.date >= o.world.stockInFrom === inYear)
      .sort((a, b) => b[1].ids.length - a[1].ids.length)
      .slice(0, 3);
  const biggest = [...fullest(true), ...fullest(false).slice(0, 1)];
  let book: StateSize = { bytes: 0, records: 0, bytesPerRecord: 0, scaledBytes: 0, growthPerYearBytes: 0, note: '' };
  for (const [workflowId, { date, ids }] of biggest) {
    const records = await t.client.workflow
      .getHandle(workflowId)
      .executeUpdate(readBookUpdate, { args: [{ ids, stock: true }] })
      .catch(() => ({}));
    const count = Object.keys(records).length;
    const carry = {
      businessId: o.world.businessId,
      date,
      horizonDays: o.horizonDays,
      carried: { schema: 1, records },
    };
    const bytes = jsonBytes(carry);
    if (bytes <= book.bytes || count === 0) continue;
    const perRecord = bytes / count;
    book = {
      bytes,
      records: count,
      bytesPerRecord: round(perRecord),
      // A book holds one date's invoices of one shard (of 4): 75 at 300 a day; a new book each date, none grows.
      scaledBytes: Math.round(perRecord * (FULL_PER_DAY / 4)),
      growthPerYearBytes: Math.round(perRecord * perYear),
      note: `${workflowId.split(':').slice(-2).join(':')} (shard ${purchasesBookShard(ids[0]!)}); growth: all books a year`,
    };
  }
  // The stock-in's carry: its invoices (the last hour's and those waiting), mappings (if it still holds them), totals.
  const carried = [...o.histories.payloads]
    .filter((p) => p.workflowType === STOCK_IN_WORKFLOW_TYPE && p.event === 'WORKFLOW_EXECUTION_CONTINUED_AS_NEW')
    .sort((a, b) => b.eventId - a.eventId)[0];
  const s = o.stockIn;
  const invoices = s?.invoices ?? [];
  const stockInBytes = jsonBytes({ settings: s?.settings, invoices, totals: s?.totals });
  const perInvoice = invoices.length ? jsonBytes(invoices) / invoices.length : Number.NaN;
  const waiting = invoices.filter((v) => v.state === 'waiting').length;
  const stockIn: StateSize = {
    bytes: stockInBytes,
    records: invoices.length,
    bytesPerRecord: round(perInvoice),
    // An hour's invoices at 300 a day (and the changes of the hour), as this run holds them per its own rate.
    scaledBytes: Math.round(
      stockInBytes + (Number.isFinite(perInvoice) ? perInvoice * invoices.length * (o.scales.activity - 1) : 0),
    ),
    // Only invoices waiting for a person stay: none in this world, so nothing grows but what a person leaves.
    growthPerYearBytes: Math.round((Number.isFinite(perInvoice) ? perInvoice : 0) * waiting * o.scales.volume),
    note:
      `getState at the end (${waiting} waiting for a person); ` +
      (carried ? `last continue-as-new input ${carried.bytes} B` : 'no continue-as-new in the run'),
  };
  const result = o.lastResult;
  const inReview = Object.values(result?.inReview ?? {}).reduce((n, ids) => n + ids.length, 0);
  const resultBytes = jsonBytes(result);
  const perId = inReview ? (jsonBytes(result?.inReview) - 2) / inReview : Number.NaN;
  const syncResult: StateSize = {
    bytes: resultBytes,
    records: inReview,
    bytesPerRecord: round(perId),
    scaledBytes: Math.round(resultBytes + (Number.isFinite(perId) ? perId * inReview * (o.scales.review - 1) : 0)),
    // Invoices that stay in review a year: the old ones never reviewed (until the horizon drops them).
    growthPerYearBytes: Math.round((Number.isFinite(perId) ? perId : 0) * OLD_PENDING_SHARE * perYear),
    note: `invoices in review by date (${inReview}); handed to the next sync by the schedule`,
  };
  return { book, stockIn, syncResult };
}

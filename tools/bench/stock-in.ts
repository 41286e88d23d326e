/**
 * Stock that comes in beside a till: one business of an application at 120 requests a window takes its confirmed
 * supplier invoices in as stock (STOCK_IN_BY_BUSINESS) while its till sells, k times faster than real time (the
 * sandbox's window a minute over k, the worker's budget and STOCK_MAX_DELAY alike; the lag scaled back). One worker
 * process (stock-worker.ts: what `npm run worker` runs, so it can be killed) on a task queue of its own. The run:
 * 1. the till alone (a few sales to warm up, then `tillAlone` timed);
 * 2. pass 1: the first half of the invoices reaches the sandbox and is confirmed on the dashboard, then the business's
 *    schedule runs a sync; a tenth of the lines are in a supplier's own wording and wait for a person;
 * 3. half-way through, the bench maps one line of each wording (update `mapLine`), as a person would;
 * 4. pass 2: the second half confirmed, then a sync started on its own (it knows nothing told, so it tells every
 *    confirmed invoice again); the worker is SIGKILLed once the pass's first line is recorded, and started again;
 * 5. pass 3: a twentieth of the first half goes back to review, then the schedule's sync again (it tells those and,
 *    from pass 1's result, the second half once more);
 * 6. when every line is recorded the till sells alone again;
 * 7. the till timed again, `tillRuns` − 1 times: a pass of new invoices (as many as a half) confirmed and synced while
 *    it sells, until their lines are recorded, then alone; the ledger drains. The till's ratio is the runs' median.
 * Every figure comes from the sandbox (its records of movements, its quantities, its request log), except how each
 * line was matched (the stock-in's own state) and when the run is over. See stock-in-math.ts and docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/server.js';
import { syncPurchasesNow } from '../../src/client/purchases.js';
import {
  PURCHASES_SYNC_WORKFLOW_TYPE,
  purchasesScheduleId,
  type PurchasesSyncInput,
  type PurchasesSyncResult,
} from '../../src/contracts/purchases-sync.js';
import { saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import {
  getStockInStateQuery,
  mapLineUpdate,
  stockInWorkflowId,
  type StockInState,
} from '../../src/contracts/stock-in.js';
import { tillProfile } from './catalogue.js';
import type { BenchTemporal } from './env.js';
import { progress, startBenchSandbox, workerProcessEnv } from './env.js';
import { median, medianRatioInterval, mapLimit, round } from './stats.js';
import { settle } from './stock-ledger-watch.js';
import { stockScale } from './stock-math.js';
import { spawnStockWorker, type StockWorkerProcess } from './stock-process.js';
import {
  addedLag,
  duplicatesOf,
  expectedOnHand,
  learnedMatches,
  quantityExact,
  seenTimes,
  stockInExactlyOnce,
  stockInRequests,
  type StockInMovement,
} from './stock-in-math.js';
import type { StockInPass, StockInReport, StockInTillRun } from './stock-in-report.js';
import {
  linesToMap,
  purchaseFixture,
  STOCK_IN_FROM,
  stockInWorld,
  wordingKey,
  type PlannedInvoice,
  type StockInWorldOptions,
} from './stock-in-world.js';
import { itemId, saleMaker, STARTING_STOCK } from './stock-world.js';
import { tillCall } from './till.js';

export interface StockInSizes {
  invoices: number;
  /** Distinct wordings of each of the five suppliers (every one met in the first half). */
  wordingsPerSupplier: number;
  /** The run is k times faster than real time. */
  k: number;
  /** Sales of the till alone before the backlog, and as many again after it. */
  tillAlone: number;
  /** The longest wait (real ms) for the stock-in's lines after the third pass, and for the ledger after the till. */
  settleMs: number;
  requestsPerMinute: number;
  maxDelaySeconds: number;
  items: number;
  linesPerInvoice: number;
  suppliers: number;
  takeBackEvery: number;
  /** Stock-tracked lines of each till sale. */
  tillLines: number;
  /** Times the till is timed during a backlog against alone: the whole run once, then a pass of new invoices each. */
  tillRuns: number;
}

/**
 * Quick (~3.5 min): 40 invoices, each of the five suppliers with two wordings; full: 200 invoices, four wordings each.
 * Both at k = 5: the worker, the server and the till on 2 cores with room to spare, and the default max delay of 3
 * minutes is 36 real seconds. Both time 20 sales alone per window, so each run's ratio divides by the p50 of 40 sales:
 * the quick section's ratios are as steady as the full one's on that side.
 */
export function stockInSizes(quick: boolean): StockInSizes {
  const shared = {
    k: 5,
    requestsPerMinute: 120,
    maxDelaySeconds: 180,
    items: 30,
    linesPerInvoice: 5,
    suppliers: 5,
    takeBackEvery: 20,
    tillLines: 3,
    tillRuns: 3,
    tillAlone: 20,
  };
  return quick
    ? { ...shared, invoices: 40, wordingsPerSupplier: 2, settleMs: 120_000 }
    : { ...shared, invoices: 200, wordingsPerSupplier: 4, settleMs: 300_000 };
}

const SEED = 29;
/** A fresh worker's first sales pay its start: left out of every figure. */
const TILL_WARM_UP = 3;
const TILL_RETRY_MS = 500;
const POLL_MS = 500;
/** The worker is killed this long after pass 2's sync read its first page, or this long after the pass began. */
const KILL_AFTER_LIST_MS = 500;
const KILL_AT_THE_LATEST_MS = 15_000;

interface TillSale {
  sale: SaleInput;
  workflowId: string;
  clientStart: number;
  inHands: number;
  ms: number;
}

/**
 * The till: a sale about every `everyMs` (each pause moved by −500 to +499 ms, so its sales meet every phase of the
 * second, as the catalogue section's till does), each timed from the call to the signed receipt in hand. A call that
 * fails (its worker killed under it) is made again; the time counts from the first.
 */
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
      for (;;) {
        try {
          const answer = await tillCall(t, taskQueue, sale);
          if (answer.signed) break;
          if (answer.state.parked)
            throw new Error(`stock-in: till sale ${sale.traderInvoiceNumber} parked: ${answer.state.parked.code}`);
        } catch (err) {
          if (err instanceof Error && err.message.startsWith('stock-in: till sale')) throw err;
          await sleep(TILL_RETRY_MS);
        }
      }
      sales.push({
        sale,
        workflowId: saleWorkflowId(sale.businessId, sale.traderInvoiceNumber),
        clientStart,
        inHands: Date.now(),
        ms: performance.now() - began,
      });
      const phaseMs = ((n * 377) % 1_000) - 500;
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

/** The till's next `count` sales, then it stops. */
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

function worldOptionsOf(
  options: StockInSizes,
  tag: string,
  scale: { requestsPerWindow: number; windowMs: number },
): StockInWorldOptions {
  return {
    businessId: `biz_stockin_${tag}`,
    items: options.items,
    invoices: options.invoices,
    linesPerInvoice: options.linesPerInvoice,
    suppliers: options.suppliers,
    wordingsPerSupplier: options.wordingsPerSupplier,
    takeBackEvery: options.takeBackEvery,
    requestsPerWindow: scale.requestsPerWindow,
    windowMs: scale.windowMs,
    seed: SEED,
    tag,
  };
}

async function recorded(sandbox: Sandbox, businessId: string): Promise<StockInMovement[]> {
  return (await sandbox.inspector.stockMovements({ businessId })).map((m) => ({
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
    referenceId: m.referenceId,
    at: Date.parse(m.at),
  }));
}

/** Waits for `done` (polled every `everyMs`) until `deadline`; answers whether it held. */
async function until(done: () => Promise<boolean>, deadline: number, everyMs = POLL_MS): Promise<boolean> {
  for (;;) {
    if (await done().catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

export async function measureStockIn(
  t: BenchTemporal,
  options: StockInSizes & { tag: string },
): Promise<StockInReport> {
  const scale = stockScale(options.k, {
    requestsPerMinute: options.requestsPerMinute,
    maxDelaySeconds: options.maxDelaySeconds,
  });
  const tag = options.tag.toLowerCase();
  const world = stockInWorld(worldOptionsOf(options, tag, scale));
  // The till's later runs: each a pass of new invoices, as many as the first half and like it (the same seed),
  // confirmed after the mapping (its wordings learned by then), never taken back.
  const laterRuns = Array.from({ length: Math.max(0, options.tillRuns - 1) }, (_, r) =>
    stockInWorld({ ...worldOptionsOf(options, tag, scale), tag: `${tag}r${r + 2}` })
      .invoices.filter((v) => v.half === 'first')
      .map((v): PlannedInvoice => ({ ...v, half: 'second', takenBack: false })),
  );
  const { businessId, key, application } = world.tenant;
  const taskQueue = `bench-stock-in-${randomUUID().slice(0, 8)}`;
  const scheduleId = purchasesScheduleId(businessId, taskQueue);
  const stockIn = t.client.workflow.getHandle(stockInWorkflowId(taskQueue, businessId));
  const stateOf = async (): Promise<StockInState | undefined> =>
    stockIn.query(getStockInStateQuery).catch(() => undefined);
  const directSyncs: string[] = [];
  let sandbox: Sandbox | undefined;
  let worker: StockWorkerProcess | undefined;
  try {
    const box = await startBenchSandbox(world.fixture);
    sandbox = box;
    const env = {
      ...workerProcessEnv(t, box, scale.workerRequestsPerMinute),
      COMPLIANCE_API_KEY: key,
      COMPLIANCE_BUSINESS_ID: businessId,
      STOCK_REPORTING: 'coalesced',
      STOCK_MAX_DELAY: `${scale.maxDelayMs}ms`,
      STOCK_IN_BY_BUSINESS: `${businessId}=${STOCK_IN_FROM}`,
      // The schedule runs its first sync at start-up; the bench runs the others.
      PURCHASES_SYNC_INTERVAL: '7d',
      BENCH_TASK_QUEUE: taskQueue,
    };
    let spawned = 0;
    const spawn = () => spawnStockWorker(`stock-in worker ${++spawned}`, env);
    progress(
      `stock-in: ${options.invoices} invoices × ${options.linesPerInvoice} lines for ${businessId}, ${options.requestsPerMinute} requests per ${scale.windowMs} ms window (k = ${scale.k}), STOCK_MAX_DELAY ${scale.maxDelayMs} ms`,
    );
    worker = spawn();
    await worker.ready;

    // The schedule's first sync (at start-up, before any invoice): pass 1's gets its result, as the next one would.
    await until(async () => {
      const { recentActions } = (await t.client.schedule.getHandle(scheduleId).describe()).info;
      const first = recentActions[0]?.action.workflow;
      if (!first) return false;
      await t.client.workflow.getHandle(first.workflowId, first.firstExecutionRunId).result();
      return true;
    }, Date.now() + 60_000);

    const make = saleMaker(world.world, businessId, { lines: options.tillLines, seed: SEED, tag: `${tag}-SIN` });
    const counter = { n: 0 };
    const everyMs = Math.round(3_000 / scale.k);
    await tillSales(t, taskQueue, make, counter, everyMs, TILL_WARM_UP);
    const before = await tillSales(t, taskQueue, make, counter, everyMs, options.tillAlone);

    const first = world.invoices.filter((v) => v.half === 'first');
    const second = world.invoices.filter((v) => v.half === 'second');
    const addAndConfirm = async (invoices: readonly PlannedInvoice[]) => {
      await mapLimit(invoices, 8, (v) => box.inspector.addPurchase(businessId, purchaseFixture(v, world.branchId)));
      await mapLimit(invoices, 8, (v) => box.inspector.reviewPurchase(v.id, 'confirmed'));
    };
    const passes: StockInPass[] = [];
    const backlogStart = Date.now();
    const till = startTill(t, taskQueue, make, counter, everyMs);
    const pass = async (
      how: StockInPass['how'],
      beforeIt: string,
      run: () => Promise<PurchasesSyncResult | undefined>,
    ) => {
      const at = Date.now();
      const result = await run();
      passes.push({
        pass: passes.length + 1,
        how,
        before: beforeIt,
        startedAtSeconds: round((at - backlogStart) / 1000),
        seconds: round((Date.now() - at) / 1000),
        seen: result?.counts.seen ?? Number.NaN,
      });
      progress(`stock-in: pass ${passes.length} (${how}) done in ${passes.at(-1)!.seconds} s`);
      return at;
    };
    const scheduled = async () =>
      (await syncPurchasesNow(t.client, businessId, { taskQueue, wait: true, timeoutMs: options.settleMs })).result;

    // Pass 1: the first half confirmed, the schedule's sync.
    await addAndConfirm(first);
    const pass1At = await pass('schedule', `${first.length} invoices confirmed`, scheduled);
    // Half-way through: the stock-in has every invoice of the first half, its lines in a supplier's wording waiting.
    const toMap = linesToMap(world.invoices);
    const told = await until(async () => {
      const state = await stateOf();
      const known = new Map(state?.invoices.map((v) => [v.purchaseId, v.state]));
      return first.every((v) => known.get(v.id) === 'added' || known.get(v.id) === 'waiting');
    }, Date.now() + options.settleMs);
    if (!told) progress('stock-in: the first half is NOT all known to the stock-in; mapping anyway');
    const mappedAt = new Map<string, number>();
    for (const { invoice, line } of toMap) {
      mappedAt.set(wordingKey(invoice.supplier.pin, line.wording!), Date.now());
      await stockIn.executeUpdate(mapLineUpdate, {
        args: [{ purchaseId: invoice.id, line: line.line, itemId: line.itemId, factor: 1 }],
      });
    }
    progress(`stock-in: ${toMap.length} wordings mapped by the bench as a person would`);

    // Pass 2: the second half confirmed, a sync on its own (every confirmed invoice told again); the worker killed.
    await addAndConfirm(second);
    const kill = { afterPassStartSeconds: Number.NaN, addMovementsBefore: 0, restartSeconds: Number.NaN };
    let killedAt = Number.POSITIVE_INFINITY;
    let servingAgainAt = Number.POSITIVE_INFINITY;
    const pass2At = await pass('direct', `${second.length} more confirmed; the worker killed during it`, async () => {
      const began = Date.now();
      const workflowId = `bench-stock-in-sync-${tag}-2`;
      directSyncs.push(workflowId);
      const sync = await t.client.workflow.start(PURCHASES_SYNC_WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [{ businessId } satisfies PurchasesSyncInput],
      });
      // Killed just after the sync read its first page: the stock-in being told, taking the invoices in, handing their
      // lines to the ledger. Read from the sandbox's log (a query of the stock-in would cost its worker CPU the till
      // shares).
      const listed = await until(
        async () =>
          box.stats
            .records({ since: began, service: 'compliance', applicationId: application })
            .some((r) => r.method === 'GET' && r.route === '/v1/purchases' && r.status === 200),
        began + KILL_AT_THE_LATEST_MS,
        50,
      );
      if (listed) await sleep(KILL_AFTER_LIST_MS);
      killedAt = Date.now();
      kill.addMovementsBefore = (await recorded(box, businessId)).filter(
        (m) => m.action === 'ADD' && m.quantity > 0 && m.at >= began,
      ).length;
      kill.afterPassStartSeconds = round((killedAt - began) / 1000);
      await worker?.kill();
      worker = spawn();
      progress(`stock-in: worker SIGKILLed ${kill.afterPassStartSeconds} s into pass 2, started again`);
      await worker.ready;
      servingAgainAt = Date.now();
      kill.restartSeconds = round((servingAgainAt - killedAt) / 1000);
      return (await sync.result()) as PurchasesSyncResult;
    });

    // Pass 3: a twentieth of the first half back to review, the schedule's sync over the same invoices.
    const takenBack = first.filter((v) => v.takenBack);
    await mapLimit(takenBack, 8, (v) => box.inspector.reviewPurchase(v.id, 'pending_review'));
    await pass('schedule', `${takenBack.length} back to pending review`, scheduled);

    // The backlog is over once the sandbox holds every line (and every take-back) and the stock-in waits for nothing.
    const salePrices = new Map(world.catalogue.map((c) => [itemId(businessId, c), c.unitPrice]));
    const invoices: PlannedInvoice[] = [...world.invoices];
    // The sandbox first: a query of the stock-in (every invoice's lines) costs its worker CPU the till shares.
    const allRecorded = () =>
      until(
        async () =>
          stockInExactlyOnce(invoices, await recorded(box, businessId), salePrices).under.length === 0 &&
          (await stateOf())?.totals.linesWaiting === 0,
        Date.now() + options.settleMs,
      );
    const drained = await allRecorded();
    const backlogEnd = Date.now();
    await till.stop();
    progress(
      `stock-in: backlog ${drained ? 'recorded' : 'NOT all recorded'} after ${round((backlogEnd - backlogStart) / 1000)} s; the till alone again`,
    );
    const after = await tillSales(t, taskQueue, make, counter, everyMs, options.tillAlone);

    // The till's later runs: one run's ratio is a draw (the moments a pass's lines meet its sales), so it is timed
    // again against a pass of new invoices, each followed by the till alone (compared with the alone before and after).
    const toldInRun = new Map<string, number>();
    const later: Array<{ sales: TillSale[]; alone: TillSale[]; start: number; end: number; drained: boolean }> = [];
    const aloneWindows = [before, after];
    for (const [r, run] of laterRuns.entries()) {
      const start = Date.now();
      const runTill = startTill(t, taskQueue, make, counter, everyMs);
      await addAndConfirm(run);
      invoices.push(...run);
      const at = await pass('schedule', `${run.length} new invoices confirmed: the till's run ${r + 2}`, scheduled);
      for (const v of run) toldInRun.set(v.id, at);
      const runDrained = await allRecorded();
      const end = Date.now();
      await runTill.stop();
      progress(
        `stock-in: run ${r + 2}'s pass ${runDrained ? 'recorded' : 'NOT all recorded'} after ${round((end - start) / 1000)} s; the till alone again`,
      );
      const alone = await tillSales(t, taskQueue, make, counter, everyMs, options.tillAlone);
      later.push({
        sales: runTill.sales.filter((s) => s.clientStart < end),
        alone: [...aloneWindows.at(-1)!, ...alone],
        start,
        end,
        drained: runDrained,
      });
      aloneWindows.push(alone);
    }
    const allSales = counter.n;
    const saleIds = Array.from({ length: allSales }, (_, n) => {
      const sale = make(n);
      return saleWorkflowId(sale.businessId, sale.traderInvoiceNumber);
    });
    const settleBy = Date.now() + options.settleMs;
    const ledger = await settle(t, { taskQueue, businessId }, saleIds, () => settleBy);
    const settledAt = Date.now();

    // The figures, from the sandbox.
    const movements = await recorded(box, businessId);
    const exact = stockInExactlyOnce(invoices, movements, salePrices);
    const levels = new Map(
      (await box.inspector.stockLevels(businessId))
        .filter((l) => l.branchId === world.branchId)
        .map((l) => [l.itemId, l.quantity]),
    );
    const sold = Array.from({ length: allSales }, (_, n) => make(n).lines).flat();
    const expected = expectedOnHand({
      items: world.catalogue.map((c) => itemId(businessId, c)),
      opening: () => STARTING_STOCK,
      invoices,
      sold,
    });
    const quantity = quantityExact(expected, levels);
    const inWindow = (at: number) => at >= backlogStart && at <= settledAt;
    const log = box.stats
      .records({ since: backlogStart, service: 'compliance', applicationId: application })
      .filter((r) => inWindow(r.at));
    const requests = stockInRequests(
      log,
      movements.filter((m) => inWindow(m.at)),
      salePrices,
    );
    const linesAdded = invoices.reduce((n, v) => n + v.lines.length, 0);
    const routes: Record<string, number> = {};
    for (const r of log) {
      const route = `${r.method} ${r.route}${r.status >= 200 && r.status < 300 ? '' : ` ${r.status}`}`;
      routes[route] = (routes[route] ?? 0) + 1;
    }
    const toldAt = (v: PlannedInvoice) => toldInRun.get(v.id) ?? (v.half === 'first' ? pass1At : pass2At);
    const lag = addedLag(seenTimes(invoices, toldAt, mappedAt), movements, scale.k);
    const final = await stateOf();
    const learned = learnedMatches(invoices, toMap, final?.invoices ?? []);
    const adds = movements.filter((m) => m.action === 'ADD' && m.quantity > 0).length;

    // The till: during each run's backlog against alone before and after it; in the first, less the sales the restart
    // held (in flight at the kill or started before the new worker served, and its first few after).
    const afterRestart = till.sales.filter((s) => s.clientStart >= servingAgainAt);
    const warmingUntil = afterRestart[TILL_WARM_UP]?.clientStart ?? Number.POSITIVE_INFINITY;
    const ofRestart = (s: TillSale) => s.inHands > killedAt && s.clientStart < warmingUntil;
    const firstBacklog = till.sales.filter((s) => s.clientStart < backlogEnd && !ofRestart(s));
    const p50 = (sales: readonly TillSale[]) => median(sales.map((s) => s.ms));
    const sortedMs = (sales: readonly TillSale[]) => sales.map((s) => round(s.ms)).sort((x, y) => x - y);
    const runs = [
      { sales: firstBacklog, alone: [...before, ...after], start: backlogStart, end: backlogEnd, drained },
      ...later,
    ];
    const tillRuns: StockInTillRun[] = runs.map((run) => ({
      ratio: round(p50(run.sales) / p50(run.alone), 3),
      backlogP50Ms: round(p50(run.sales)),
      backlogSales: run.sales.length,
      aloneP50Ms: round(p50(run.alone)),
      aloneSales: run.alone.length,
      seconds: round((run.end - run.start) / 1000),
      drained: run.drained,
    }));
    // Every timed sale once: those during the runs' backlogs, and those alone (before, between and after them).
    const backlogSales = runs.flatMap((run) => run.sales);
    const alone = aloneWindows.flat();
    // Where a slow sale's time went: its signing's wait in the queue is the budget's (a slot of the limiter).
    const aloneProfile = await tillProfile(t, alone);
    const backlogProfile = await tillProfile(t, backlogSales);
    const slow = 2 * p50(alone);
    return {
      k: scale.k,
      windowMs: scale.windowMs,
      requestsPerMinute: options.requestsPerMinute,
      maxDelaySeconds: options.maxDelaySeconds,
      business: businessId,
      items: world.catalogue.length,
      invoices: world.invoices.length,
      laterRunInvoices: laterRuns[0]?.length ?? 0,
      linesPerInvoice: options.linesPerInvoice,
      unmatchedLines: world.invoices.reduce((n, v) => n + v.lines.filter((l) => l.wording).length, 0),
      wordings: toMap.length,
      takenBack: takenBack.length,
      passes,
      duplicates: duplicatesOf(exact),
      duplicateReferenceIds: exact.duplicateReferenceIds.slice(0, 10),
      over: exact.over,
      under: exact.under,
      quantityExact: round(quantity.share, 4),
      quantityOff: quantity.off,
      requestsPerLine: round(requests.attributed / linesAdded, 4),
      linesAdded,
      linesAddedByStockIn: final?.totals.linesAdded,
      requests,
      syncRequests: log.filter((r) => r.route.startsWith('/v1/purchases')).length,
      rateLimited: log.filter((r) => r.status === 429).length,
      routes,
      addMovements: adds,
      linesPerAddMovement: round(linesAdded / Math.max(1, adds), 3),
      tillLatencyRatio: median(tillRuns.map((r) => r.ratio)),
      tillLatencyRatioMedian: median(tillRuns.map((r) => r.ratio)),
      tillLatencyRatioRuns: tillRuns.map((r) => r.ratio),
      tillRuns,
      tillLatencyRatioPooled: round(p50(backlogSales) / p50(alone), 3),
      tillLatencyRatioInterval: (() => {
        const i = medianRatioInterval(
          backlogSales.map((s) => s.ms),
          alone.map((s) => s.ms),
        );
        return { low: round(i.low, 2), high: round(i.high, 2), level: i.level };
      })(),
      tillP50Ms: {
        alone: round(p50(alone)),
        before: round(p50(before)),
        after: round(p50(after)),
        backlog: round(p50(backlogSales)),
        withRestart: round(p50(till.sales.filter((s) => s.clientStart < backlogEnd))),
      },
      tillSales: {
        alone: alone.length,
        backlog: backlogSales.length,
        ofRestart: till.sales.filter(ofRestart).length,
        total: allSales,
      },
      tillMs: {
        before: sortedMs(before),
        backlog: sortedMs(backlogSales),
        after: sortedMs(aloneWindows.slice(1).flat()),
      },
      tillSignQueueMs: { alone: aloneProfile.signQueueMs, backlog: backlogProfile.signQueueMs },
      tillProfile: { alone: aloneProfile.steps, backlog: backlogProfile.steps },
      tillSlowSales: runs.flatMap((run, i) =>
        run.sales
          .filter((s) => s.ms > slow)
          .map((s) => ({ run: i + 1, atSeconds: round((s.clientStart - run.start) / 1000), ms: round(s.ms) })),
      ),
      lag: {
        ...lag,
        p50Seconds: round(lag.p50Seconds),
        p99Seconds: round(lag.p99Seconds),
        maxSeconds: round(lag.maxSeconds),
      },
      learnedMatchShare: learned.lines === 0 ? Number.NaN : round(learned.matched / learned.lines, 4),
      learned,
      matchedBy: final?.totals.matchedBy,
      kill,
      backlogSeconds: round((backlogEnd - backlogStart) / 1000),
      settleSeconds: round((settledAt - backlogStart) / 1000),
      backlogDrained: drained,
      settled: ledger.settled,
    };
  } finally {
    // Nothing of this section is left on a server that outlives the bench: its schedule, its stock-in, its ledger.
    await t.client.schedule
      .getHandle(scheduleId)
      .delete()
      .catch(() => undefined);
    const ids = [
      stockInWorkflowId(taskQueue, businessId),
      stockLedgerWorkflowId(taskQueue, businessId, world.branchId),
      ...directSyncs,
    ];
    await mapLimit(ids, 4, (id) =>
      t.client.workflow
        .getHandle(id)
        .terminate('bench: stock-in section over')
        .catch(() => undefined),
    );
    await worker?.stop();
    await sandbox?.close();
  }
}

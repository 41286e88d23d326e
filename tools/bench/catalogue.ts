/**
 * A catalogue import beside a till: one business of an application at 120 requests a window (the window k times
 * shorter than a minute, so a run takes minutes, not hours) imports `items` items while its till sells a sale every
 * few seconds; a tenth of the items lack a product type or a classification mapping; the worker process is SIGKILLed
 * once in the middle and started again. From the sandbox's log and records: requests per item, the share of what the
 * till left of the budget the import used, the till's latency during the import over alone, items created or
 * registered twice, and how many report rows match the item the sandbox holds. Before all that, a smaller import with
 * no till selling (a merchant onboarding overnight): the share of the whole budget it used.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  catalogueImportProgress,
  catalogueImportReport,
  startCatalogueImport,
  waitForCatalogueImport,
} from '../../src/client/catalogue.js';
import {
  catalogueChunkWorkflowId,
  catalogueImportWorkflowId,
  type CatalogueRow,
} from '../../src/contracts/catalogue-import.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import type { Sandbox } from '../../sandbox/server.js';
import { benchFixture, benchSale, DEMO, NAIROBI_LINES, progress, startBenchSandbox, workerProcessEnv } from './env.js';
import type { BenchTemporal } from './env.js';
import { spawnStockWorker, type StockWorkerProcess } from './stock-process.js';
import { median, medianRatioInterval, percentile, round } from './stats.js';
import { tillCall } from './till.js';
import { medianProfile, segmentsToCaller, type Segment } from './history.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { serverProcesses, treeCpuSeconds } from './processes.js';
import { mapBounded } from '../../src/tenants/probes.js';

export interface CatalogueSizes {
  items: number;
  /** The window is 60 s ÷ k: the budget is 120 requests a window. */
  k: number;
  /** Sales of the till alone before the import, and as many again after it. */
  tillAlone: number;
  /** Items of the import with no till selling, before the till's. */
  aloneItems: number;
}

export interface CatalogueReport {
  items: number;
  k: number;
  windowMs: number;
  requestsPerItem: number;
  utilisation: number;
  /** The import with no till selling: its requests ÷ what the budget allows from its first request to its last. */
  aloneUtilisation: number;
  /** That import: its items, requests, seconds from its start to its end, and items a minute over them. */
  alone: { items: number; requests: number; seconds: number; itemsPerMinute: number };
  /** The steady part: its start (from the import's first request), length, budget, and the requests of each route. */
  steady: { fromSeconds: number; seconds: number; budget: number; routes: Record<string, number> };
  tillLatencyRatio: number;
  /**
   * Where the ratio could have landed with other sales of the same till: a 90 % bootstrap interval of the two samples.
   * A quick run has 20 sales alone and about 27 during the import: in two runs the interval reached 0.3–0.8 below the
   * ratio and about 1.5 above it (at 150 items, 63 during the import, about ±0.2, mostly from the 20). One quick run
   * cannot tell 1.1 from 1.5.
   */
  tillLatencyRatioInterval: { low: number; high: number; level: number };
  duplicates: number;
  reportAccuracy: number;
  outcomes: Record<string, number>;
  /**
   * `alone`: the sales before and after the import together; `importing`: those during it, less the sales the
   * worker's restart held (in flight or started from the kill until the new worker was ready, and its first
   * `TILL_WARM_UP` sales after, as the warm-up is left out of `alone`); `withRestart`: all of them.
   */
  tillP50Ms: { alone: number; before: number; after: number; importing: number; withRestart: number };
  /** The till's sales during the import that the restart held, left out of its ratio. */
  tillSalesOfRestart: number;
  /** Median of each step of the till's sales to the receipt in hand, alone and during the import. */
  tillProfile: { alone: Segment[]; importing: Segment[] };
  /** Each of the till's sales, to the receipt in hand (ms, sorted): alone, and during the import less the restart's. */
  tillMs: { alone: number[]; importing: number[] };
  /** The signing's wait in the queue (the limiter's next slot when the import took the last one), p50 and p90. */
  tillSignQueueMs: { alone: { p50: number; p90: number }; importing: { p50: number; p90: number } };
  importSeconds: number;
  /** Items created (the sandbox's log) when the worker was killed. */
  killedAtDone: number;
  /** From the kill until the new worker process was ready. */
  restartSeconds: number;
  /**
   * From the new worker ready to the import's first request once it is and the killed worker's workflow task has timed
   * out; with restartSeconds, left out of the steady part.
   */
  resumeSeconds: number;
  /**
   * CPU per imported item (ms): the worker processes' and the Temporal server's during the import, less what the till
   * spent at the same rate alone; the restart (bundling the workflows again) left out. Undefined where /proc is not.
   */
  cpuPerItemMs: { worker: number; server: number } | undefined;
  /** History events: the chunks' per item, an item registration's per item the import handed to one (so far). */
  eventsPerItem: { chunks: number; registrations: number };
  /** The longest time the import sent nothing, and when it began (seconds from the import's first request). */
  longestPause: { seconds: number; afterSeconds: number };
  /** What it is computed from: CPU seconds of the import's measured parts and of the till alone. */
  cpuSeconds: { importing: { seconds: number; worker: number; server: number; items: number }; tillAlone: Spent };
}

interface Spent {
  seconds: number;
  worker: number;
  server: number;
}

/** A workflow task a killed worker had started goes to another worker after this: Temporal's default timeout. */
const WORKFLOW_TASK_TIMEOUT_MS = 10_000;
const rounded = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? round(v, 2) : v])) as T;

export function catalogueSizes(quick: boolean): CatalogueSizes {
  // The quick run at the real rate (k = 1): only there does a till's sale wait a whole slot of 500 ms when the import
  // took the last one, and that wait is what the pace must leave room for (two quick runs at k = 2 put the low end of
  // the till's ratio at 1.36 and 1.88, where k = 1 gives about 1). The full run at k = 2
  // (2,000 items at k = 1 take 40 minutes): the import lets about k rows a second go, each about a quarter of a
  // core-second (worker and server); at k = 4 the import and the till took both cores in some runs and the till's
  // figure measured the machine.
  // The quick run's 70 items give a steady part of about 70 s, the killed worker's restart left out of it (until the
  // import's first request after it: Temporal's task timeout, not the pace). 150 items took about 200 s of CI's time
  // (docs/benchmarks.md, "The quick section in half the time").
  // The import alone: at the whole budget a row a second at k = 1, so 50 items are about a minute: its first row goes
  // at once and every tick after it at the budget, so its first and last seconds cost its share a few hundredths.
  return quick
    ? { items: 70, k: 1, tillAlone: 10, aloneItems: 50 }
    : { items: 2_000, k: 2, tillAlone: 20, aloneItems: 600 };
}

/**
 * The pace's start, left out of the steady part even where a tenth of the import is shorter (a quick run's 10 s): the
 * rest of the application changes under it (the till's stock from the sales just before, the import's own lookups),
 * and the pace reads the rest 5 s in, then averages each reading with the one before: three more readings make up for
 * what the first got wrong. A full run's tenth is minutes (docs/benchmarks.md, "The pace's start").
 */
const PACE_START_MS = 20_000;
const IMPORT_ROUTES = new Set(['POST /v1/items', 'GET /v1/items', 'POST /v1/items/:id/register']);
const REQUESTS_PER_WINDOW = 120;
const TILL_WARM_UP = 3;

function rowsOf(tag: string, items: number): Array<{ line: number; row: CatalogueRow }> {
  return Array.from({ length: items }, (_, i) => {
    const lacks = i % 10 === 5 ? 'product' : i % 10 === 9 ? 'mapping' : undefined;
    const row: CatalogueRow = {
      externalId: `BENCH-CAT-${tag}-${lacks === 'mapping' ? 'NOMAP-' : ''}${i}`,
      name: `Bench item ${i}`,
      taxTypeCode: 'B',
      unitPrice: 10 + (i % 500),
      classificationCode: '5016150100',
      ...(lacks === 'product' ? {} : { productTypeCode: '2' }),
    };
    return { line: i + 2, row };
  });
}

interface TillSale {
  workflowId: string;
  clientStart: number;
  inHands: number;
  ms: number;
}

/** The till's sales one after another, `everyMs` apart, each timed to its signed receipt in hand. */
function startTill(t: BenchTemporal, taskQueue: string, tag: string, everyMs: number) {
  const sales: TillSale[] = [];
  let stopping = false;
  let n = 0;
  const running = (async () => {
    while (!stopping) {
      const input = benchSale(`BENCH-CAT-TILL-${tag}-${n++}`, NAIROBI_LINES);
      const clientStart = Date.now();
      const began = performance.now();
      const answer = await tillCall(t, taskQueue, input);
      if (answer.signed) {
        sales.push({
          workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
          clientStart,
          inHands: Date.now(),
          ms: performance.now() - began,
        });
      }
      // A shop's sales come at every phase of the second, and the import's rows go on a timer's whole seconds: a till
      // on a strict period would meet them at one phase for the whole run, and its figure would be that phase's.
      const phaseMs = ((n * 377) % 1_000) - 500;
      await new Promise((done) => setTimeout(done, Math.max(0, everyMs + phaseMs - (performance.now() - began))));
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

/** A till's first `count` signed sales, then it stops. */
async function tillSales(t: BenchTemporal, taskQueue: string, tag: string, everyMs: number, count: number) {
  const till = startTill(t, taskQueue, tag, everyMs);
  while (till.sales.length < count) await new Promise((done) => setTimeout(done, 200));
  await till.stop();
  return till;
}

/** The step in which a till's signing waits for the budget's limiter (and for the worker's pickup). */
const SIGN_QUEUE_STEP = 'ACTIVITY_TASK_SCHEDULED(signSale) → ACTIVITY_TASK_STARTED(signSale)';

/**
 * The median of each step of the till's sales, from their histories, to the receipt in the till's hands; and the
 * p50 and p90 of the signing's wait in the queue, where a sale that finds the limiter's bucket empty waits for the
 * next slot.
 */
export async function tillProfile(
  t: BenchTemporal,
  sales: readonly TillSale[],
): Promise<{ steps: Segment[]; signQueueMs: { p50: number; p90: number } }> {
  const runs = await Promise.all(
    sales.map(async (s) =>
      segmentsToCaller(
        await t.events(s.workflowId),
        s.clientStart,
        (e) => e.type === 'WORKFLOW_EXECUTION_UPDATE_COMPLETED',
        s.inHands,
      ),
    ),
  );
  const waits = runs.flatMap((run) => run.filter((s) => s.label === SIGN_QUEUE_STEP).map((s) => s.ms));
  return {
    steps: medianProfile(runs, median).steps.map((s) => ({ label: s.label, ms: round(s.ms) })),
    signQueueMs: { p50: round(percentile(waits, 50)), p90: round(percentile(waits, 90)) },
  };
}

/**
 * An import with no till selling, as a merchant onboarding overnight: its requests over what the budget allows from
 * its first request to its last (the sandbox's log), and its items a minute from its start to its end. Each creation
 * is answered 800 ms late.
 */
async function importAlone(
  t: BenchTemporal,
  sandbox: Sandbox,
  taskQueue: string,
  businessId: string,
  tag: string,
  options: CatalogueSizes,
  windowMs: number,
): Promise<{ utilisation: number; figures: CatalogueReport['alone'] }> {
  // Creations answered late, as a service far away or busy answers them: what the pace lets go must not wait on that.
  const slow = await sandbox.inspector.addFault({ kind: 'latency', method: 'POST', path: '/v1/items', delayMs: 800 });
  const since = Date.now();
  const rows = rowsOf(`${tag}-alone`, options.aloneItems);
  const started = await startCatalogueImport(t.client, businessId, rows, taskQueue);
  await waitForCatalogueImport(t.client, businessId, started.importId, () => undefined, 500);
  const seconds = (Date.now() - since) / 1000;
  if (slow.id !== undefined) await sandbox.inspector.removeFault(slow.id);
  const log = await sandbox.inspector.requestLog({ since, service: 'compliance' });
  const times = log
    .filter((r) => IMPORT_ROUTES.has(`${r.method} ${r.route}`))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  const spanMs = Math.max(1, times.at(-1)! - times[0]!);
  progress(`catalogue: ${options.aloneItems} items imported alone in ${round(seconds, 1)} s`);
  return {
    utilisation: round(times.length / ((REQUESTS_PER_WINDOW * spanMs) / windowMs), 3),
    figures: {
      items: options.aloneItems,
      requests: times.length,
      seconds: round(seconds, 1),
      itemsPerMinute: round((options.aloneItems * 60) / seconds, 1),
    },
  };
}

export async function measureCatalogue(
  t: BenchTemporal,
  options: CatalogueSizes & { tag: string },
): Promise<CatalogueReport> {
  const windowMs = Math.round(60_000 / options.k);
  const tag = options.tag.toLowerCase();
  const sandbox: Sandbox = await startBenchSandbox(
    benchFixture({
      requestsPerWindow: REQUESTS_PER_WINDOW,
      windowMs,
      adjust: (f) => {
        f.authority = { ...f.authority, itemNeeds: [{ externalId: '-NOMAP-', classificationMapping: true }] };
      },
    }),
  );
  const taskQueue = `bench-catalogue-${randomUUID().slice(0, 8)}`;
  const env = {
    ...workerProcessEnv(t, sandbox, REQUESTS_PER_WINDOW * options.k),
    COMPLIANCE_API_KEY: DEMO.keys.nairobi,
    BENCH_TASK_QUEUE: taskQueue,
  };
  let spawned = 0;
  const spawn = () => spawnStockWorker(`catalogue worker ${++spawned}`, env);
  let worker: StockWorkerProcess | undefined = spawn();
  try {
    await worker.ready;
    const businessId = DEMO.businesses.nairobi;
    // A sale about every 3 s of a real minute, scaled as the window is: a sixth of the budget at one request a sale.
    const everyMs = Math.round(3_000 / options.k);
    progress(
      `catalogue: ${options.items} items, ${REQUESTS_PER_WINDOW} requests per ${windowMs} ms window (k = ${options.k}), a till sale about every ${everyMs} ms`,
    );
    const servers = serverProcesses(process.pid);
    const cpu = (w: StockWorkerProcess | undefined) => ({
      at: performance.now(),
      worker: w ? treeCpuSeconds(w.pid) : 0,
      server: servers.reduce((sum, server) => sum + treeCpuSeconds(server.pid), 0),
    });
    type Cpu = ReturnType<typeof cpu>;
    const spent = (from: Cpu, to: Cpu): Spent => ({
      seconds: (to.at - from.at) / 1000,
      worker: to.worker - from.worker,
      server: to.server - from.server,
    });
    // A fresh worker's first sales pay its start (the workflow context, caches, connections): not the till alone.
    await tillSales(t, taskQueue, `${tag}-warm`, everyMs, TILL_WARM_UP);
    const aloneImport = await importAlone(t, sandbox, taskQueue, businessId, tag, options, windowMs);
    const aloneFrom = cpu(worker);
    const alone = await tillSales(t, taskQueue, `${tag}-alone`, everyMs, options.tillAlone);
    const tillAlone = spent(aloneFrom, cpu(worker));

    const rows = rowsOf(tag, options.items);
    const since = Date.now();
    const importing = startTill(t, taskQueue, `${tag}-importing`, everyMs);
    const importFrom = cpu(worker);
    const started = await startCatalogueImport(t.client, businessId, rows, taskQueue);
    // Rows started, read from the sandbox's log: the import's own progress comes 25 rows at a time, too coarse to kill
    // a short import in its middle. Each read asks only for what came after the last one (a full run logs thousands).
    let creations = 0;
    let readTo = since;
    const created = async () => {
      const log = await sandbox.inspector.requestLog({ since: readTo, service: 'compliance' });
      const fresh = log.filter((r) => r.at > readTo || (r.at === readTo && readTo === since));
      creations += fresh.filter((r) => r.method === 'POST' && r.route === '/v1/items').length;
      readTo = Math.max(readTo, ...fresh.map((r) => r.at));
      return creations;
    };
    // The import's CPU in two parts: up to the kill, and from the new worker's ready to the end.
    const parts: Array<{ from: Cpu; to?: Cpu; doneFrom: number; doneTo?: number }> = [
      { from: importFrom, doneFrom: 0 },
    ];
    let killedAtDone = -1;
    let killedAt = Number.POSITIVE_INFINITY;
    let servingAgainAt = Number.POSITIVE_INFINITY;
    let watching = true;
    const killHalfway = (async () => {
      for (; watching; await sleep(250)) {
        const createdNow = await created();
        if (createdNow < options.items / 2) continue;
        killedAtDone = createdNow;
        const dying = worker;
        worker = undefined;
        parts[0]!.to = cpu(dying);
        parts[0]!.doneTo = createdNow;
        killedAt = Date.now();
        await dying?.kill();
        progress(`catalogue: worker SIGKILLed at ${createdNow} of ${options.items} items created, started again`);
        const fresh = spawn();
        worker = fresh;
        await fresh.ready;
        servingAgainAt = Date.now();
        parts.push({ from: cpu(fresh), doneFrom: await created() });
        return;
      }
    })();
    await waitForCatalogueImport(t.client, businessId, started.importId, () => undefined, 500);
    watching = false;
    await killHalfway;
    const importSeconds = (Date.now() - since) / 1000;
    // An import that ended before the new worker was ready has no second part: the restart is left out.
    const lastPart = parts.at(-1)!;
    if (!lastPart.to) Object.assign(lastPart, { to: cpu(worker), doneTo: options.items });
    const total = { seconds: 0, worker: 0, server: 0, items: 0 };
    for (const part of parts) {
      if (!part.to || part.doneTo === undefined) continue;
      const used = spent(part.from, part.to);
      total.seconds += used.seconds;
      total.worker += used.worker;
      total.server += used.server;
      total.items += part.doneTo - part.doneFrom;
    }
    const lessTill = (cpuSeconds: number, tillSeconds: number) =>
      round((1000 * (cpuSeconds - (tillSeconds / tillAlone.seconds) * total.seconds)) / Math.max(1, total.items), 1);
    const cpuPerItemMs =
      servers.length === 0 || tillAlone.worker <= 0
        ? undefined
        : { worker: lessTill(total.worker, tillAlone.worker), server: lessTill(total.server, tillAlone.server) };
    await importing.stop();
    // The till alone again, on the worker that served the end of the import: the reference spans the same run.
    const after = await tillSales(t, taskQueue, `${tag}-after`, everyMs, options.tillAlone);
    const aloneSales = [...alone.sales, ...after.sales];
    // A sale the restart held waited for a worker, not for the import; the new worker's first sales pay its start.
    const afterRestart = importing.sales.filter((s) => s.clientStart >= servingAgainAt);
    const warmingUntil = afterRestart[TILL_WARM_UP]?.clientStart ?? Number.POSITIVE_INFINITY;
    const ofRestart = (s: TillSale) => s.inHands > killedAt && s.clientStart < warmingUntil;
    const importingSales = importing.sales.filter((s) => !ofRestart(s));
    const p50 = (sales: readonly TillSale[]) => median(sales.map((s) => s.ms));
    const sortedMs = (sales: readonly TillSale[]) => sales.map((s) => round(s.ms)).sort((x, y) => x - y);
    const aloneProfile = await tillProfile(t, aloneSales);
    const importingProfile = await tillProfile(t, importingSales);
    const final = await catalogueImportProgress(t.client, businessId, started.importId);
    const report = await catalogueImportReport(t.client, businessId, started.importId);

    const log = await sandbox.inspector.requestLog({ since, service: 'compliance' });
    const routeOf = (r: { method: string; route: string }) => `${r.method} ${r.route}`;
    const importRequests = log.filter((r) => IMPORT_ROUTES.has(routeOf(r)));
    const at = (r: { at: number }) => r.at;
    const times = importRequests.map(at).sort((a, b) => a - b);
    const first = times[0]!;
    const last = times.at(-1)!;
    const longestPause = { seconds: 0, afterSeconds: 0 };
    for (let i = 1; i < times.length; i++) {
      const gap = (times[i]! - times[i - 1]!) / 1000;
      if (gap > longestPause.seconds)
        Object.assign(longestPause, { seconds: round(gap, 1), afterSeconds: round((times[i - 1]! - first) / 1000, 1) });
    }
    // The steady part: the middle of the import, away from its start (the pace's start at the least) and its tail,
    // less the restart: from the kill until the import's first request once the new worker was ready and the workflow
    // task the killed worker held had timed out. No worker served until it was ready (nobody could spend the budget,
    // the tills included), and the chunk whose task the killed worker held waits out that task's 10 s timeout before
    // the new one replays it: Temporal's time, not the pace's, however soon the worker is back (longestPause shows the
    // import's pause).
    const from = Math.max(first + (last - first) * 0.1, first + PACE_START_MS);
    const to = first + (last - first) * 0.9;
    const resumedAt = Number.isFinite(servingAgainAt)
      ? (times.find((x) => x >= Math.max(servingAgainAt, killedAt + WORKFLOW_TASK_TIMEOUT_MS)) ?? servingAgainAt)
      : Number.POSITIVE_INFINITY;
    const down = { from: Math.max(from, killedAt), to: Math.min(to, resumedAt) };
    const downMs = Math.max(0, down.to - down.from);
    const inSteady = (r: { at: number }) => at(r) >= from && at(r) < to && !(at(r) >= down.from && at(r) < down.to);
    const budget = (REQUESTS_PER_WINDOW * (to - from - downMs)) / windowMs;
    const others = log.filter((r) => inSteady(r) && !IMPORT_ROUTES.has(routeOf(r))).length;
    const ours = importRequests.filter(inSteady).length;
    const steadyRoutes: Record<string, number> = {};
    for (const r of log.filter(inSteady)) steadyRoutes[routeOf(r)] = (steadyRoutes[routeOf(r)] ?? 0) + 1;

    // A few histories at once: a full run reads two thousand.
    const eventsOf = async (workflowIds: string[]) =>
      (await mapBounded(workflowIds, 16, async (id) => (await t.events(id)).length)).reduce((a, b) => a + b, 0);
    const importWorkflowId = catalogueImportWorkflowId(businessId, started.importId);
    const chunkEvents = await eventsOf(
      Array.from({ length: started.chunks }, (_, index) => catalogueChunkWorkflowId(importWorkflowId, index)),
    );
    const registered = report.filter((row) =>
      ['registered', 'needs_product_type', 'needs_classification'].includes(row.outcome),
    );
    const registrationEvents = await eventsOf(
      registered.map((row) => itemRegistrationWorkflowId(businessId, row.itemId!)),
    );
    const eventsPerItem = {
      chunks: round(chunkEvents / options.items, 2),
      registrations: round(registrationEvents / Math.max(1, registered.length), 2),
    };
    const records = new Map((await sandbox.inspector.itemRecords(businessId)).map((r) => [r.externalId, r]));
    const imported = rows.map(({ row }) => records.get(row.externalId));
    const duplicates = imported.filter((r) => r && (r.creations > 1 || r.registrations > 1)).length;
    const matching = report.filter((row) => {
      const record = records.get(row.externalId);
      if (!record || record.id !== row.itemId) return false;
      const registered = record.registrationStatus === 'REGISTERED';
      return row.outcome === 'registered' || row.outcome === 'already_registered' ? registered : !registered;
    }).length;
    return {
      items: options.items,
      k: options.k,
      windowMs,
      requestsPerItem: round(importRequests.length / options.items, 3),
      utilisation: round(ours / Math.max(1, budget - others), 3),
      aloneUtilisation: aloneImport.utilisation,
      alone: aloneImport.figures,
      steady: {
        fromSeconds: round((from - first) / 1000, 1),
        seconds: round((to - from - downMs) / 1000, 1),
        budget: round(budget),
        routes: steadyRoutes,
      },
      // An import that ended before its half was never killed: no restart.
      restartSeconds: Number.isFinite(killedAt) ? round((servingAgainAt - killedAt) / 1000, 1) : 0,
      resumeSeconds: Number.isFinite(resumedAt) ? round((resumedAt - servingAgainAt) / 1000, 1) : 0,
      tillLatencyRatio: round(p50(importingSales) / p50(aloneSales), 2),
      tillLatencyRatioInterval: rounded(
        medianRatioInterval(
          importingSales.map((s) => s.ms),
          aloneSales.map((s) => s.ms),
        ),
      ),
      duplicates,
      reportAccuracy: round(matching / rows.length, 4),
      outcomes: final.outcomes,
      tillP50Ms: {
        alone: round(p50(aloneSales)),
        before: round(p50(alone.sales)),
        after: round(p50(after.sales)),
        importing: round(p50(importingSales)),
        withRestart: round(p50(importing.sales)),
      },
      tillSalesOfRestart: importing.sales.length - importingSales.length,
      tillProfile: { alone: aloneProfile.steps, importing: importingProfile.steps },
      tillSignQueueMs: { alone: aloneProfile.signQueueMs, importing: importingProfile.signQueueMs },
      tillMs: { alone: sortedMs(aloneSales), importing: sortedMs(importingSales) },
      importSeconds: round(importSeconds, 1),
      killedAtDone,
      cpuPerItemMs,
      longestPause,
      eventsPerItem,
      cpuSeconds: { importing: rounded(total), tillAlone: rounded(tillAlone) },
    };
  } finally {
    await worker?.stop();
    await sandbox.close();
  }
}

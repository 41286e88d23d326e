/**
 * A catalogue import beside a till: one business of an application at 120 requests a window (the window k times
 * shorter than a minute, so a run takes minutes, not hours) imports `items` items while its till sells a sale every
 * few seconds; a tenth of the items lack a product type or a classification mapping; the worker process is SIGKILLed
 * once in the middle and started again. From the sandbox's log and records: requests per item, the share of what the
 * till left of the budget the import used, the till's latency during the import over alone, items created or
 * registered twice, and how many report rows match the item the sandbox holds.
 */
import { randomUUID } from 'node:crypto';
import {
  catalogueImportProgress,
  catalogueImportReport,
  startCatalogueImport,
  waitForCatalogueImport,
} from '../../src/client/catalogue.js';
import type { CatalogueRow } from '../../src/contracts/catalogue-import.js';
import type { Sandbox } from '../../sandbox/server.js';
import { benchFixture, benchSale, DEMO, NAIROBI_LINES, progress, startBenchSandbox, workerProcessEnv } from './env.js';
import type { BenchTemporal } from './env.js';
import { spawnStockWorker, type StockWorkerProcess } from './stock-process.js';
import { median, round } from './stats.js';
import { tillCall } from './till.js';
import { medianProfile, segmentsToCaller, type Segment } from './history.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';

export interface CatalogueSizes {
  items: number;
  /** The window is 60 s ÷ k: the budget is 120 requests a window. */
  k: number;
  /** Sales of the till alone, before the import. */
  tillAlone: number;
}

export interface CatalogueReport {
  items: number;
  k: number;
  windowMs: number;
  requestsPerItem: number;
  utilisation: number;
  /** The steady part: its length, the budget in it, and the requests of each route in it. */
  steady: { seconds: number; budget: number; routes: Record<string, number> };
  tillLatencyRatio: number;
  duplicates: number;
  reportAccuracy: number;
  outcomes: Record<string, number>;
  tillP50Ms: { alone: number; importing: number };
  /** Median of each step of the till's sales to the receipt in hand, alone and during the import. */
  tillProfile: { alone: Segment[]; importing: Segment[] };
  importSeconds: number;
  killedAtDone: number;
  /** From the kill until the new worker process was ready: left out of the steady part. */
  restartSeconds: number;
}

export function catalogueSizes(quick: boolean): CatalogueSizes {
  return quick ? { items: 200, k: 6, tillAlone: 5 } : { items: 2_000, k: 10, tillAlone: 10 };
}

const IMPORT_ROUTES = new Set(['POST /v1/items', 'GET /v1/items', 'POST /v1/items/:id/register']);
const REQUESTS_PER_WINDOW = 120;

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
}

/** The till's sales one after another, `everyMs` apart, each timed to its signed receipt in hand. */
function startTill(t: BenchTemporal, taskQueue: string, tag: string, everyMs: number) {
  const ms: number[] = [];
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
        ms.push(performance.now() - began);
        sales.push({
          workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
          clientStart,
          inHands: Date.now(),
        });
      }
      await new Promise((done) => setTimeout(done, Math.max(0, everyMs - (performance.now() - began))));
    }
  })();
  return {
    ms,
    sales,
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}

/** The median of each step of the till's sales, from their histories, to the receipt in the till's hands. */
async function tillProfile(t: BenchTemporal, sales: readonly TillSale[]): Promise<Segment[]> {
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
  return medianProfile(runs, median).steps.map((s) => ({ label: s.label, ms: round(s.ms) }));
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
    // A sale every 3 s of a real minute, scaled as the window is: a sixth of the budget at one request a sale.
    const everyMs = Math.round(3_000 / options.k);
    progress(
      `catalogue: ${options.items} items, ${REQUESTS_PER_WINDOW} requests per ${windowMs} ms window (k = ${options.k}), a till sale every ${everyMs} ms`,
    );
    const alone = startTill(t, taskQueue, `${tag}-alone`, everyMs);
    while (alone.ms.length < options.tillAlone) await new Promise((done) => setTimeout(done, 200));
    await alone.stop();

    const rows = rowsOf(tag, options.items);
    const since = Date.now();
    const importing = startTill(t, taskQueue, `${tag}-importing`, everyMs);
    const started = await startCatalogueImport(t.client, businessId, rows, taskQueue);
    let killedAtDone = -1;
    let killedAt = Number.POSITIVE_INFINITY;
    let servingAgainAt = Number.POSITIVE_INFINITY;
    await waitForCatalogueImport(
      t.client,
      businessId,
      started.importId,
      (p) => {
        if (killedAtDone < 0 && p.done >= options.items / 2) {
          killedAtDone = p.done;
          const dying = worker;
          worker = undefined;
          void (async () => {
            killedAt = Date.now();
            await dying?.kill();
            progress(`catalogue: worker SIGKILLed at ${p.done} of ${options.items} items, started again`);
            worker = spawn();
            await worker.ready;
            servingAgainAt = Date.now();
          })();
        }
      },
      500,
    );
    const importSeconds = (Date.now() - since) / 1000;
    await importing.stop();
    const final = await catalogueImportProgress(t.client, businessId, started.importId);
    const report = await catalogueImportReport(t.client, businessId, started.importId);

    const log = await sandbox.inspector.requestLog({ since, service: 'compliance' });
    const routeOf = (r: { method: string; route: string }) => `${r.method} ${r.route}`;
    const importRequests = log.filter((r) => IMPORT_ROUTES.has(routeOf(r)));
    const at = (r: { at: number }) => r.at;
    // The steady part: the middle of the import, away from its start and its tail, less the seconds no worker
    // served (killed, until the new one was ready): nobody can spend the budget then, the tills included.
    const first = Math.min(...importRequests.map(at));
    const last = Math.max(...importRequests.map(at));
    const from = first + (last - first) * 0.1;
    const to = first + (last - first) * 0.9;
    const down = { from: Math.max(from, killedAt), to: Math.min(to, servingAgainAt) };
    const downMs = Math.max(0, down.to - down.from);
    const inSteady = (r: { at: number }) => at(r) >= from && at(r) < to && !(at(r) >= down.from && at(r) < down.to);
    const budget = (REQUESTS_PER_WINDOW * (to - from - downMs)) / windowMs;
    const others = log.filter((r) => inSteady(r) && !IMPORT_ROUTES.has(routeOf(r))).length;
    const ours = importRequests.filter(inSteady).length;
    const steadyRoutes: Record<string, number> = {};
    for (const r of log.filter(inSteady)) steadyRoutes[routeOf(r)] = (steadyRoutes[routeOf(r)] ?? 0) + 1;

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
      steady: { seconds: round((to - from - downMs) / 1000, 1), budget: round(budget), routes: steadyRoutes },
      // An import that ended before its half was never killed: no restart.
      restartSeconds: Number.isFinite(killedAt) ? round((servingAgainAt - killedAt) / 1000, 1) : 0,
      tillLatencyRatio: round(median(importing.ms) / median(alone.ms), 2),
      duplicates,
      reportAccuracy: round(matching / rows.length, 4),
      outcomes: final.outcomes,
      tillP50Ms: { alone: round(median(alone.ms)), importing: round(median(importing.ms)) },
      tillProfile: { alone: await tillProfile(t, alone.sales), importing: await tillProfile(t, importing.sales) },
      importSeconds: round(importSeconds, 1),
      killedAtDone,
    };
  } finally {
    await worker?.stop();
    await sandbox.close();
  }
}

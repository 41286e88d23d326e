/**
 * Outages as merchants meet them: one application at 120 requests per (real) minute, its sales of two stock-tracked
 * lines, and two outages one after the other, each made by the sandbox with a start and an end: (a) the compliance
 * service down (every route 503), (b) the tax authority down (submissions refused as `authority_unavailable`). While
 * each lasts a backlog of sales is started, spread over its first three quarters; then the bench waits for every one
 * to close, park or fail, and for the branch's stock ledger to settle.
 *
 * Real time, not scaled like the stock section: how a sale paces its tries is fixed in the workflow, so only the
 * outage's length can be chosen. Every figure comes from the sandbox (its request log, its documents' history, its
 * stock movements) and the bench's own start times; the sale's state is read only to tell parked from still waiting.
 * See outage-math.ts and docs/benchmarks.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/server.js';
import { OUTAGE_WATCH_WORKFLOW_TYPE } from '../../src/contracts/outage-watch.js';
import { getSaleStateQuery, type SaleState } from '../../src/contracts/sale.js';
import {
  getStockLedgerStateQuery,
  STOCK_LEDGER_WORKFLOW_TYPE,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import {
  benchFixture,
  benchSale,
  DEMO,
  NAIROBI_LINES,
  progress,
  RETAIL_APP,
  startBenchSandbox,
  startBenchWorkers,
  type BenchTemporal,
  type BenchWorkers,
} from './env.js';
import type { OutageSizes } from './options.js';
import {
  busiestShareOfLimit,
  metByOutage,
  mostInWindowWithin,
  orderInversionShare,
  recovery,
  repeats,
  startOffsets,
} from './outage-math.js';
import type { OutageReport, OutageRun } from './outage-report.js';
import { exactlyOnce, neededOperator, type SoldLine } from './stock-math.js';
import { mapLimit, round } from './stats.js';

const MINUTE_MS = 60_000;
/** The backlog arrives over this share of each outage, so the last sales still meet it. */
const START_SHARE = 0.75;
const POLL_MS = 2_000;
const BUSINESS = DEMO.businesses.nairobi;

interface StartedSale {
  workflowId: string;
  invoice: string;
  startedAt: number;
}

type Outcome = 'closed' | 'failed' | 'parked' | 'open';

interface Section {
  t: BenchTemporal;
  sandbox: Sandbox;
  workers: BenchWorkers;
  sizes: OutageSizes;
  tag: string;
  /** Every sale started, so those still open at the end can be ended. */
  started: StartedSale[];
}

/** The application's requests: during a service outage the sandbox checks no key, so those carry no application. */
function applicationRequests(sandbox: Sandbox, since: number) {
  return sandbox.stats
    .records({ since, service: 'compliance' })
    .filter((r) => r.applicationId === RETAIL_APP || r.applicationId === undefined);
}

function routesOf(requests: ReadonlyArray<{ method: string; route: string; status: number }>): Record<string, number> {
  const routes: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.method} ${r.route} ${r.status}`;
    routes[key] = (routes[key] ?? 0) + 1;
  }
  return routes;
}

/** When the sandbox signed each of the business's sales (its document's first `completed`), by invoice number. */
async function signedTimes(sandbox: Sandbox): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const d of await sandbox.inspector.documents({ businessId: BUSINESS, type: 'sale' })) {
    const completed = d.history.find((h) => h.status === 'completed');
    if (completed) out.set(d.sale.traderInvoiceNumber, Date.parse(completed.at));
  }
  return out;
}

async function stateOf(s: Section, workflowId: string): Promise<SaleState | undefined> {
  try {
    return await s.t.client.workflow.getHandle(workflowId).query(getSaleStateQuery);
  } catch {
    return undefined;
  }
}

/** Polls each sale until it closed, failed or parked, or the deadline passed (then it is `open`). */
async function outcomes(s: Section, sales: readonly StartedSale[], deadline: number): Promise<Map<string, Outcome>> {
  const done = new Map<string, Outcome>();
  for (;;) {
    const pending = sales.filter((sale) => !done.has(sale.workflowId));
    await mapLimit(pending, 20, async ({ workflowId }) => {
      const status = (await s.t.client.workflow.getHandle(workflowId).describe()).status.name;
      if (status === 'COMPLETED') done.set(workflowId, 'closed');
      else if (status !== 'RUNNING') done.set(workflowId, 'failed');
      else if ((await stateOf(s, workflowId))?.step === 'parked') done.set(workflowId, 'parked');
    });
    if (done.size === sales.length || Date.now() >= deadline) break;
    await sleep(POLL_MS);
  }
  for (const sale of sales) if (!done.has(sale.workflowId)) done.set(sale.workflowId, 'open');
  return done;
}

async function outageRun(s: Section, side: 'service' | 'authority', durationMs: number): Promise<OutageRun> {
  const { sandbox, workers, sizes } = s;
  const outage = await sandbox.inspector.addOutage(
    side === 'service'
      ? { kind: 'service', mode: 'unavailable', durationMs }
      : { kind: 'authority', mode: 'reject', durationMs },
  );
  const mode = outage.mode;
  const startsAt = Date.parse(outage.startsAt);
  const endsAt = outage.endsAt === null ? startsAt + durationMs : Date.parse(outage.endsAt);
  progress(
    `outage: ${side} down for ${durationMs / 1000} s; ${sizes.sales} sales started over its first ${START_SHARE * 100} %`,
  );
  const sales: StartedSale[] = [];
  for (const [i, offset] of startOffsets(sizes.sales, durationMs, START_SHARE).entries()) {
    await sleep(Math.max(0, startsAt + offset - Date.now()));
    const invoice = `BENCH-OUTAGE-${s.tag}-${side}-${String(i).padStart(3, '0')}`;
    const startedAt = Date.now();
    const { workflowId } = await workers.sales.startSale(benchSale(invoice, NAIROBI_LINES));
    const sale = { workflowId, invoice, startedAt };
    sales.push(sale);
    s.started.push(sale);
  }
  // Read just before the end: how many tries each sale had made by itself while the outage lasted.
  await sleep(Math.max(0, endsAt - 1_000 - Date.now()));
  const attempts = (await mapLimit(sales, 20, (sale) => stateOf(s, sale.workflowId))).flatMap((st) =>
    st?.outage ? [st.outage.attempts] : [],
  );
  await sleep(Math.max(0, endsAt - Date.now()));
  progress(`outage: ${side} up again; waiting for the ${sales.length} sales (at most ${sizes.settleMs / 1000} s)`);
  const done = await outcomes(s, sales, endsAt + sizes.settleMs);
  const signed = await signedTimes(sandbox);
  const signedAt = sales.map((sale) => signed.get(sale.invoice) ?? Number.NaN);
  const r = recovery(signedAt, endsAt, sizes.requestsPerMinute);
  const whileDown = applicationRequests(sandbox, startsAt).filter((q) => q.at < endsAt);
  const count = (o: Outcome) => [...done.values()].filter((v) => v === o).length;
  const firstSigned = Math.min(...signedAt.filter((at) => !Number.isNaN(at)));
  return {
    side,
    mode,
    durationSeconds: durationMs / 1000,
    sales: sales.length,
    signed: signedAt.filter((at) => !Number.isNaN(at)).length,
    failed: count('failed'),
    parked: count('parked'),
    stillOpen: count('open'),
    requestsPerMinuteWhileDown: mostInWindowWithin(
      whileDown.filter((q) => metByOutage(side, q)).map((q) => q.at),
      startsAt,
      endsAt,
      MINUTE_MS,
    ),
    allRequestsPerMinuteWhileDown: mostInWindowWithin(
      whileDown.map((q) => q.at),
      startsAt,
      endsAt,
      MINUTE_MS,
    ),
    routesWhileDown: routesOf(whileDown),
    lastSignedAfterSeconds: round(r.lastSignedAfterSeconds),
    budgetSeconds: round(r.budgetSeconds),
    recoveryOverheadSeconds: round(r.overheadSeconds),
    firstSignedAfterSeconds: round((firstSigned - endsAt) / 1000),
    orderInversions: round(
      orderInversionShare(sales.map((sale, i) => ({ startedAt: sale.startedAt, signedAt: signedAt[i]! }))),
      4,
    ),
    signedOrder: signedAt
      .map((at, i) => ({ at, i }))
      .filter(({ at }) => !Number.isNaN(at))
      .sort((a, b) => a.at - b.at)
      .map(({ i }) => i),
    attemptsAtEnd: {
      total: attempts.reduce((sum, n) => sum + n, 0),
      max: Math.max(0, ...attempts),
      sampled: attempts.length,
    },
  };
}

/** The stock ledgers of the section's task queue, as their queries answer (a closed one is left out). */
async function ledgerStates(s: Section): Promise<StockLedgerState[]> {
  const states: StockLedgerState[] = [];
  const listed = s.t.client.workflow.list({
    query: `WorkflowType = '${STOCK_LEDGER_WORKFLOW_TYPE}' AND TaskQueue = '${s.workers.taskQueue}' AND ExecutionStatus = 'Running'`,
  });
  for await (const ledger of listed) {
    try {
      states.push(await s.t.client.workflow.getHandle(ledger.workflowId).query(getStockLedgerStateQuery));
    } catch {
      // Continuing as new between the listing and the query: read at the next poll.
    }
  }
  return states;
}

const settledLedger = (l: StockLedgerState) => l.open.length === 0 && Object.values(l.pending).every((n) => n === 0);

/** Waits until every ledger holds nothing pending or open, or the deadline; answers the last states read. */
async function settleLedgers(s: Section, deadline: number): Promise<{ states: StockLedgerState[]; settled: boolean }> {
  for (;;) {
    const states = await ledgerStates(s);
    if (states.every(settledLedger)) return { states, settled: true };
    if (Date.now() >= deadline) return { states, settled: false };
    await sleep(POLL_MS);
  }
}

export async function measureOutage(t: BenchTemporal, options: OutageSizes & { tag: string }): Promise<OutageReport> {
  const limit = options.requestsPerMinute;
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: limit }));
  // The ledger's coalescing delay is not what this section measures: shortened, the run waits less for it.
  const workers = await startBenchWorkers(t, sandbox, { requestsPerMinute: limit, stockMaxDelay: '30s' });
  const s: Section = { t, sandbox, workers, sizes: options, tag: options.tag, started: [] };
  const from = Date.now();
  try {
    // One sale first, outside any outage: the worker's start-up reads and the item cache are behind it.
    const warm = benchSale(`BENCH-OUTAGE-${options.tag}-warm`, NAIROBI_LINES);
    const { workflowId } = await workers.sales.startSale(warm);
    s.started.push({ workflowId, invoice: warm.traderInvoiceNumber, startedAt: Date.now() });
    await t.client.workflow.getHandle(workflowId).result();

    const runs = [await outageRun(s, 'service', options.outageMs), await outageRun(s, 'authority', options.outageMs)];
    progress('outage: waiting for the stock ledger to settle');
    const settling = Date.now();
    const ledgers = await settleLedgers(s, settling + options.settleMs);
    const ledgerSettleSeconds = round((Date.now() - settling) / 1000);
    const ledgersNeedingOperator = ledgers.states.filter((l) => [...l.open, ...l.recent].some(neededOperator)).length;

    const documents = await sandbox.inspector.documents({ businessId: BUSINESS, type: 'sale' });
    const ours = new Set(s.started.map((sale) => sale.invoice));
    const duplicateDocuments = repeats(
      documents.map((d) => d.sale.traderInvoiceNumber).filter((invoice) => ours.has(invoice)),
    ).extra;
    const movements = (await sandbox.inspector.stockMovements({ businessId: BUSINESS })).map((m) => ({
      itemId: m.itemId,
      action: m.action,
      quantity: m.quantity,
      referenceId: m.referenceId,
      at: Date.parse(m.at),
    }));
    const signed = await signedTimes(sandbox);
    const lines: SoldLine[] = s.started.flatMap((sale) =>
      signed.has(sale.invoice)
        ? NAIROBI_LINES.map((l) => ({
            saleWorkflowId: sale.workflowId,
            itemId: l.itemId,
            action: 'DEDUCT' as const,
            quantity: l.quantity,
            signedAt: signed.get(sale.invoice)!,
          }))
        : [],
    );
    const once = exactlyOnce(lines, movements);
    const duplicateStockReferences = once.duplicateReferenceIds.length;

    const requests = applicationRequests(sandbox, from);
    const failedSales = runs.reduce((sum, r) => sum + r.failed + r.parked, 0);
    const worst = (pick: (r: OutageRun) => number) =>
      runs.some((r) => Number.isNaN(pick(r))) ? Number.NaN : Math.max(...runs.map(pick));
    const busiest = busiestShareOfLimit(
      requests.map((r) => r.at),
      MINUTE_MS,
      limit,
    );
    return {
      requestsPerMinute: limit,
      windowMs: MINUTE_MS,
      runs,
      operatorActions: failedSales + ledgersNeedingOperator,
      ledgersNeedingOperator,
      failedSales,
      duplicates: duplicateDocuments + duplicateStockReferences,
      duplicateDocuments,
      duplicateStockReferences,
      stockMismatched: once.mismatched.length,
      requestsPerMinuteWhileDown: worst((r) => r.requestsPerMinuteWhileDown),
      recoveryOverheadSeconds: worst((r) => r.recoveryOverheadSeconds),
      orderInversions: worst((r) => r.orderInversions),
      maxRequestsPerMinute: round(busiest, 3),
      busiestRequests: Math.round(busiest * limit),
      requests: requests.length,
      rateLimited: requests.filter((r) => r.status === 429).length,
      ledgersSettled: ledgers.settled,
      ledgerSettleSeconds,
    };
  } finally {
    // A sale still waiting would outlive the section on a server that outlives the bench.
    await mapLimit(s.started, 20, (sale) =>
      t.client.workflow
        .getHandle(sale.workflowId)
        .terminate('bench: outage section over')
        .catch(() => undefined),
    );
    // So does the application's outage watch, idle for its last ten minutes.
    const watches = t.client.workflow.list({
      query: `WorkflowType = '${OUTAGE_WATCH_WORKFLOW_TYPE}' AND TaskQueue = '${workers.taskQueue}' AND ExecutionStatus = 'Running'`,
    });
    for await (const watch of watches)
      await t.client.workflow
        .getHandle(watch.workflowId)
        .terminate('bench: outage section over')
        .catch(() => undefined);
    await workers.stop();
    await sandbox.close();
  }
}

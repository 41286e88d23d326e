/**
 * Stock that keeps up with the tills: an application at 120 requests a minute, its sales of L = 3
 * stock-tracked lines from a 30-item catalogue, reported through the branch's stock ledger. The section runs k times
 * faster than real time (the sandbox's rate window a minute over k, the worker's budget and STOCK_MAX_DELAY scaled
 * alike) and scales every figure back. One sandbox; two applications, each with one business, one worker process
 * (stock-worker.ts, a process so it can be killed) and one task queue of its own:
 * - the faults: closed-loop tills for a short while with 30 % of stock writes answered by a fault after they were
 *   recorded and the faults worker SIGKILLed twice (started again each time); then, faults off, the bench acts as the
 *   operator from the sandbox's records whenever the ledger asks for one, until everything settled: the share of
 *   sales whose lines needed an operator. It settles in the background during the backlog (a movement in flight at a
 *   kill is known lost only when its attempt times out, a minute later): its own application, budget and worker.
 * - the backlog: closed-loop tills that always have a sale waiting, for a warm-up and then the steady part measured:
 *   sales signed per minute, each line's lag from its sale signed to the movement carrying it recorded, requests per
 *   sale; then the ledger drained.
 * Every time comes from the sandbox (its signing of each sale, its record of each movement), every request from its
 * log, never from the worker. See stock-math.ts and docs/benchmarks.md.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sandbox } from '../../sandbox/server.js';
import { stockLedgerWorkflowId, type LedgerMovement } from '../../src/contracts/stock-ledger.js';
import type { BenchTemporal } from './env.js';
import { progress, startBenchSandbox, workerProcessEnv } from './env.js';
import type { StockSizes } from './options.js';
import { serverProcesses, treeCpuSeconds } from './processes.js';
import type { ProcessCpu } from './processes.js';
import { mapLimit, round } from './stats.js';
import { leftOf, operatorFor, profileOf, settle, type LedgerOf, type Settled } from './stock-ledger-watch.js';
import {
  carryLines,
  countWithin,
  exactlyOnce,
  lagSummary,
  perScaledMinute,
  runMs,
  salesNeedingOperator,
  stockScale,
  steadyWindow,
  type LagSummary,
  type RecordedMovement,
  type SoldLine,
  type StockScale,
} from './stock-math.js';
import { spawnStockWorker, type StockWorkerProcess } from './stock-process.js';
import type {
  StockExactlyOnce,
  StockOperatorDecision,
  StockOperatorRun,
  StockReport,
  StockThroughput,
} from './stock-report.js';
import { startTills, type Rung } from './stock-tills.js';
import { branchOf, saleMaker, stockWorld, type StockTenant, type StockWorld } from './stock-world.js';

/** The commit-then-fail share of stock writes in the faults run: half answered 503, half a dropped connection. */
const FAULT_SHARE = 0.3;
const FAULT_RULES = ['bench-stock-commit-503', 'bench-stock-commit-reset'] as const;
const SEED = 17;

/** One run's worker process, on its own task queue with its application's key; the faults run replaces it after each kill. */
interface RunWorker {
  tenant: StockTenant;
  taskQueue: string;
  current: StockWorkerProcess | undefined;
  spawn(): StockWorkerProcess;
}

interface Section {
  t: BenchTemporal;
  sandbox: Sandbox;
  world: StockWorld;
  scale: StockScale;
  sizes: StockSizes;
  tag: string;
  /** Every sale started, to end those still open if the section fails. */
  started: string[];
}

/** When the sandbox signed each sale of `businessId` (its document's first `completed`), by trader invoice number. */
async function signedTimes(sandbox: Sandbox, businessId: string): Promise<Map<string, number>> {
  const documents = await sandbox.inspector.documents({ businessId, type: 'sale' });
  const out = new Map<string, number>();
  for (const d of documents) {
    const completed = d.history.find((h) => h.status === 'completed');
    if (completed) out.set(d.sale.traderInvoiceNumber, Date.parse(completed.at));
  }
  return out;
}

async function recordedMovements(sandbox: Sandbox, businessId: string): Promise<RecordedMovement[]> {
  const movements = await sandbox.inspector.stockMovements({ businessId });
  return movements.map((m) => ({
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    referenceId: m.referenceId,
    at: Date.parse(m.at),
  }));
}

/** Every stock line of the sales rung up, with its sale's signing time (NaN: the sandbox never signed it). */
function soldLines(rung: readonly Rung[], signed: ReadonlyMap<string, number>): SoldLine[] {
  return rung.flatMap(({ sale, workflowId }) =>
    sale.lines.map((l) => ({
      saleWorkflowId: workflowId,
      itemId: l.itemId,
      action: 'DEDUCT' as const,
      quantity: l.quantity,
      signedAt: signed.get(sale.traderInvoiceNumber) ?? Number.NaN,
    })),
  );
}

function exactlyOnceOf(lines: readonly SoldLine[], movements: readonly RecordedMovement[]): StockExactlyOnce {
  const e = exactlyOnce(lines, movements);
  return {
    mismatched: e.mismatched.length,
    duplicateReferenceIds: e.duplicateReferenceIds.length,
    examples: { mismatched: e.mismatched.slice(0, 5), duplicateReferenceIds: e.duplicateReferenceIds.slice(0, 5) },
  };
}

function routesOf(requests: ReadonlyArray<{ method: string; route: string; status: number }>): Record<string, number> {
  const routes: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.method} ${r.route}${r.status >= 200 && r.status < 300 ? '' : ` ${r.status}`}`;
    routes[key] = (routes[key] ?? 0) + 1;
  }
  return routes;
}

const roundedLag = (l: LagSummary): LagSummary => ({
  ...l,
  p50Seconds: round(l.p50Seconds),
  p99Seconds: round(l.p99Seconds),
  maxSeconds: round(l.maxSeconds),
});

/** CPU seconds so far of each worker process, the Temporal server (when it runs on this machine) and the bench process. */
function cpuNow(workers: readonly RunWorker[]): number[] {
  const bench = process.cpuUsage();
  return [
    ...workers.map((w) => (w.current ? treeCpuSeconds(w.current.pid) : 0)),
    serverProcesses(process.pid).reduce((sum, server) => sum + treeCpuSeconds(server.pid), 0),
    (bench.user + bench.system) / 1e6,
  ];
}

/** Each process's CPU between two readings over `wallMs`: where the machine's time went while the tills ran. */
function cpuBetween(workers: readonly RunWorker[], before: number[], after: number[], wallMs: number): ProcessCpu[] {
  const labels = [
    ...workers.map((w) => `worker of ${w.tenant.businessId}`),
    'Temporal server (dev server, or temporal-server and PostgreSQL)',
    'bench (tills + sandbox)',
  ];
  const serverAt = workers.length;
  return labels.flatMap((label, i) => {
    // No server on this machine (a remote TEMPORAL_ADDRESS): nothing to read.
    if (i === serverAt && after[i] === 0) return [];
    const seconds = after[i]! - before[i]!;
    return [
      { process: label, cpuSeconds: round(seconds, 1), percentOfOneCore: round((100 * seconds * 1000) / wallMs, 0) },
    ];
  });
}

/** The faulted tills, until they stop; what they rang up and how the faults went. */
interface Faulted {
  rung: Rung[];
  kills: number;
  commitThenFail: number;
  stoppedAt: number;
}

async function faultedTills(s: Section, worker: RunWorker): Promise<Faulted> {
  const { sandbox, sizes } = s;
  const businessId = worker.tenant.businessId;
  const make = saleMaker(s.world, businessId, { lines: sizes.linesPerSale, seed: SEED + 1, tag: `${s.tag}-F` });
  const runFor = runMs(sizes.faultMinutes, s.scale.k);
  const injectedBefore = sandbox.faults.injectedCounts()['commit-then-fail'] ?? 0;
  const stockWrites = {
    service: 'compliance' as const,
    method: 'POST',
    path: '/v1/stock/adjustments',
    kind: 'commit-then-fail' as const,
  };
  sandbox.faults.add({ ...stockWrites, id: FAULT_RULES[0], status: 503, probability: FAULT_SHARE / 2 });
  // The second rule is tried only when the first did not fire: its probability is conditional on that.
  sandbox.faults.add({
    ...stockWrites,
    id: FAULT_RULES[1],
    failWith: 'reset',
    probability: FAULT_SHARE / 2 / (1 - FAULT_SHARE / 2),
  });
  progress(
    `stock: faults, ${sizes.faultTills} tills on ${businessId} for ${sizes.faultMinutes} scaled minutes (${round(runFor / 1000)} s of tills), ${FAULT_SHARE * 100} % commit-then-fail on stock writes, its worker SIGKILLed twice`,
  );
  try {
    const tills = startTills(s.t, worker.taskQueue, sizes.faultTills, make, s.started);
    await tills.firstSigned;
    // Both kills in the first half, so the tills run on while what was in flight at the kill times out.
    let kills = 0;
    for (const share of [1 / 4, 1 / 4]) {
      await sleep(runFor * share);
      await worker.current?.kill();
      kills += 1;
      progress(`stock: faults worker SIGKILLed (${kills}), started again`);
      worker.current = worker.spawn();
      await worker.current.ready;
    }
    await sleep(runFor / 2);
    const stoppedAt = Date.now();
    // Not waited for: a sale whose signing was in flight at a kill is signed once that attempt times out, in the
    // background like the rest of the settling.
    tills.halt();
    return {
      rung: tills.rung,
      kills,
      commitThenFail: (sandbox.faults.injectedCounts()['commit-then-fail'] ?? 0) - injectedBefore,
      stoppedAt,
    };
  } finally {
    // Off before the backlog: the rules would hit its stock writes too (they match routes, not applications).
    for (const id of FAULT_RULES) sandbox.faults.remove(id);
  }
}

async function faultsFigures(
  s: Section,
  { taskQueue, businessId }: LedgerOf,
  faulted: Faulted,
  done: Settled,
  decisions: StockOperatorDecision[],
): Promise<StockOperatorRun> {
  const ledger = await profileOf(s.t, { taskQueue, businessId });
  const signed = await signedTimes(s.sandbox, businessId);
  const lines = soldLines(faulted.rung, signed);
  const movements = await recordedMovements(s.sandbox, businessId);
  const seen: LedgerMovement[] = [...(done.state?.open ?? []), ...(done.state?.recent ?? [])];
  const needing = salesNeedingOperator(seen);
  // The bench's own decisions count whether or not the ledger still lists them (it keeps its latest 200).
  const decided = new Set(decisions.map((d) => d.referenceId));
  for (const m of seen) if (decided.has(m.referenceId)) for (const l of m.lines) needing.add(l.saleWorkflowId);
  const movementsNeeding = new Set([
    ...seen.filter((m) => m.status === 'needs_operator' || m.settledBy === 'operator').map((m) => m.referenceId),
    ...decided,
  ]);
  return {
    business: businessId,
    tills: s.sizes.faultTills,
    sales: signed.size,
    faultShare: FAULT_SHARE,
    commitThenFail: faulted.commitThenFail,
    kills: faulted.kills,
    salesNeedingOperator: needing.size,
    operatorShare: done.settled ? round(needing.size / signed.size, 4) : Number.NaN,
    movementsNeedingOperator: movementsNeeding.size,
    settledByEvidence: done.state?.totals.settledByEvidence ?? Number.NaN,
    resentAfterEvidence: done.state?.totals.resentAfterEvidence ?? Number.NaN,
    probes: done.state?.totals.probes ?? Number.NaN,
    decisions,
    exactlyOnce: exactlyOnceOf(lines, movements),
    settleSeconds: round((done.at - faulted.stoppedAt) / 1000),
    ledger,
    settled: done.settled,
    ...(done.settled ? {} : { left: leftOf(done.state) }),
  };
}

async function backlogRun(s: Section, worker: RunWorker, workers: readonly RunWorker[]): Promise<StockThroughput> {
  const { t, sandbox, scale, sizes } = s;
  const { businessId, application } = worker.tenant;
  const make = saleMaker(s.world, businessId, { lines: sizes.linesPerSale, seed: SEED, tag: `${s.tag}-B` });
  const warmMs = runMs(sizes.warmMinutes, scale.k);
  const steadyMs = runMs(sizes.steadyMinutes, scale.k);
  progress(
    `stock: backlog, ${sizes.tills} tills on ${businessId} for ${sizes.warmMinutes} + ${sizes.steadyMinutes} scaled minutes (${round((warmMs + steadyMs) / 1000)} s)`,
  );
  const began = Date.now();
  const tills = startTills(t, worker.taskQueue, sizes.tills, make, s.started);
  await tills.firstSigned;
  await sleep(warmMs);
  const cpuFrom = cpuNow(workers);
  const cpuFromAt = Date.now();
  await sleep(steadyMs);
  const stoppedAt = Date.now();
  const cpu = cpuBetween(workers, cpuFrom, cpuNow(workers), stoppedAt - cpuFromAt);
  await tills.stop();
  progress(`stock: ${tills.rung.length} sales rung up; waiting for the ledger to record every line`);
  const drained = await settle(
    t,
    { taskQueue: worker.taskQueue, businessId },
    tills.rung.map((r) => r.workflowId),
    () => stoppedAt + sizes.settleMs,
  );

  const ledger = await profileOf(t, { taskQueue: worker.taskQueue, businessId });
  const signed = await signedTimes(sandbox, businessId);
  const movements = await recordedMovements(sandbox, businessId);
  const lines = soldLines(tills.rung, signed);
  const signedAll = [...signed.values()];
  const window = steadyWindow(Math.min(...signedAll), stoppedAt, warmMs);
  const steadySales = countWithin(signedAll, window.from, window.to);
  const steadyLines = carryLines(lines, movements).filter(
    (c) => c.line.signedAt >= window.from && c.line.signedAt < window.to,
  );
  const requests = sandbox.stats
    .records({ since: began, service: 'compliance', applicationId: application })
    .filter((r) => r.at <= drained.at);
  const steadyRequests = countWithin(
    requests.map((r) => r.at),
    window.from,
    window.to,
  );
  const steadyServed = countWithin(
    requests.filter((r) => r.status !== 429).map((r) => r.at),
    window.from,
    window.to,
  );
  const moved = movements.filter((m) => m.quantity > 0);
  return {
    business: businessId,
    tills: sizes.tills,
    warmMinutes: sizes.warmMinutes,
    steadyMinutes: round(((window.to - window.from) * scale.k) / 60_000, 2),
    sales: signed.size,
    steadySales,
    signedPerMinute: round(perScaledMinute(steadySales, window.from, window.to, scale.k), 2),
    lag: roundedLag(lagSummary(steadyLines, scale.k)),
    callsPerSale: round(requests.length / signed.size, 4),
    steadyCallsPerSale: round(steadyRequests / steadySales, 4),
    steadyUtilisation: round(
      steadyServed / ((scale.requestsPerWindow * (window.to - window.from)) / scale.windowMs),
      4,
    ),
    requests: requests.length,
    rateLimited: requests.filter((r) => r.status === 429).length,
    routes: routesOf(requests),
    movements: moved.length,
    probes: movements.length - moved.length,
    linesPerMovement: round(lines.length / moved.length, 3),
    exactlyOnce: exactlyOnceOf(lines, movements),
    drainSeconds: round((drained.at - stoppedAt) / 1000),
    cpu,
    ledger,
    settled: drained.settled,
    ...(drained.settled ? {} : { left: leftOf(drained.state) }),
  };
}

export async function measureStock(t: BenchTemporal, options: StockSizes & { tag: string }): Promise<StockReport> {
  const scale = stockScale(options.k, {
    requestsPerMinute: options.requestsPerMinute,
    maxDelaySeconds: options.maxDelaySeconds,
  });
  const tag = options.tag.toLowerCase();
  const world = stockWorld({
    businesses: [`biz_stock_${tag}_backlog`, `biz_stock_${tag}_faults`],
    items: options.catalogue,
    requestsPerWindow: scale.requestsPerWindow,
    windowMs: scale.windowMs,
  });
  const [backlogTenant, faultsTenant] = world.tenants as [StockTenant, StockTenant];
  const started: string[] = [];
  let sandbox: Sandbox | undefined;
  const workers: RunWorker[] = [];
  let failed = true;
  try {
    const box = await startBenchSandbox(world.fixture);
    sandbox = box;
    const workerFor = (tenant: StockTenant, role: string): RunWorker => {
      const taskQueue = `bench-stock-${role}-${randomUUID().slice(0, 8)}`;
      const env = {
        ...workerProcessEnv(t, box, scale.workerRequestsPerMinute),
        COMPLIANCE_API_KEY: tenant.key,
        COMPLIANCE_BUSINESS_ID: tenant.businessId,
        STOCK_REPORTING: 'coalesced',
        STOCK_MAX_DELAY: `${scale.maxDelayMs}ms`,
        BENCH_TASK_QUEUE: taskQueue,
      };
      let spawned = 0;
      return {
        tenant,
        taskQueue,
        current: undefined,
        spawn: () => spawnStockWorker(`stock ${role} worker ${++spawned}`, env),
      };
    };
    const backlogWorker = workerFor(backlogTenant, 'backlog');
    const faultsWorker = workerFor(faultsTenant, 'faults');
    workers.push(backlogWorker, faultsWorker);
    progress(
      `stock: two worker processes, ${options.requestsPerMinute} requests per ${scale.windowMs} ms window each (k = ${scale.k}), STOCK_MAX_DELAY ${scale.maxDelayMs} ms`,
    );
    faultsWorker.current = faultsWorker.spawn();
    await faultsWorker.current.ready;
    // The backlog's worker starts while the faults run: its start (a workflow bundle) costs CPU the backlog must not share.
    backlogWorker.current = backlogWorker.spawn();
    const s: Section = { t, sandbox: box, world, scale, sizes: options, tag, started };

    const faulted = await faultedTills(s, faultsWorker);
    progress(
      `stock: ${faulted.rung.length} faulted sales rung up; their ledger settles meanwhile, the bench as its operator`,
    );
    const decisions: StockOperatorDecision[] = [];
    // It may take until the backlog is over, and settleMs more.
    const backlog: { doneAt?: number } = {};
    const faultsSettled = settle(
      t,
      { taskQueue: faultsWorker.taskQueue, businessId: faultsTenant.businessId },
      faulted.rung.map((r) => r.workflowId),
      () => (backlog.doneAt ?? Number.POSITIVE_INFINITY) + options.settleMs,
      operatorFor(t, box, { taskQueue: faultsWorker.taskQueue, businessId: faultsTenant.businessId }, decisions),
    );
    // Observed now, awaited after the backlog: a failure there must not leave this one unhandled.
    faultsSettled.catch(() => undefined);
    let throughput: StockThroughput;
    try {
      await backlogWorker.current.ready;
      throughput = await backlogRun(s, backlogWorker, workers);
    } finally {
      backlog.doneAt = Date.now();
    }
    const operator = await faultsFigures(
      s,
      { taskQueue: faultsWorker.taskQueue, businessId: faultsTenant.businessId },
      faulted,
      await faultsSettled,
      decisions,
    );
    failed = false;
    return {
      k: scale.k,
      windowMs: scale.windowMs,
      requestsPerMinute: options.requestsPerMinute,
      maxDelaySeconds: options.maxDelaySeconds,
      catalogue: options.catalogue,
      linesPerSale: options.linesPerSale,
      throughput,
      operator,
    };
  } finally {
    // Ledgers never end by themselves, nor do the sales of a failed run: ended here, so nothing of this section is left
    // running on a server that outlives the bench.
    const ledgers = workers.map((w) =>
      stockLedgerWorkflowId(w.taskQueue, w.tenant.businessId, branchOf(w.tenant.businessId)),
    );
    await mapLimit([...ledgers, ...(failed ? started : [])], 20, (id) =>
      t.client.workflow
        .getHandle(id)
        .terminate('bench: stock section over')
        .catch(() => undefined),
    );
    await Promise.all(workers.map((w) => w.current?.stop()));
    await sandbox?.close();
  }
}

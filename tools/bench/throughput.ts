/**
 * Sales signed per second, unthrottled (the sandbox's limit and the worker's budget raised): sales started at once
 * (2 stock lines each, no refund window) on 1, then 2 worker processes started as a deployment starts them. A sale
 * counts as signed when its workflow recorded the receipt (history); the rate runs from the first start to the last
 * receipt recorded. The CPU time of each process over the run says where the time went. Just before the sales, as many
 * floor workflows (one activity, tools/bench/floor-workflow.ts) run the same way in the same processes, then as many
 * again with the floor's call matched by the server as a budgeted call is: the CPU of a sale is reported over each
 * floor's, worker and server, so the machinery's cost is a ratio within one run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SalesClient } from '../../src/client/sales-client.js';
import type { BenchTemporal } from './env.js';
import { benchFixture, benchSale, NAIROBI_LINES, progress, startBenchSandbox, workerProcessEnv } from './env.js';
import { segments, signedRecorded } from './history.js';
import { FLOOR_QUEUE, FLOOR_WORKFLOW_TYPE } from './floor-workflow.js';
import { serverProcesses, spawnWorkerProcess, treeCpuSeconds } from './processes.js';
import type { ProcessCpu } from './processes.js';
import type { CpuPerWorkflow, ThroughputCost, ThroughputReport, ThroughputSpan } from './report.js';
import { mapLimit, round } from './stats.js';

/**
 * How long the run waits for its sales to close. One that does not is waiting for an operator (a stock movement
 * whose attempt timed out goes to one rather than be sent twice): it is named in the report and terminated, so the
 * next run's workers on the same queue do not pick it up.
 */
const CLOSE_WAIT_MS = 120_000;

async function closedOrStillOpen(t: BenchTemporal, ids: string[]): Promise<string[]> {
  const deadline = Date.now() + CLOSE_WAIT_MS;
  const open: string[] = [];
  await mapLimit(ids, 50, async (id) => {
    const handle = t.client.workflow.getHandle(id);
    const closed = await Promise.race([
      handle.result().then(() => true),
      sleep(Math.max(0, deadline - Date.now())).then(() => false),
    ]);
    if (closed) return;
    open.push(id);
    await handle.terminate('bench: still open after the throughput run').catch(() => undefined);
  });
  return open;
}

/** The schema's maximum: far above what 2 cores can use. */
const UNTHROTTLED_PER_MINUTE = 100_000;

interface CpuReading {
  workers: number[];
  server: number[];
  bench: NodeJS.CpuUsage;
}

interface Run {
  perSecond: number;
  cpu: ProcessCpu[];
  span: ThroughputSpan;
  floor: { perSecond: number; cpu: ProcessCpu[] };
  cost: ThroughputCost;
}

const perWorkflowMs = (seconds: number, count: number) => round((1000 * seconds) / count, 2);

async function runOnce(t: BenchTemporal, processes: number, options: { sales: number; tag: string }): Promise<Run> {
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: UNTHROTTLED_PER_MINUTE }));
  const workers = Array.from({ length: processes }, (_, i) =>
    spawnWorkerProcess(
      `worker ${i + 1}`,
      workerProcessEnv(t, sandbox, UNTHROTTLED_PER_MINUTE),
      'tools/bench/throughput-worker.ts',
    ),
  );
  try {
    await Promise.all(workers.map((w) => w.ready));
    // src/cli/worker.ts serves the default task queue.
    const sales = new SalesClient(t.client);
    const stillOpen: string[] = [];
    const runSales = async (count: number, label: string) => {
      const ids = await mapLimit(
        Array.from({ length: count }, (_, i) => i),
        50,
        async (i) =>
          (await sales.startSale(benchSale(`BENCH-TP${processes}-${label}-${options.tag}-${i}`, NAIROBI_LINES)))
            .workflowId,
      );
      const open = await closedOrStillOpen(t, ids);
      stillOpen.push(...open);
      return ids;
    };
    const runFloors = (count: number, label: string, matched = false) =>
      mapLimit(
        Array.from({ length: count }, (_, i) => i),
        50,
        async (i) => {
          const workflowId = `floor-TP${processes}-${label}-${options.tag}-${i}`;
          const args = [{ matched }];
          await t.client.workflow.execute(FLOOR_WORKFLOW_TYPE, { taskQueue: FLOOR_QUEUE, workflowId, args });
          return workflowId;
        },
      );
    progress(
      `throughput: ${processes} worker process(es) running; warm-up, then ${options.sales} floor workflows at once, then ${options.sales} sales`,
    );
    await runFloors(4 * processes, 'WARM');
    await runSales(4 * processes, 'WARM');
    const servers = serverProcesses(process.pid);
    const cpuNow = (): CpuReading => ({
      workers: workers.map((w) => treeCpuSeconds(w.pid)),
      server: servers.map((server) => treeCpuSeconds(server.pid)),
      bench: process.cpuUsage(),
    });
    const rows = (before: CpuReading, after: CpuReading, wall: number): ProcessCpu[] => {
      const row = (label: string, seconds: number): ProcessCpu => ({
        process: label,
        cpuSeconds: round(seconds, 2),
        percentOfOneCore: round((100 * seconds) / wall, 0),
      });
      return [
        ...workers.map((w, i) =>
          row(`${w.label} (tools/bench/throughput-worker.ts)`, after.workers[i]! - before.workers[i]!),
        ),
        ...servers.map((server, i) => row(server.label, after.server[i]! - before.server[i]!)),
        row(
          'bench (client + sandbox)',
          (after.bench.user - before.bench.user + after.bench.system - before.bench.system) / 1e6,
        ),
      ];
    };
    const spent = (before: CpuReading, after: CpuReading, count: number): CpuPerWorkflow => {
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      return {
        worker: perWorkflowMs(sum(after.workers) - sum(before.workers), count),
        server: perWorkflowMs(sum(after.server) - sum(before.server), count),
      };
    };
    // The floor first: a sale's stock goes on in its ledger after the sale closes, which would land in a later run.
    const floorBefore = cpuNow();
    const f0 = Date.now();
    await runFloors(options.sales, 'RUN');
    const floorWall = (Date.now() - f0) / 1000;
    const floorAfter = cpuNow();
    await runFloors(options.sales, 'MATCHED', true);
    const matchedAfter = cpuNow();
    const before = cpuNow();
    const t0 = Date.now();
    const ids = await runSales(options.sales, 'RUN');
    const wall = (Date.now() - t0) / 1000;
    const after = cpuNow();
    const histories = await mapLimit(ids, 10, (id) => t.events(id));
    const signedAt = histories.map((events) => signedRecorded(events)?.at ?? Number.NaN);
    const signedSeconds = (Math.max(...signedAt) - t0) / 1000;
    // The sale that closed last, and the steps of its history that took a second or more: where a tail comes from.
    const closedAt = histories.map((events) => events.at(-1)?.at ?? Number.NaN);
    const last = closedAt.indexOf(Math.max(...closedAt));
    const lastEvents = histories[last] ?? [];
    const lastClosed = lastEvents.at(-1);
    const slowestClose = {
      workflowId: ids[last] ?? '',
      closedAfterSeconds: round(((lastClosed?.at ?? t0) - t0) / 1000, 1),
      longSteps: lastClosed
        ? segments(lastEvents, t0, lastClosed)
            .filter((step) => step.ms >= 1_000)
            .map((step) => ({ ...step, ms: round(step.ms) }))
        : [],
    };
    const sale = spent(before, after, options.sales);
    const floor = spent(floorBefore, floorAfter, options.sales);
    const floorMatched = spent(floorAfter, matchedAfter, options.sales);
    const ratioOf = (over: CpuPerWorkflow) => ({
      worker: round(sale.worker / over.worker, 2),
      server: round(sale.server / over.server, 2),
    });
    return {
      perSecond: round(options.sales / signedSeconds, 1),
      cpu: rows(before, after, wall),
      span: { signedSeconds: round(signedSeconds, 1), closedSeconds: round(wall, 1), slowestClose, stillOpen },
      floor: { perSecond: round(options.sales / floorWall, 1), cpu: rows(floorBefore, floorAfter, floorWall) },
      cost: {
        sale,
        floor,
        ratio: ratioOf(floor),
        floorMatched,
        ratioMatched: ratioOf(floorMatched),
      },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await sandbox.close();
  }
}

export async function measureThroughput(
  t: BenchTemporal,
  options: { sales: number; tag: string; twoProcesses: boolean },
): Promise<ThroughputReport> {
  const one = await runOnce(t, 1, options);
  const two = options.twoProcesses ? await runOnce(t, 2, options) : undefined;
  return {
    salesPerSecond: { workers1: one.perSecond, ...(two ? { workers2: two.perSecond } : {}) },
    sales: options.sales,
    cpu: { workers1: one.cpu, ...(two ? { workers2: two.cpu } : {}) },
    spans: { workers1: one.span, ...(two ? { workers2: two.span } : {}) },
    floor: {
      perSecond: { workers1: one.floor.perSecond, ...(two ? { workers2: two.floor.perSecond } : {}) },
      cpu: { workers1: one.floor.cpu, ...(two ? { workers2: two.floor.cpu } : {}) },
    },
    cost: { workers1: one.cost, ...(two ? { workers2: two.cost } : {}) },
  };
}

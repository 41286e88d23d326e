/**
 * Sales signed per second, unthrottled (the sandbox's limit and the worker's budget raised): sales started at once
 * (2 stock lines each, no refund window) on 1, then 2 worker processes started as a deployment starts them. A sale
 * counts as signed when its workflow recorded the receipt (history); the rate runs from the first start to the last
 * receipt recorded. The CPU time of each process over the run says where the time went.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SalesClient } from '../../src/client/sales-client.js';
import type { BenchTemporal } from './env.js';
import { benchFixture, benchSale, NAIROBI_LINES, progress, startBenchSandbox, workerProcessEnv } from './env.js';
import { segments, signedRecorded } from './history.js';
import { childrenNamed, spawnWorkerProcess, treeCpuSeconds } from './processes.js';
import type { ProcessCpu, ThroughputReport, ThroughputSpan } from './report.js';
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

async function runOnce(
  t: BenchTemporal,
  processes: number,
  options: { sales: number; tag: string },
): Promise<{ perSecond: number; cpu: ProcessCpu[]; span: ThroughputSpan }> {
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: UNTHROTTLED_PER_MINUTE }));
  const workers = Array.from({ length: processes }, (_, i) =>
    spawnWorkerProcess(`worker ${i + 1}`, workerProcessEnv(t, sandbox, UNTHROTTLED_PER_MINUTE)),
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
    progress(`throughput: ${processes} worker process(es) running; warm-up, then ${options.sales} sales at once`);
    await runSales(4 * processes, 'WARM');
    const devServerPids = childrenNamed(process.pid, 'temporal');
    const cpuNow = () => ({
      workers: workers.map((w) => treeCpuSeconds(w.pid)),
      server: devServerPids.map((pid) => treeCpuSeconds(pid)),
      bench: process.cpuUsage(),
    });
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
    const perSecond = round(options.sales / signedSeconds, 1);
    const row = (label: string, seconds: number): ProcessCpu => ({
      process: label,
      cpuSeconds: round(seconds, 2),
      percentOfOneCore: round((100 * seconds) / wall, 0),
    });
    const cpu = [
      ...workers.map((w, i) => row(`${w.label} (tsx src/cli/worker.ts)`, after.workers[i]! - before.workers[i]!)),
      ...devServerPids.map((_, i) => row('temporal dev server', after.server[i]! - before.server[i]!)),
      row(
        'bench (client + sandbox)',
        (after.bench.user - before.bench.user + after.bench.system - before.bench.system) / 1e6,
      ),
    ];
    return {
      perSecond,
      cpu,
      span: { signedSeconds: round(signedSeconds, 1), closedSeconds: round(wall, 1), slowestClose, stillOpen },
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
  };
}

/**
 * Use of the rate budget under a backlog: sales started at once against a sandbox with a short rate window (so a
 * backlog spans several windows in seconds), the worker told the same limit per minute. Counted from the sandbox's
 * request log; see budget-math.ts and docs/benchmarks.md for what is counted.
 */
import type { BenchTemporal } from './env.js';
import {
  benchFixture,
  benchSale,
  NAIROBI_LINES,
  progress,
  RETAIL_APP,
  startBenchSandbox,
  startBenchWorkers,
} from './env.js';
import { backlogReadyAt, perMinute, utilisation } from './budget-math.js';
import type { BenchEvent } from './history.js';
import type { BudgetReport } from './report.js';
import { mapLimit } from './stats.js';

const SIGNING_ACTIVITY = 'signSale';
export const BUDGET_WINDOW_MS = 5_000;
export const BUDGET_LIMIT_PER_WINDOW = 20;

/** Sales enough for `windows` complete windows and a spare one, at the full limit. */
export function backlogSales(windows: number, limitPerWindow: number, requestsPerSale: number): number {
  return Math.ceil(((windows + 1.5) * limitPerWindow) / requestsPerSale);
}

export async function measureBudget(
  t: BenchTemporal,
  options: { windows: number; tag: string },
): Promise<BudgetReport> {
  const windowMs = BUDGET_WINDOW_MS;
  const limit = BUDGET_LIMIT_PER_WINDOW;
  const workerRequestsPerMinute = perMinute(limit, windowMs);
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: limit, windowMs }));
  const workers = await startBenchWorkers(t, sandbox, { requestsPerMinute: workerRequestsPerMinute });
  try {
    // A sale's own request is its signing: its stock lines go to the branch's ledger, which merges them while
    // the budget is contended, so the backlog is sized at one request a sale (at 1 + its lines it would span too few).
    const sales = backlogSales(options.windows, limit, 1);
    progress(
      `budget: ${sales} sales at once on ${limit} requests per ${windowMs} ms (worker: ${workerRequestsPerMinute}/min)`,
    );
    const from = Date.now();
    const ids = await mapLimit(
      Array.from({ length: sales }, (_, i) => i),
      50,
      async (i) =>
        (await workers.sales.startSale(benchSale(`BENCH-BUDGET-${options.tag}-${i}`, NAIROBI_LINES))).workflowId,
    );
    await mapLimit(ids, 50, (id) => t.client.workflow.getHandle(id).result());
    const log = sandbox.stats.records({ service: 'compliance', applicationId: RETAIL_APP });
    const drainedAt = Math.max(...log.map((r) => r.at));
    const signings = await mapLimit(ids, 20, async (id) => signingTimes(await t.events(id)));
    const readyAt = backlogReadyAt(signings, limit);
    const u = utilisation(log, {
      windowMs,
      limit,
      runStartedAt: from,
      // NaN (unmet) when a window's worth never waited: the measure needs a backlog in the queue.
      backlogStartedAt: readyAt ?? Infinity,
      backlogDrainedAt: drainedAt,
    });
    const countedFromSeconds = readyAt === undefined ? null : Math.round((readyAt - from) / 100) / 10;
    return { ...u, windowMs, limitPerWindow: limit, workerRequestsPerMinute, sales, countedFromSeconds };
  } finally {
    await workers.stop();
    await sandbox.close();
  }
}

/**
 * When a sale's signing was scheduled and started, from its history. A retried activity's one STARTED event is its
 * last attempt's, so a retry's backoff counts as waiting: the pacing's own doing, which the measure should see.
 */
function signingTimes(events: readonly BenchEvent[]): { scheduledAt: number; startedAt: number } {
  const scheduled = events.find((e) => e.type === 'ACTIVITY_TASK_SCHEDULED' && e.activity === SIGNING_ACTIVITY);
  const started = events.find((e) => e.type === 'ACTIVITY_TASK_STARTED' && e.activity === SIGNING_ACTIVITY);
  if (!scheduled || !started) throw new Error(`a sale's history has no ${SIGNING_ACTIVITY} scheduled and started`);
  return { scheduledAt: scheduled.at, startedAt: started.at };
}

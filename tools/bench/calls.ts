/**
 * Compliance requests per sale, counted in the sandbox's own request log (never the workflow's counters): each sale
 * runs alone, from its start to its close and its lines recorded by the stock ledger, so every compliance request of
 * the retail application in that time window is its own. The item cache is warmed first (one sale before), so the figures are the steady state.
 */
import type { Sandbox } from '../../sandbox/server.js';
import { defaultComplianceFixtureInput } from '../../sandbox/default-fixture.js';
import type { SaleInput } from '../../src/contracts/sale.js';
import { getStockLedgerStateQuery, stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import type { BenchTemporal, BenchWorkers } from './env.js';
import { benchSale, DEMO, NAIROBI_LINES, progress, RETAIL_APP } from './env.js';
import type { CallsReport } from './report.js';
import { median } from './stats.js';

/** L: the lines whose item the demo world tracks stock for. */
export function stockTrackedLines(lines: SaleInput['lines'], businessId: string = DEMO.businesses.nairobi): number {
  const items = defaultComplianceFixtureInput.businesses?.find((b) => b.id === businessId)?.items ?? [];
  return lines.filter((l) => items.find((i) => i.id === l.itemId)?.stockTracked !== false).length;
}

/** Requests in [from, to] of the retail application, by "METHOD route". */
export function requestsBetween(sandbox: Sandbox, from: number, to: number): Record<string, number> {
  const routes: Record<string, number> = {};
  for (const r of sandbox.stats.records({ since: from, service: 'compliance', applicationId: RETAIL_APP })) {
    if (r.at > to) continue;
    const key = `${r.method} ${r.route} ${r.status}`;
    routes[key] = (routes[key] ?? 0) + 1;
  }
  return routes;
}

const total = (routes: Record<string, number>) => Object.values(routes).reduce((a, b) => a + b, 0);

/** What the business's stock ledger has recorded so far and has still to send (nothing before its first hand-over). */
async function ledgerState(t: BenchTemporal, w: BenchWorkers): Promise<{ recorded: number; toSend: number }> {
  const ledger = t.client.workflow.getHandle(
    stockLedgerWorkflowId(w.taskQueue, DEMO.businesses.nairobi, DEMO.branches.nairobiCbd),
  );
  return ledger.query(getStockLedgerStateQuery).then(
    (state) => ({
      recorded: state.totals.linesRecorded,
      toSend: Object.values(state.pending).reduce((a, b) => a + b, 0) + state.open.length,
    }),
    () => ({ recorded: 0, toSend: 0 }),
  );
}

const linesRecorded = async (t: BenchTemporal, w: BenchWorkers) => (await ledgerState(t, w)).recorded;

/**
 * From the sale's start until its workflow closed and its branch's stock ledger (the writer of its stock)
 * recorded its lines: the sale hands them over and closes, the movements follow.
 */
async function countSale(
  t: BenchTemporal,
  w: BenchWorkers,
  sandbox: Sandbox,
  tin: string,
): Promise<Record<string, number>> {
  // Lines of the sections before (sales whose stock is still on its way) would be recorded in this sale's window.
  for (const until = Date.now() + 30_000; Date.now() < until && (await ledgerState(t, w)).toSend > 0;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const recordedBefore = await linesRecorded(t, w);
  const from = Date.now();
  const { workflowId } = await w.sales.startSale(benchSale(tin, NAIROBI_LINES));
  await t.client.workflow.getHandle(workflowId).result();
  for (
    const until = Date.now() + 30_000;
    Date.now() < until && (await linesRecorded(t, w)) < recordedBefore + stockTrackedLines(NAIROBI_LINES);
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return requestsBetween(sandbox, from, Date.now());
}

export async function measureCalls(
  t: BenchTemporal,
  w: BenchWorkers,
  sandbox: Sandbox,
  options: { perPath: number; tag: string },
): Promise<CallsReport> {
  progress(
    `calls: a warm-up sale, then ${options.perPath} immediate and ${options.perPath} async (callback) sales, one at a time`,
  );
  await countSale(t, w, sandbox, `BENCH-CALLS-WARM-${options.tag}`);
  const immediate: Record<string, number>[] = [];
  const asyncCallback: Record<string, number>[] = [];
  for (let i = 0; i < options.perPath; i++) {
    immediate.push(await countSale(t, w, sandbox, `BENCH-CALLS-${options.tag}-${i}`));
    asyncCallback.push(await countSale(t, w, sandbox, `${DEMO.invoicePrefixes.async}BENCH-${options.tag}-${i}`));
  }
  // The most frequent pattern is reported by route; the figure is the median count.
  const typical = (runs: Record<string, number>[]) =>
    runs.find((r) => total(r) === median(runs.map(total))) ?? runs[0] ?? {};
  return {
    immediate: median(immediate.map(total)),
    asyncCallback: median(asyncCallback.map(total)),
    lines: stockTrackedLines(NAIROBI_LINES),
    routes: { immediate: typical(immediate), asyncCallback: typical(asyncCallback) },
  };
}

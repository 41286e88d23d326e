/**
 * Time to a signed receipt on the immediate path next to the floor (one workflow, one activity, one GET), sales and
 * floors alternating one at a time on the same server and worker process, so both see the same machine; and the
 * history events of the closed sales.
 */
import type { BenchWorkers, BenchTemporal } from './env.js';
import { benchSale, NAIROBI_LINES, progress } from './env.js';
import { medianProfile, recordedAfter, segments, signedRecorded, signingActivity, type Segment } from './history.js';
import type { LatencyReport } from './report.js';
import { median, round, summarise } from './stats.js';

export interface LatencyResult {
  latency: LatencyReport;
  historyEvents: { immediate: number; distinctCounts: number[] };
}

const FLOOR_ACTIVITY = 'readLookup';

/** One sale, start to close; the time from the client's start to the recorded receipt, and its path. */
async function timeSale(t: BenchTemporal, w: BenchWorkers, tin: string) {
  const sale = benchSale(tin, NAIROBI_LINES);
  const t0 = Date.now();
  const { workflowId } = await w.sales.startSale(sale);
  await t.client.workflow.getHandle(workflowId).result();
  const events = await t.events(workflowId);
  const recorded = signedRecorded(events);
  if (!recorded) throw new Error(`sale ${tin}: no activity result with a signed receipt in its history`);
  return { ms: recorded.at - t0, events: events.length, path: segments(events, t0, recorded), activity: signingActivity(events) };
}

async function timeFloor(t: BenchTemporal, w: BenchWorkers) {
  const t0 = Date.now();
  const handle = await w.startFloor();
  await handle.result();
  const events = await t.events(handle.workflowId);
  const recorded = recordedAfter(events, (e) => e.activity === FLOOR_ACTIVITY);
  if (!recorded) throw new Error(`floor ${handle.workflowId}: no recorded ${FLOOR_ACTIVITY} result`);
  return { ms: recorded.at - t0, path: segments(events, t0, recorded) };
}

export async function measureLatency(t: BenchTemporal, w: BenchWorkers, options: { sales: number; warmUp: number; tag: string }): Promise<LatencyResult> {
  progress(`latency: ${options.warmUp} warm-up rounds, then ${options.sales} sales and ${options.sales} floor workflows, alternating`);
  for (let i = 0; i < options.warmUp; i++) {
    await timeSale(t, w, `BENCH-WARM-${options.tag}-${i}`);
    await timeFloor(t, w);
  }
  const sales: Awaited<ReturnType<typeof timeSale>>[] = [];
  const floors: Awaited<ReturnType<typeof timeFloor>>[] = [];
  for (let i = 0; i < options.sales; i++) {
    sales.push(await timeSale(t, w, `BENCH-LAT-${options.tag}-${i}`));
    floors.push(await timeFloor(t, w));
  }
  const saleMs = sales.map((s) => s.ms);
  const floorMs = floors.map((f) => f.ms);
  const ratio = round(median(saleMs) / median(floorMs), 2);
  const saleProfile = medianProfile(sales.map((s) => s.path), median);
  const floorProfile = medianProfile(floors.map((f) => f.path), median);
  const roundSteps = (steps: Segment[]) => steps.map((s) => ({ ...s, ms: round(s.ms) }));
  const counts = sales.map((s) => s.events);
  return {
    latency: {
      saleToSignedMs: summarise(saleMs),
      floorMs: summarise(floorMs),
      ratio,
      signingActivity: sales[0]?.activity,
      ...(ratio > 1.3 ? { profile: { sale: roundSteps(saleProfile.steps), floor: roundSteps(floorProfile.steps), saleRunsLeftOut: saleProfile.leftOut } } : {}),
    },
    historyEvents: { immediate: median(counts), distinctCounts: [...new Set(counts)].sort((a, b) => a - b) },
  };
}

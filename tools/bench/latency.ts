/**
 * Time to a signed receipt on the immediate path next to the floor (one workflow, one activity, one GET), sales and
 * floors alternating one at a time on the same server and worker process, so both see the same machine; the same for
 * a till's one update-with-start call next to `executeWorkflow` of the floor; and the history events of the closed sales.
 */
import type { BenchWorkers, BenchTemporal } from './env.js';
import { benchSale, NAIROBI_LINES, progress } from './env.js';
import { medianProfile, recordedAfter, segments, signedRecorded, signingActivity, type Segment } from './history.js';
import type { LatencyReport } from './report.js';
import { median, round, summarise } from './stats.js';
import { timeFloorExecute, timeTill, type TimedCall } from './till.js';

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
  return {
    ms: recorded.at - t0,
    events: events.length,
    path: segments(events, t0, recorded),
    activity: signingActivity(events),
  };
}

async function timeFloor(t: BenchTemporal, w: BenchWorkers, matched = false) {
  const t0 = Date.now();
  const handle = await w.startFloor(matched);
  await handle.result();
  const events = await t.events(handle.workflowId);
  const recorded = recordedAfter(events, (e) => e.activity === FLOOR_ACTIVITY);
  if (!recorded) throw new Error(`floor ${handle.workflowId}: no recorded ${FLOOR_ACTIVITY} result`);
  return { ms: recorded.at - t0, path: segments(events, t0, recorded) };
}

/** The median of each step over runs of the most common shape, and how many runs of another shape were left out. */
const profileOf = (runs: Array<{ path: Segment[] }>) =>
  medianProfile(
    runs.map((r) => r.path),
    median,
  );

function tillProfile(tills: TimedCall[], floors: TimedCall[], roundSteps: (steps: Segment[]) => Segment[]) {
  const [till, floor] = [profileOf(tills), profileOf(floors)];
  return { till: roundSteps(till.steps), floor: roundSteps(floor.steps), tillRunsLeftOut: till.leftOut };
}

export async function measureLatency(
  t: BenchTemporal,
  w: BenchWorkers,
  options: { sales: number; warmUp: number; tag: string },
): Promise<LatencyResult> {
  progress(
    `latency: ${options.warmUp} warm-up rounds, then ${options.sales} rounds of a sale, a floor workflow, a till's update-with-start and a floor by executeWorkflow, each floor also with its call matched`,
  );
  for (let i = 0; i < options.warmUp; i++) {
    await timeSale(t, w, `BENCH-WARM-${options.tag}-${i}`);
    await timeFloor(t, w);
    await timeFloor(t, w, true);
    await timeTill(t, w, `BENCH-TILL-WARM-${options.tag}-${i}`);
    await timeFloorExecute(t, w);
    await timeFloorExecute(t, w, true);
  }
  const sales: Awaited<ReturnType<typeof timeSale>>[] = [];
  const floors: Awaited<ReturnType<typeof timeFloor>>[] = [];
  const matchedFloors: Awaited<ReturnType<typeof timeFloor>>[] = [];
  const tills: TimedCall[] = [];
  const floorExecutes: TimedCall[] = [];
  const matchedFloorExecutes: TimedCall[] = [];
  for (let i = 0; i < options.sales; i++) {
    sales.push(await timeSale(t, w, `BENCH-LAT-${options.tag}-${i}`));
    floors.push(await timeFloor(t, w));
    matchedFloors.push(await timeFloor(t, w, true));
    tills.push(await timeTill(t, w, `BENCH-TILL-${options.tag}-${i}`));
    floorExecutes.push(await timeFloorExecute(t, w));
    matchedFloorExecutes.push(await timeFloorExecute(t, w, true));
  }
  const tillMs = tills.map((c) => c.ms);
  const floorExecuteMs = floorExecutes.map((c) => c.ms);
  const matchedFloorExecuteMs = matchedFloorExecutes.map((c) => c.ms);
  const saleMs = sales.map((s) => s.ms);
  const floorMs = floors.map((f) => f.ms);
  const matchedFloorMs = matchedFloors.map((f) => f.ms);
  const ratio = round(median(saleMs) / median(floorMs), 2);
  const tillReceiptRatio = round(median(tillMs) / median(floorExecuteMs), 2);
  const matchedRatio = round(median(saleMs) / median(matchedFloorMs), 2);
  const tillMatchedRatio = round(median(tillMs) / median(matchedFloorExecuteMs), 2);
  const [saleProfile, floorProfile, matchedFloorProfile] = [
    profileOf(sales),
    profileOf(floors),
    profileOf(matchedFloors),
  ];
  const roundSteps = (steps: Segment[]) => steps.map((s) => ({ ...s, ms: round(s.ms) }));
  const counts = sales.map((s) => s.events);
  return {
    latency: {
      saleToSignedMs: summarise(saleMs),
      floorMs: summarise(floorMs),
      ratio,
      signingActivity: sales[0]?.activity,
      tillReceiptMs: summarise(tillMs),
      floorExecuteMs: summarise(floorExecuteMs),
      tillReceiptRatio,
      floorMatchedMs: summarise(matchedFloorMs),
      floorMatchedExecuteMs: summarise(matchedFloorExecuteMs),
      matchedRatio,
      tillMatchedRatio,
      ...(ratio > 1.3
        ? {
            profile: {
              sale: roundSteps(saleProfile.steps),
              floor: roundSteps(floorProfile.steps),
              floorMatched: roundSteps(matchedFloorProfile.steps),
              saleRunsLeftOut: saleProfile.leftOut,
            },
          }
        : {}),
      ...(tillReceiptRatio > 1.3 ? { tillProfile: tillProfile(tills, floorExecutes, roundSteps) } : {}),
    },
    historyEvents: { immediate: median(counts), distinctCounts: [...new Set(counts)].sort((a, b) => a - b) },
  };
}

/**
 * Fairness between businesses on one budget: business B (Mombasa) sends a few sales at once, first alone, then right
 * after business A (Nairobi) flooded the same throttled budget, both through the organisation-wide key. B's median
 * time to a signed receipt under the flood, over its median alone.
 */
import type { SaleInput } from '../../src/contracts/sale.js';
import type { BenchTemporal, BenchWorkers } from './env.js';
import {
  benchFixture,
  benchSale,
  DEMO,
  MOMBASA_LINES,
  NAIROBI_LINES,
  progress,
  startBenchSandbox,
  startBenchWorkers,
} from './env.js';
import { medianProfile, segments, signedRecorded, waitsBefore, type Segment } from './history.js';
import type { FairnessReport } from './report.js';
import { mapLimit, median, medianByKey, round } from './stats.js';

export const FAIRNESS_REQUESTS_PER_MINUTE = 1_200;

/** Starts `sales` at once; each one's time from its start to its recorded receipt, and its activities' queue waits. */
async function timeToSigned(
  t: BenchTemporal,
  w: BenchWorkers,
  sales: SaleInput[],
): Promise<{ ms: number[]; waits: Record<string, number>; steps: Segment[] }> {
  const runs = await mapLimit(sales, sales.length, async (sale) => {
    const t0 = Date.now();
    const { workflowId } = await w.sales.startSale(sale);
    await t.client.workflow.getHandle(workflowId).result();
    const events = await t.events(workflowId);
    const recorded = signedRecorded(events);
    if (!recorded) throw new Error(`sale ${sale.traderInvoiceNumber} has no recorded receipt`);
    return { ms: recorded.at - t0, waits: waitsBefore(events, recorded), path: segments(events, t0, recorded) };
  });
  const steps = medianProfile(
    runs.map((r) => r.path),
    median,
  ).steps.map((s) => ({ ...s, ms: round(s.ms) }));
  return { ms: runs.map((r) => r.ms), waits: medianByKey(runs.map((r) => r.waits)), steps };
}

export async function measureFairness(
  t: BenchTemporal,
  options: { flood: number; sales: number; tag: string },
): Promise<FairnessReport> {
  const rpm = FAIRNESS_REQUESTS_PER_MINUTE;
  const sandbox = await startBenchSandbox(benchFixture({ requestsPerWindow: rpm }));
  const workers = await startBenchWorkers(t, sandbox, { requestsPerMinute: rpm });
  const flood: string[] = [];
  try {
    const b = (label: string) =>
      Array.from({ length: options.sales }, (_, i) =>
        benchSale(`BENCH-FAIR-B-${label}-${options.tag}-${i}`, MOMBASA_LINES, DEMO.businesses.mombasa),
      );
    progress(
      `fairness: warm-up, ${options.sales} sales of B alone, then the same while A floods ${options.flood} (budget ${rpm}/min)`,
    );
    await timeToSigned(t, workers, [
      benchSale(`BENCH-FAIR-WARM-A-${options.tag}`, NAIROBI_LINES),
      ...b('WARM').slice(0, 1),
    ]);
    const alone = await timeToSigned(t, workers, b('ALONE'));
    flood.push(
      ...(await mapLimit(
        Array.from({ length: options.flood }, (_, i) => i),
        50,
        async (i) =>
          (await workers.sales.startSale(benchSale(`BENCH-FAIR-A-${options.tag}-${i}`, NAIROBI_LINES))).workflowId,
      )),
    );
    const flooded = await timeToSigned(t, workers, b('FLOODED'));
    return {
      ratio: round(median(flooded.ms) / median(alone.ms), 2),
      waitsMs: { alone: alone.waits, flooded: flooded.waits },
      profile: { alone: alone.steps, flooded: flooded.steps },
      aloneP50Ms: round(median(alone.ms)),
      floodedP50Ms: round(median(flooded.ms)),
      flood: options.flood,
      sales: options.sales,
      requestsPerMinute: rpm,
    };
  } finally {
    // The rest of the flood is of no interest: ended, not waited for.
    await mapLimit(flood, 20, (id) =>
      t.client.workflow
        .getHandle(id)
        .terminate('bench: fairness measured')
        .catch(() => undefined),
    );
    await workers.stop();
    await sandbox.close();
  }
}

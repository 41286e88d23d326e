/** The bench's command line: `--quick`, `--assert[=<target key,...>]`, `--only <section,...>`, `--out <path>`; and the sample sizes of each mode. */
import { CommanderError, InvalidArgumentError } from 'commander';
import { createProgram, nonBlank, type CliCommand } from '../../src/cli/command.js';
import { catalogueSizes } from './catalogue.js';
import { longevitySizes } from './longevity.js';
import { startSizes } from './start.js';
import { stockInSizes } from './stock-in.js';
import { SECTIONS, TARGET_KEYS, type Section } from './report.js';

export interface BenchOptions {
  quick: boolean;
  assert: boolean;
  /** With `--assert=<key,...>`: only these targets fail the run; the others are still measured and reported. */
  assertKeys: string[] | undefined;
  /** With `--assert`: a missed target read from the machine's time is measured again once (report.ts, TIMED_TARGET_KEYS). */
  confirm: boolean;
  sections: Section[];
  out: string;
}

export const DEFAULT_OUT = 'bench/report.json';

/** A wrong command line, from `parseArgs`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The option values as commander reads them. */
export interface BenchValues {
  quick?: boolean;
  assert?: true | string[];
  confirm?: boolean;
  only?: Section[];
  out: string;
}

/** A comma-separated list, each entry one of `known`; `what` names the entries in the refusal. */
function listOf<T extends string>(flag: string, what: string, known: readonly T[]): (text: string) => T[] {
  return (text) => {
    const wanted = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = wanted.filter((s) => !(known as readonly string[]).includes(s));
    if (wanted.length === 0 || unknown.length > 0)
      throw new InvalidArgumentError(
        `${flag}: unknown ${what} ${unknown.join(', ') || '(none)'}; ${what}s: ${known.join(', ')}`,
      );
    return wanted as T[];
  };
}

/** The bench's program, without its action (main.ts gives it one). */
export function benchProgram(): CliCommand {
  return createProgram(
    'npm run bench --',
    'One benchmark report of the sale lifecycle (latency against the floor, requests per sale, history size, rate-budget use, throughput, fairness, priority, many tenants on one worker, the stock ledger under a backlog, outages), written to a JSON file and printed as tables (docs/benchmarks.md).',
  )
    .option(
      '--quick',
      'smaller samples, for CI: each phase ≤ ~40 s (tenancy ≤ ~90 s, stock ~3 min, stock-in ~2 min, outage ~4 min, catalogue ~4 min, longevity ~4 min)',
    )
    .option(
      '--assert [targets]',
      'exit 1 when a target is unmet; with --assert=<target key,...>, only when one of these is',
      listOf('--assert', 'target', TARGET_KEYS),
    )
    .option(
      '--confirm',
      "with --assert: when every target missed is a figure of the machine's time (a pace, a lag, a latency ratio), measure their sections once more and fail only if they miss again",
    )
    .option(
      '--only <sections>',
      `only these sections, comma-separated: ${SECTIONS.join(',')}`,
      listOf('--only', 'section', SECTIONS),
    )
    .option('--out <path>', 'where the report is written', nonBlank('--out'), DEFAULT_OUT);
}

export function benchOptions(values: BenchValues): BenchOptions {
  if (values.confirm === true && values.assert === undefined)
    throw new UsageError('--confirm needs --assert: it measures again only a target the run asserts');
  return {
    quick: values.quick === true,
    assert: values.assert !== undefined,
    assertKeys: Array.isArray(values.assert) ? values.assert : undefined,
    confirm: values.confirm === true,
    // In the bench's own order, whatever the order asked.
    sections: SECTIONS.filter((s) => values.only === undefined || values.only.includes(s)),
    out: values.out,
  };
}

/** Reads a command line as `npm run bench` does, printing nothing: a wrong one throws a UsageError. */
export function parseArgs(argv: readonly string[]): BenchOptions {
  const program = benchProgram().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError && err.exitCode !== 0) throw new UsageError(err.message);
    throw err;
  }
  return benchOptions(program.opts<BenchValues>());
}

/** Sample sizes: the full run (≤ ~10 min on 2 cores, tenancy ~4 min more) and the quick one for CI (each phase ≤ ~40 s, tenancy ≤ ~90 s). */
export function sampleSizes(quick: boolean) {
  return quick
    ? {
        latencySales: 20,
        warmUp: 2,
        openSales: 5,
        // A median of 3: one sale's count takes in whatever its ledger met (a probe after a lost answer on a slow
        // server: 5 where the steady state is 4, in one CI run on PostgreSQL).
        callsPerPath: 3,
        // As many as the full run: each 5 s window lands within a few requests of its limit, so three are too few to
        // tell 0.97 from noise.
        budgetWindows: 6,
        throughputSales: 100,
        // The targets read one process; the second, a figure to compare, is the full run's (CI's time is short).
        throughputTwoProcesses: false,
        workflowCostReplays: 100,
        flood: 100,
        fairnessSales: 5,
        tills: 3,
        stockSales: 8,
        registrations: 8,
        purchasesSyncs: 4,
        tenancy: tenancySizes(true),
        stock: stockSizes(true),
        stockIn: stockInSizes(true),
        outage: outageSizes(true),
        catalogue: catalogueSizes(true),
        longevity: longevitySizes(true),
        fiscalDay: fiscalDaySizes(true),
        start: startSizes(true),
      }
    : {
        latencySales: 60,
        warmUp: 3,
        openSales: 20,
        callsPerPath: 3,
        budgetWindows: 6,
        throughputSales: 200,
        throughputTwoProcesses: true,
        workflowCostReplays: 400,
        flood: 300,
        fairnessSales: 10,
        tills: 5,
        stockSales: 20,
        registrations: 20,
        purchasesSyncs: 10,
        tenancy: tenancySizes(false),
        stock: stockSizes(false),
        stockIn: stockInSizes(false),
        outage: outageSizes(false),
        catalogue: catalogueSizes(false),
        longevity: longevitySizes(false),
        fiscalDay: fiscalDaySizes(false),
        start: startSizes(false),
      };
}

/**
 * The tenancy section: the scale served by one worker process, the flood and the quiet merchant's sales,
 * how long the flood is kept from its first request (at least one whole rate window, the real minute), the roll call
 * (during the backlogs; first when it is a sale per business, which beside backlogs asks more than 2 cores can do) and
 * how often the worker reads its tenants file.
 */
export function tenancySizes(quick: boolean) {
  const shared = { flood: 300, quietSales: 10, requestsPerMinute: 120, reloadMs: 2_000 };
  return quick
    ? {
        ...shared,
        // Past 100 windows of several businesses: a queue each would pass what a deployment version may hold.
        applications: 220,
        businesses: 550,
        backlogMs: 62_000,
        extraBacklogs: 0,
        rollCall: 'applications' as const,
        rollCallFirst: false,
      }
    : {
        ...shared,
        applications: 400,
        businesses: 1_000,
        backlogMs: 130_000,
        extraBacklogs: 2,
        rollCall: 'businesses' as const,
        rollCallFirst: true,
      };
}

export type TenancySizes = ReturnType<typeof tenancySizes>;

/**
 * The stock section, k times faster than real time; minutes below are scaled ones (the time the run stands
 * for). A short faulted run, then closed-loop tills for a warm-up (the first max delay, when no line is old enough to
 * go out at till priority) and the steady part measured; `settleMs` (real) is the longest wait for a ledger to settle.
 * k is what 2 cores carry: at k = 4 the worker and the dev server take ~1.1 cores, and a server on PostgreSQL (CI's
 * bench) leaves the worker enough; at k = 5 it did not. Quick (~3 min): 3 + 5 scaled minutes of backlog in 120 s;
 * full (6–8 min): 3.5 + 12.5 in 240 s.
 */
export function stockSizes(quick: boolean) {
  const shared = { requestsPerMinute: 120, maxDelaySeconds: 180, catalogue: 30, linesPerSale: 3, settleMs: 120_000 };
  return quick
    ? { ...shared, k: 4, tills: 30, warmMinutes: 3, steadyMinutes: 5, faultTills: 10, faultMinutes: 1.5 }
    : { ...shared, k: 4, tills: 30, warmMinutes: 3.5, steadyMinutes: 12.5, faultTills: 20, faultMinutes: 4 };
}

export type StockSizes = ReturnType<typeof stockSizes>;

/**
 * The outage section, in real time (a sale's pauses between tries are the workflow's, not scaled): each outage's
 * length, the sales started during it, and the longest wait for them (and then for the stock ledger) after its end,
 * past the five-minute ceiling of a sale's pause. Quick (~4 min): two outages of 60 s, 30 sales each; full (~10 min):
 * 180 s, 60 sales each.
 */
export function outageSizes(quick: boolean) {
  const shared = { requestsPerMinute: 120, settleMs: 330_000 };
  return quick ? { ...shared, outageMs: 60_000, sales: 30 } : { ...shared, outageMs: 180_000, sales: 60 };
}

export type OutageSizes = ReturnType<typeof outageSizes>;

/**
 * The fiscalDay section, in real time: sales before and after the sandbox's midnight, the busy day's entries (the
 * payload bound is at 10,000 a day in both modes) and the till pairs. Quick ~5 min; full ~7 min.
 */
export interface FiscalDaySizes {
  sales: number;
  /** Real seconds of sales before the sandbox's midnight, and after it. */
  beforeSeconds: number;
  afterSeconds: number;
  busyDayEntries: number;
  tillPairs: number;
}

export function fiscalDaySizes(quick: boolean): FiscalDaySizes {
  return quick
    ? { sales: 60, beforeSeconds: 40, afterSeconds: 40, busyDayEntries: 10_000, tillPairs: 20 }
    : { sales: 200, beforeSeconds: 60, afterSeconds: 60, busyDayEntries: 10_000, tillPairs: 60 };
}

export type SampleSizes = ReturnType<typeof sampleSizes>;

/**
 * `npm run bench`: one benchmark report of the sale lifecycle (latency against the floor, requests per sale, history
 * size, rate-budget use, throughput, fairness, priority), written to bench/report.json and printed as tables.
 * See docs/benchmarks.md. Options: --quick, --assert[=<target key,...>], --confirm, --only <section,...>, --out <path>.
 */
import { parseAndRun } from '../../src/cli/command.js';
import { benchOptions, benchProgram, UsageError, type BenchOptions, type BenchValues } from './options.js';
import { formatReport, sectionsToConfirm, unmet, writeReport, type BenchReport, type TargetResult } from './report.js';
import { runBench } from './run.js';

const EXIT_USAGE = 2;

async function measure(options: BenchOptions): Promise<BenchReport> {
  const report = await runBench(options);
  writeReport(options.out, report);
  console.log(formatReport(report));
  console.log(`\nreport written to ${options.out}`);
  return report;
}

const missedIn = (report: BenchReport, options: BenchOptions): TargetResult[] =>
  unmet(report).filter((t) => options.assertKeys === undefined || options.assertKeys.includes(t.key));

const listed = (targets: readonly TargetResult[]) =>
  targets
    .map(
      (t) =>
        `  ${t.key} = ${String(t.value === undefined ? t.value : Number(t.value.toFixed(3)))} (target ${t.target})`,
    )
    .join('\n');

/** Where the second measure's report goes: beside the first, never over it. */
const confirmOut = (out: string) => (out.endsWith('.json') ? `${out.slice(0, -5)}.confirm.json` : `${out}.confirm`);

async function main(options: BenchOptions): Promise<number> {
  // A section ends by stopping its workers, and measures nothing of their drain: as little grace as a worker takes,
  // for the workers loaded here and those spawned (they inherit the environment).
  process.env.SHUTDOWN_GRACE_TIME ??= '1s';
  const missed = missedIn(await measure(options), options);
  if (!options.assert || missed.length === 0) return 0;
  // Every miss a figure of the machine's time: a regression misses again, a busy moment of a shared machine seldom
  // does twice. Each such section is measured again whole, every target it asserts asserted again.
  const sections = options.confirm ? sectionsToConfirm(missed) : [];
  if (sections.length === 0) {
    console.error(`\nbench: ${missed.length} target(s) unmet:\n${listed(missed)}`);
    return 1;
  }
  console.error(
    `\nbench: ${missed.length} timed target(s) missed:\n${listed(missed)}\nbench: measuring ${sections.join(', ')} once more (--confirm)`,
  );
  const again = { ...options, sections, out: confirmOut(options.out) };
  const missedAgain = missedIn(await measure(again), again);
  if (missedAgain.length > 0) {
    console.error(`\nbench: ${missedAgain.length} target(s) unmet again:\n${listed(missedAgain)}`);
    return 1;
  }
  console.error(`\nbench: met when measured again (${again.out}); the first measure's misses are in ${options.out}`);
  return 0;
}

parseAndRun(
  benchProgram().act<BenchValues>((_args, values) => {
    try {
      return main(benchOptions(values));
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      console.error(`error: ${err.message}`);
      return EXIT_USAGE;
    }
  }),
).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

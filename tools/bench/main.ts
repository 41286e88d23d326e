/**
 * `npm run bench`: one benchmark report of the sale lifecycle (latency against the floor, requests per sale, history
 * size, rate-budget use, throughput, fairness, priority), written to bench/report.json and printed as tables.
 * See docs/benchmarks.md. Options: --quick, --assert[=<target key,...>], --only <section,...>, --out <path>.
 */
import { parseAndRun } from '../../src/cli/command.js';
import { benchOptions, benchProgram, type BenchOptions, type BenchValues } from './options.js';
import { formatReport, unmet, writeReport } from './report.js';
import { runBench } from './run.js';

async function main(options: BenchOptions): Promise<number> {
  // A section ends by stopping its workers, and measures nothing of their drain: as little grace as a worker takes,
  // for the workers loaded here and those spawned (they inherit the environment).
  process.env.SHUTDOWN_GRACE_TIME ??= '1s';
  const report = await runBench(options);
  writeReport(options.out, report);
  console.log(formatReport(report));
  console.log(`\nreport written to ${options.out}`);
  const failed = unmet(report).filter((t) => options.assertKeys === undefined || options.assertKeys.includes(t.key));
  if (options.assert && failed.length > 0) {
    console.error(
      `\nbench: ${failed.length} target(s) unmet:\n${failed.map((t) => `  ${t.key} = ${String(t.value === undefined ? t.value : Number(t.value.toFixed(3)))} (target ${t.target})`).join('\n')}`,
    );
    return 1;
  }
  return 0;
}

parseAndRun(benchProgram().act<BenchValues>((_args, values) => main(benchOptions(values)))).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

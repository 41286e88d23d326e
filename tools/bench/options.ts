/** The bench's command line: `--quick`, `--assert`, `--only <section,...>`, `--out <path>`; and the sample sizes of each mode. */
import { SECTIONS, TARGET_KEYS, type Section } from './report.js';

export interface BenchOptions {
  quick: boolean;
  assert: boolean;
  /** With `--assert=<key,...>`: only these targets fail the run; the others are still measured and reported. */
  assertKeys: string[] | undefined;
  sections: Section[];
  out: string;
}

export const DEFAULT_OUT = 'bench/report.json';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `usage: npm run bench -- [--quick] [--assert[=<target key,...>]] [--only ${SECTIONS.join(',')}] [--out bench/report.json]`;

export function parseArgs(argv: readonly string[]): BenchOptions {
  const options: BenchOptions = { quick: false, assert: false, assertKeys: undefined, sections: [...SECTIONS], out: DEFAULT_OUT };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${name} needs a value\n${USAGE}`);
      return v;
    };
    if (name === '--quick') options.quick = true;
    else if (name === '--assert') {
      options.assert = true;
      if (inline !== undefined) {
        const keys = inline.split(',').map((k) => k.trim()).filter(Boolean);
        const unknown = keys.filter((k) => !TARGET_KEYS.includes(k));
        if (keys.length === 0 || unknown.length > 0) throw new UsageError(`--assert: unknown target ${unknown.join(', ') || '(none)'}; targets: ${TARGET_KEYS.join(', ')}`);
        options.assertKeys = keys;
      }
    }
    else if (name === '--out') options.out = value();
    else if (name === '--only') {
      const wanted = value().split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = wanted.filter((s) => !(SECTIONS as readonly string[]).includes(s));
      if (unknown.length > 0 || wanted.length === 0) throw new UsageError(`--only: unknown section ${unknown.join(', ') || '(none)'}; sections: ${SECTIONS.join(', ')}`);
      options.sections = SECTIONS.filter((s) => wanted.includes(s));
    } else throw new UsageError(`unknown argument ${arg}\n${USAGE}`);
  }
  return options;
}

/** Sample sizes: the full run (≤ ~10 min on 2 cores) and the quick one for CI (each phase ≤ ~40 s). */
export function sampleSizes(quick: boolean) {
  return quick
    ? { latencySales: 20, warmUp: 2, callsPerPath: 1, budgetWindows: 3, throughputSales: 100, throughputTwoProcesses: true, flood: 100, fairnessSales: 5, tills: 3, stockSales: 8, registrations: 8, purchasesSyncs: 4 }
    : { latencySales: 60, warmUp: 3, callsPerPath: 3, budgetWindows: 6, throughputSales: 200, throughputTwoProcesses: true, flood: 300, fairnessSales: 10, tills: 5, stockSales: 20, registrations: 20, purchasesSyncs: 10 };
}

export type SampleSizes = ReturnType<typeof sampleSizes>;

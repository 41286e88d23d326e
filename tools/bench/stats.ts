/** Order statistics of the bench's samples: nearest-rank percentiles, so every figure is a measured value. */
import { seededRandom } from '../../sandbox/shared/faults.js';

/** The nearest-rank p-th percentile (0 < p ≤ 100) of `values`; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** Rounded for the report: a tenth of a millisecond is below what the bench can resolve. */
export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * How far the ratio of two samples' medians could fall from one run to the next: a percentile bootstrap (each sample
 * drawn again with replacement, `resamples` times), seeded so the same samples give the same interval. `level` 0.9:
 * the 5th and the 95th percentile of the resampled ratios.
 */
export function medianRatioInterval(
  numerator: readonly number[],
  denominator: readonly number[],
  { level = 0.9, resamples = 2_000, seed = 1 }: { level?: number; resamples?: number; seed?: number } = {},
): { low: number; high: number; level: number } {
  if (!(level > 0 && level < 1)) throw new RangeError(`level must be in (0, 1), got ${level}`);
  if (numerator.length === 0 || denominator.length === 0) return { low: Number.NaN, high: Number.NaN, level };
  const random = seededRandom(seed);
  const redrawn = (values: readonly number[]) => values.map(() => values[Math.floor(random() * values.length)]!);
  const ratios = Array.from({ length: resamples }, () => median(redrawn(numerator)) / median(redrawn(denominator)));
  const tail = ((1 - level) / 2) * 100;
  return { low: percentile(ratios, tail), high: percentile(ratios, 100 - tail), level };
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  min: number;
  max: number;
}

export function summarise(values: readonly number[]): Summary {
  return {
    n: values.length,
    p50: round(percentile(values, 50)),
    p90: round(percentile(values, 90)),
    min: round(values.length ? Math.min(...values) : Number.NaN),
    max: round(values.length ? Math.max(...values) : Number.NaN),
  };
}

/** Runs `task` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** The median of each key over records that may lack some keys (a key's median over the records that have it). */
export function medianByKey(records: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
  return Object.fromEntries(
    keys.map((k) => [
      k,
      round(
        percentile(
          records.flatMap((r) => (k in r ? [r[k]!] : [])),
          50,
        ),
      ),
    ]),
  );
}

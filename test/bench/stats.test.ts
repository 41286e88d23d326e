import { describe, expect, it } from 'vitest';
import {
  mapLimit,
  median,
  medianByKey,
  medianRatioInterval,
  percentile,
  round,
  summarise,
} from '../../tools/bench/stats.js';

describe('percentile (nearest rank)', () => {
  it('picks a measured value, not an interpolation', () => {
    const values = [5, 1, 4, 2, 3];
    expect(percentile(values, 50)).toBe(3);
    expect(percentile(values, 90)).toBe(5);
    expect(percentile(values, 100)).toBe(5);
    expect(percentile(values, 1)).toBe(1);
  });

  it('takes the lower middle of an even sample as the median', () => {
    expect(median([10, 40, 20, 30])).toBe(20);
  });

  it('reads p90 of 50 samples as the 45th smallest', () => {
    const values = Array.from({ length: 50 }, (_, i) => 50 - i);
    expect(percentile(values, 90)).toBe(45);
  });

  it('is NaN for no samples and refuses a percentile out of range', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it("does not reorder the caller's array", () => {
    const values = [3, 1, 2];
    percentile(values, 50);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe('summaries', () => {
  it('gives n, p50, p90, min and max rounded to a tenth', () => {
    expect(summarise([1.04, 2.06, 3, 4, 100])).toEqual({ n: 5, p50: 3, p90: 100, min: 1, max: 100 });
    expect(round(1.25, 1)).toBe(1.3);
    expect(round(Number.NaN)).toBeNaN();
  });

  it("takes each key's median over the records that have it", () => {
    expect(medianByKey([{ a: 1, b: 10 }, { a: 3 }, { a: 2, b: 30 }])).toEqual({ a: 2, b: 10 });
  });
});

describe('mapLimit', () => {
  it('keeps input order and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const out = await mapLimit([30, 10, 20, 5, 15], 2, async (ms, i) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return i * 10;
    });
    expect(out).toEqual([0, 10, 20, 30, 40]);
    expect(most).toBe(2);
  });
});

describe('medianRatioInterval (bootstrap)', () => {
  /** Spread samples around `centre`: the same shape at every size. */
  const around = (centre: number, n: number) => Array.from({ length: n }, (_, i) => centre * (0.7 + (0.6 * i) / n));

  it('is a point for samples without spread, and the same interval for the same samples', () => {
    expect(medianRatioInterval([150, 150, 150], [100, 100])).toEqual({ low: 1.5, high: 1.5, level: 0.9 });
    const numerator = around(120, 21);
    const denominator = around(100, 20);
    expect(medianRatioInterval(numerator, denominator)).toEqual(medianRatioInterval(numerator, denominator));
  });

  it('holds the ratio of the medians, and narrows as the samples grow', () => {
    const small = medianRatioInterval(around(120, 21), around(100, 20));
    const large = medianRatioInterval(around(120, 1_000), around(100, 40), { resamples: 500 });
    const largest = medianRatioInterval(around(120, 1_000), around(100, 1_000), { resamples: 500 });
    for (const interval of [small, large, largest]) {
      expect(interval.low).toBeLessThanOrEqual(1.2);
      expect(interval.high).toBeGreaterThanOrEqual(1.2);
    }
    expect(small.high - small.low).toBeGreaterThan(0.2);
    expect(large.high - large.low).toBeLessThan(small.high - small.low);
    expect(largest.high - largest.low).toBeLessThan(0.08);
  });

  it('tells samples apart that do not overlap, and is NaN without samples', () => {
    expect(medianRatioInterval(around(200, 20), around(100, 20)).low).toBeGreaterThan(1.5);
    const none = medianRatioInterval([], [1]);
    expect(none.low).toBeNaN();
    expect(none.high).toBeNaN();
    expect(() => medianRatioInterval([1], [1], { level: 1 })).toThrow(RangeError);
  });
});

/** The stock section's arithmetic held to its definitions (docs/benchmarks.md, "Stock"). */
import { describe, expect, it } from 'vitest';
import {
  carryLines,
  countWithin,
  exactlyOnce,
  lagSummary,
  perScaledMinute,
  runMs,
  salesNeedingOperator,
  stockScale,
  steadyWindow,
  type RecordedMovement,
  type SoldLine,
} from '../../tools/bench/stock-math.js';

const line = (saleWorkflowId: string, itemId: string, quantity: number, signedAt: number): SoldLine => ({
  saleWorkflowId,
  itemId,
  action: 'DEDUCT',
  quantity,
  signedAt,
});
const moved = (itemId: string, quantity: number, at: number, referenceId: string | null = null): RecordedMovement => ({
  itemId,
  action: 'DEDUCT',
  quantity,
  referenceId,
  at,
});

describe('the time scale', () => {
  it("shortens the window, raises the worker's budget and shortens the max delay by the same k", () => {
    expect(stockScale(12, { requestsPerMinute: 120, maxDelaySeconds: 120 })).toEqual({
      k: 12,
      windowMs: 5_000,
      requestsPerWindow: 120,
      workerRequestsPerMinute: 1_440,
      maxDelayMs: 10_000,
    });
    expect(stockScale(1, { requestsPerMinute: 120, maxDelaySeconds: 120 })).toMatchObject({
      windowMs: 60_000,
      workerRequestsPerMinute: 120,
      maxDelayMs: 120_000,
    });
  });

  it("refuses a k that leaves fractions of a millisecond or a max delay below the worker's second", () => {
    expect(() => stockScale(7, { requestsPerMinute: 120, maxDelaySeconds: 120 })).toThrow(RangeError);
    expect(() => stockScale(240, { requestsPerMinute: 120, maxDelaySeconds: 120 })).toThrow(/below the worker's 1 s/);
  });

  it('turns scaled minutes into real milliseconds and counts back per scaled minute', () => {
    expect(runMs(10, 12)).toBe(50_000);
    // 1,000 sales in 50 real seconds of a 12× run: 10 scaled minutes, 100 a minute.
    expect(perScaledMinute(1_000, 0, 50_000, 12)).toBe(100);
    expect(perScaledMinute(5, 10, 10, 12)).toBeNaN();
  });

  it('counts within a half-open window', () => {
    expect(countWithin([0, 5, 10, 15], 5, 15)).toBe(2);
  });

  it('starts the steady part a warm-up after the first signing and ends it when the tills stop', () => {
    expect(steadyWindow(1_000, 70_000, 12_500)).toEqual({ from: 13_500, to: 70_000 });
  });
});

describe('which movement carried each line', () => {
  it("is the line's own movement when each line went alone (per sale)", () => {
    const lines = [line('s1', 'a', 2, 100), line('s2', 'a', 1, 200)];
    const carried = carryLines(lines, [moved('a', 2, 150, 'r1'), moved('a', 1, 260, 'r2')]);
    expect(carried.map((c) => c.movement?.referenceId)).toEqual(['r1', 'r2']);
  });

  it('is one movement for every line it coalesced, matched by running totals', () => {
    const lines = [line('s1', 'a', 1, 100), line('s2', 'a', 2, 110), line('s3', 'a', 3, 120), line('s4', 'a', 1, 500)];
    const carried = carryLines(lines, [moved('a', 6, 300, 'm1'), moved('a', 1, 600, 'm2')]);
    expect(carried.map((c) => [c.line.saleWorkflowId, c.movement?.referenceId])).toEqual([
      ['s1', 'm1'],
      ['s2', 'm1'],
      ['s3', 'm1'],
      ['s4', 'm2'],
    ]);
  });

  it('never names a movement recorded before the sale was signed, and leaves probes (quantity 0) out', () => {
    const lines = [line('s1', 'a', 1, 100), line('s2', 'a', 1, 400)];
    // The probe at 450 moves nothing; m1 at 300 is before s2 was signed.
    const carried = carryLines(lines, [
      moved('a', 2, 300, 'm1'),
      moved('a', 0, 450, 'probe'),
      moved('a', 1, 500, 'm2'),
    ]);
    expect(carried.map((c) => c.movement?.referenceId)).toEqual(['m1', 'm2']);
  });

  it('keeps items and actions apart and sorts by time whatever the order given', () => {
    const lines = [
      line('s2', 'b', 1, 200),
      line('s1', 'a', 1, 100),
      { ...line('s3', 'a', 1, 150), action: 'ADD' as const },
    ];
    const carried = carryLines(lines, [
      moved('b', 1, 250, 'mb'),
      { ...moved('a', 1, 170, 'add'), action: 'ADD' },
      moved('a', 1, 160, 'ma'),
    ]);
    const by = Object.fromEntries(carried.map((c) => [c.line.saleWorkflowId, c.movement?.referenceId]));
    expect(by).toEqual({ s1: 'ma', s2: 'mb', s3: 'add' });
  });

  it('leaves a line uncarried when no movement covers it, which the lag counts as never reported', () => {
    const lines = [line('s1', 'a', 2, 100), line('s2', 'a', 2, 110)];
    const carried = carryLines(lines, [moved('a', 3, 200)]);
    expect(carried.map((c) => c.movement !== undefined)).toEqual([true, false]);
    const lag = lagSummary(carried, 12);
    expect(lag.uncarried).toBe(1);
    expect(lag.p99Seconds).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('the lag', () => {
  it('is signed → recorded, scaled back to real seconds, nearest-rank p99', () => {
    // 100 lines each 1..100 ms late in a 12× run: 0.012 .. 1.2 scaled-back seconds.
    const lines = Array.from({ length: 100 }, (_, i) => line(`s${i}`, `i${i}`, 1, 1_000));
    const movements = Array.from({ length: 100 }, (_, i) => moved(`i${i}`, 1, 1_000 + i + 1));
    const lag = lagSummary(carryLines(lines, movements), 12);
    expect(lag).toMatchObject({ lines: 100, uncarried: 0 });
    expect(lag.p99Seconds).toBeCloseTo(99 * 0.012, 9);
    expect(lag.p50Seconds).toBeCloseTo(50 * 0.012, 9);
    expect(lag.maxSeconds).toBeCloseTo(1.2, 9);
  });
});

describe("exactly once, from the sandbox's records", () => {
  it("holds when every item's recorded quantity is its lines' and no referenceId is recorded twice", () => {
    const lines = [line('s1', 'a', 2, 0), line('s2', 'a', 1, 0), line('s2', 'b', 4, 0)];
    const e = exactlyOnce(lines, [
      moved('a', 3, 1, 'm1'),
      moved('a', 0, 2, 'm1:probe'),
      moved('b', 4, 3, 's2:1:DEDUCT'),
    ]);
    expect(e).toEqual({ mismatched: [], duplicateReferenceIds: [] });
  });

  it('names a movement recorded twice and an item off by what was doubled or lost', () => {
    const lines = [line('s1', 'a', 2, 0), line('s2', 'b', 1, 0)];
    const e = exactlyOnce(lines, [moved('a', 2, 1, 'm1'), moved('a', 2, 2, 'm1')]);
    expect(e.duplicateReferenceIds).toEqual(['m1']);
    expect(e.mismatched).toEqual([
      { itemId: 'a', action: 'DEDUCT', sold: 2, recorded: 4 },
      { itemId: 'b', action: 'DEDUCT', sold: 1, recorded: 0 },
    ]);
  });
});

describe('sales that needed an operator', () => {
  const movement = (
    status: 'recorded' | 'needs_operator',
    settledBy: 'evidence' | 'operator' | undefined,
    sales: string[],
  ) => ({
    status,
    ...(settledBy ? { settledBy } : {}),
    lines: sales.map((s, i) => ({ lineId: `${s}:${i}`, saleWorkflowId: s, quantity: 1 })),
  });

  it('are those with a line in a movement waiting for one or settled by one, each counted once', () => {
    const needing = salesNeedingOperator([
      movement('recorded', undefined, ['s1']),
      movement('recorded', 'evidence', ['s2']),
      movement('needs_operator', undefined, ['s3', 's4', 's3']),
      movement('recorded', 'operator', ['s4', 's5']),
    ]);
    expect([...needing].sort()).toEqual(['s3', 's4', 's5']);
  });
});

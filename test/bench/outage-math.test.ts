import { describe, expect, it } from 'vitest';
import {
  busiestShareOfLimit,
  metByOutage,
  mostInWindowWithin,
  orderInversionShare,
  recovery,
  repeats,
  startOffsets,
} from '../../tools/bench/outage-math.js';

const MINUTE = 60_000;

describe('the busiest minute while an outage lasted', () => {
  it('slides the window rather than using fixed minutes', () => {
    // 4 in the last 10 s of one minute and 4 in the first 10 s of the next: 8 in one sliding minute.
    const times = [50_000, 52_000, 54_000, 56_000, 61_000, 63_000, 65_000, 67_000];
    expect(mostInWindowWithin(times, 0, 200_000, MINUTE)).toBe(8);
  });

  it('counts only the requests inside the outage', () => {
    const before = [0, 1, 2, 3];
    const during = [10_000, 20_000, 30_000];
    const after = [70_000, 70_001, 70_002, 70_003, 70_004];
    expect(mostInWindowWithin([...before, ...during, ...after], 5_000, 70_000, MINUTE)).toBe(3);
  });

  it('treats the window as half-open: a request a whole window later starts the next one', () => {
    expect(mostInWindowWithin([0, MINUTE - 1, MINUTE], 0, 10 * MINUTE, MINUTE)).toBe(2);
  });

  it('is 0 with no request', () => {
    expect(mostInWindowWithin([], 0, MINUTE, MINUTE)).toBe(0);
  });

  it('charges a service outage every request, an authority outage only the submissions it refuses', () => {
    const stock = { method: 'POST', route: '/v1/stock/adjustments' };
    const read = { method: 'GET', route: '/v1/sales/:id' };
    const sale = { method: 'POST', route: '/v1/sales' };
    const retry = { method: 'POST', route: '/v1/sales/:id/retry' };
    const creditNote = { method: 'POST', route: '/v1/credit-notes' };
    expect([stock, read, sale, retry, creditNote].map((r) => metByOutage('service', r))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([stock, read, sale, retry, creditNote].map((r) => metByOutage('authority', r))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('gives the busiest window over the limit for the whole run', () => {
    const times = Array.from({ length: 150 }, (_, i) => i * 100);
    expect(busiestShareOfLimit(times, MINUTE, 120)).toBe(1.25);
  });
});

describe('order inversions among waiting sales', () => {
  it('is 0 when the sales are signed in the order they were started', () => {
    expect(
      orderInversionShare([
        { startedAt: 1, signedAt: 10 },
        { startedAt: 2, signedAt: 11 },
        { startedAt: 3, signedAt: 12 },
      ]),
    ).toBe(0);
  });

  it('is 1 when they are signed in exactly the opposite order', () => {
    expect(
      orderInversionShare([
        { startedAt: 1, signedAt: 12 },
        { startedAt: 2, signedAt: 11 },
        { startedAt: 3, signedAt: 10 },
      ]),
    ).toBe(1);
  });

  it('counts each inverted pair once over all pairs, whatever order the list is in', () => {
    // Pairs: (1,2) inverted, (1,3) in order, (2,3) in order: 1 of 3.
    const sales = [
      { startedAt: 3, signedAt: 30 },
      { startedAt: 1, signedAt: 20 },
      { startedAt: 2, signedAt: 10 },
    ];
    expect(orderInversionShare(sales)).toBeCloseTo(1 / 3, 10);
  });

  it('does not count sales signed at the same instant, nor pairs started at the same instant', () => {
    expect(
      orderInversionShare([
        { startedAt: 1, signedAt: 10 },
        { startedAt: 2, signedAt: 10 },
      ]),
    ).toBe(0);
    expect(
      orderInversionShare([
        { startedAt: 1, signedAt: 20 },
        { startedAt: 1, signedAt: 10 },
      ]),
    ).toBe(0);
  });

  it('counts an older sale never signed as signed after every younger one', () => {
    expect(
      orderInversionShare([
        { startedAt: 1, signedAt: Number.NaN },
        { startedAt: 2, signedAt: 10 },
      ]),
    ).toBe(1);
  });

  it('is 0 with fewer than two sales', () => {
    expect(orderInversionShare([])).toBe(0);
    expect(orderInversionShare([{ startedAt: 1, signedAt: 2 }])).toBe(0);
  });
});

describe('recovery overhead', () => {
  it('takes the budget’s own time for the backlog from the time to the last signing', () => {
    // 30 sales at 120 a minute need 15 s; the last was signed 40 s after the end: 25 s lost to the waiting.
    const end = 1_000_000;
    const signed = Array.from({ length: 30 }, (_, i) => end + 10_000 + i * 1_000);
    signed[29] = end + 40_000;
    expect(recovery(signed, end, 120)).toEqual({ lastSignedAfterSeconds: 40, budgetSeconds: 15, overheadSeconds: 25 });
  });

  it('can be below 0 when the backlog drained faster than the budget alone would say', () => {
    expect(recovery([5_000, 6_000], 0, 60).overheadSeconds).toBe(4);
    expect(recovery([1_000], 0, 6).overheadSeconds).toBe(-9);
  });

  it('is NaN (never met) when a sale was never signed', () => {
    const r = recovery([1_000, Number.NaN], 0, 120);
    expect(r.overheadSeconds).toBeNaN();
    expect(r.budgetSeconds).toBe(1);
  });

  it('is 0 without a backlog', () => {
    expect(recovery([], 0, 120)).toEqual({ lastSignedAfterSeconds: 0, budgetSeconds: 0, overheadSeconds: 0 });
  });
});

describe('duplicates and start times', () => {
  it('counts every entry beyond a key’s first', () => {
    expect(repeats(['a', 'b', 'a', 'c', 'a', 'b'])).toEqual({ extra: 3, repeated: ['a', 'b'] });
    expect(repeats(['a', 'b'])).toEqual({ extra: 0, repeated: [] });
  });

  it('spreads the starts over the first share of the outage, distinct and in order', () => {
    const offsets = startOffsets(4, 60_000, 0.75);
    expect(offsets).toEqual([0, 11_250, 22_500, 33_750]);
    expect(Math.max(...startOffsets(30, 60_000, 0.75))).toBeLessThan(45_000);
  });
});

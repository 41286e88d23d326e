import { describe, expect, it } from 'vitest';
import type { LoggedRequest } from '../../tools/bench/budget-math.js';
import {
  backlogUse,
  busiestApplication,
  busiestWindow,
  isolationRatio,
  mostInAnyWindow,
  mostInLimiterWindow,
  rateLimitedShare,
} from '../../tools/bench/tenancy-math.js';

const W = 60_000;
/** `n` requests every `gap` ms from `from`. */
const paced = (from: number, gap: number, n: number, status = 201): LoggedRequest[] =>
  Array.from({ length: n }, (_, i) => ({ at: from + i * gap, status }));

describe('the most requests in any window (sliding)', () => {
  it('counts a half-open window: a request exactly one window after another is in the next one', () => {
    expect(mostInAnyWindow([0, 59_999], W)).toBe(2);
    expect(mostInAnyWindow([0, 60_000], W)).toBe(1);
  });

  it("finds the burst wherever it falls, not only where the service's windows open", () => {
    // 120 a minute evenly, then 10 at once at 90 s: any 60 s holding the burst holds 10 more than the pacing.
    const times = [...paced(0, 500, 240).map((r) => r.at), ...Array.from({ length: 10 }, () => 90_000)];
    expect(mostInAnyWindow(times, W)).toBe(130);
  });

  it('is the pace itself for requests evenly paced at the limit', () => {
    expect(
      mostInAnyWindow(
        paced(1_000, 500, 300).map((r) => r.at),
        W,
      ),
    ).toBe(120);
  });

  it('says where the busiest window starts', () => {
    expect(busiestWindow([0, 70_000, 71_000, 72_000, 200_000], W)).toEqual({ count: 3, start: 70_000 });
    expect(busiestWindow([], W).count).toBe(0);
  });

  it('does not depend on the order of the log and is 0 for none', () => {
    expect(mostInAnyWindow([50_000, 0, 10_000], W)).toBe(3);
    expect(mostInAnyWindow([], W)).toBe(0);
  });
});

describe("the most requests in the service's own windows", () => {
  it('counts 429s in the window they were refused in, though they neither open nor fill one', () => {
    const log = [...paced(0, 100, 120), ...paced(12_000, 100, 5, 429), ...paced(60_000, 100, 10)];
    expect(mostInLimiterWindow(log, W)).toBe(125);
  });

  it('sees two full fixed windows back to back as at the limit, where a sliding window sees up to twice it', () => {
    // 120 in the last second of one window, 120 in the first second of the next: the service refuses nothing.
    const log = [{ at: 0, status: 201 }, ...paced(59_000, 5, 119), ...paced(60_000, 5, 120)];
    expect(mostInLimiterWindow(log, W)).toBe(120);
    expect(
      mostInAnyWindow(
        log.map((r) => r.at),
        W,
      ),
    ).toBe(239);
  });
});

describe('the busiest application', () => {
  it('is the one nearest its own limit, each judged against its own', () => {
    const busiest = busiestApplication(
      [
        { application: 'big', limitPerWindow: 600, requests: paced(0, 100, 550) },
        { application: 'small', limitPerWindow: 60, requests: paced(0, 1_000, 50) },
        { application: 'idle', limitPerWindow: 120, requests: [] },
      ],
      W,
    );
    expect(busiest).toMatchObject({ application: 'big', sent: 550, limitPerWindow: 600 });
    expect(busiest.ratio).toBeCloseTo(550 / 600);
  });

  it('says what filled the busiest window, by route, with the status of answers that were not 2xx', () => {
    const requests = [
      ...paced(0, 500, 3).map((r) => ({ ...r, route: 'GET /v1/items', status: 200 })),
      ...paced(100, 500, 118).map((r) => ({ ...r, route: 'POST /v1/sales' })),
      { at: 30_000, status: 429, route: 'POST /v1/sales' },
      { at: 90_000, status: 201, route: 'POST /v1/sales' },
    ];
    const busiest = busiestApplication([{ application: 'a', limitPerWindow: 120, requests }], W);
    expect(busiest.sent).toBe(122);
    expect(busiest.routes).toEqual({ 'GET /v1/items': 3, 'POST /v1/sales': 118, 'POST /v1/sales 429': 1 });
  });

  it('goes above 1 when an application sent more than its limit in some window, and reports the worst fixed window too', () => {
    const busiest = busiestApplication(
      [{ application: 'a', limitPerWindow: 120, requests: [...paced(0, 400, 120), ...paced(48_000, 100, 3, 429)] }],
      W,
    );
    expect(busiest.sent).toBe(123);
    expect(busiest.ratio).toBeCloseTo(123 / 120);
    expect(busiest.limiterWindowRatio).toBeCloseTo(123 / 120);
  });
});

describe('use of the budget during a backlog', () => {
  it("is 1 for requests paced exactly at the limit from the backlog's start to its end", () => {
    const use = backlogUse(paced(10_000, 500, 240), { from: 10_000, to: 130_000, limitPerWindow: 120, windowMs: W });
    expect(use).toEqual({ productive: 240, allowed: 240, utilisation: 1, seconds: 120 });
  });

  it('counts the wait before the first request and idle gaps as unused, and 429s as not productive', () => {
    const log = [...paced(12_000, 500, 100), ...paced(70_000, 500, 100), ...paced(70_100, 500, 20, 429)];
    const use = backlogUse(log, { from: 10_000, to: 130_000, limitPerWindow: 120, windowMs: W });
    expect(use.productive).toBe(200);
    expect(use.allowed).toBe(240);
    expect(use.utilisation).toBeCloseTo(200 / 240);
  });

  it('leaves out requests outside the backlog, and is NaN for a backlog of no time', () => {
    const use = backlogUse(
      [
        { at: 5_000, status: 201 },
        { at: 20_000, status: 201 },
        { at: 40_000, status: 201 },
      ],
      { from: 10_000, to: 40_000, limitPerWindow: 6, windowMs: W },
    );
    expect(use.productive).toBe(1);
    expect(use.allowed).toBe(3);
    expect(backlogUse([], { from: 5, to: 5, limitPerWindow: 120, windowMs: W }).utilisation).toBeNaN();
  });

  it('scales a short window: 10 per 5 s is 120 a minute', () => {
    const use = backlogUse(paced(0, 500, 120), { from: 0, to: 60_000, limitPerWindow: 10, windowMs: 5_000 });
    expect(use.allowed).toBe(120);
    expect(use.utilisation).toBe(1);
  });
});

describe('429 share and isolation', () => {
  it('counts 429s over every request of every application', () => {
    expect(
      rateLimitedShare([
        { application: 'a', limitPerWindow: 1, requests: [...paced(0, 1, 98), ...paced(0, 1, 1, 429)] },
        { application: 'b', limitPerWindow: 1, requests: paced(0, 1, 1, 429) },
      ]),
    ).toEqual({ requests: 100, rateLimited: 2, share: 0.02 });
    expect(rateLimitedShare([]).share).toBe(0);
  });

  it('divides the flooded median by the median alone (nearest rank)', () => {
    expect(isolationRatio([100, 300, 200], [240, 9_000, 100])).toBe(1.2);
    expect(isolationRatio([], [1])).toBeNaN();
  });
});

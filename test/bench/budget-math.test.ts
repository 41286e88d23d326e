import { describe, expect, it } from 'vitest';
import {
  backlogReadyAt,
  perMinute,
  rebuildWindows,
  utilisation,
  type LoggedRequest,
} from '../../tools/bench/budget-math.js';

const W = 1_000;
/** `n` answers spread evenly over [from, from + span). */
const spread = (from: number, span: number, n: number, status = 201): LoggedRequest[] =>
  Array.from({ length: n }, (_, i) => ({ at: from + (i * span) / n, status }));
/** The rest of a backlog, long after the windows measured: a window counts only while this much is still to come. */
const rest = spread(100_000, 1_000, 10);

describe('rate windows rebuilt from the log', () => {
  it('opens a window with the first counted request and closes it windowMs later', () => {
    const windows = rebuildWindows(
      [
        { at: 100, status: 201 },
        { at: 1_099, status: 201 },
        { at: 1_100, status: 200 },
        { at: 3_000, status: 201 },
      ],
      W,
    );
    expect(windows).toEqual([
      { start: 100, end: 1_100, counted: 2 },
      { start: 1_100, end: 2_100, counted: 1 },
      { start: 3_000, end: 4_000, counted: 1 },
    ]);
  });

  it('does not let a 429 open or fill a window', () => {
    const windows = rebuildWindows(
      [
        { at: 0, status: 429 },
        { at: 500, status: 201 },
        { at: 600, status: 429 },
      ],
      W,
    );
    expect(windows).toEqual([{ start: 500, end: 1_500, counted: 1 }]);
  });
});

describe('utilisation', () => {
  it('is 1 when every complete window is full and back to back', () => {
    const log = [
      ...spread(0, 1_000, 10),
      ...spread(1_000, 1_000, 10),
      ...spread(2_000, 1_000, 10),
      ...spread(3_000, 500, 4),
      ...rest,
    ];
    const u = utilisation(log, { windowMs: W, limit: 10, backlogDrainedAt: 3_400 });
    expect(u.windows).toBe(3);
    expect(u.productive).toBe(30);
    expect(u.allowed).toBe(30);
    expect(u.utilisation).toBe(1);
    expect(u.rateLimitedShare).toBe(0);
  });

  it('counts a window not yet closed when the backlog drained as outside the measure', () => {
    const log = [...spread(0, 1_000, 10), ...spread(1_000, 300, 3), ...rest];
    const u = utilisation(log, { windowMs: W, limit: 10, backlogDrainedAt: 1_200 });
    expect(u.windows).toBe(1);
    expect(u.productive).toBe(10);
  });

  it('charges idle gaps between windows as unused budget', () => {
    // Two full windows with 500 ms of nothing between them: 20 of the 25 the limit allowed over 2.5 s.
    const log = [...spread(0, 1_000, 10), ...spread(1_500, 1_000, 10), { at: 2_600, status: 201 }, ...rest];
    const u = utilisation(log, { windowMs: W, limit: 10, backlogDrainedAt: 2_600 });
    expect(u.windows).toBe(2);
    expect(u.allowed).toBe(25);
    expect(u.utilisation).toBeCloseTo(0.8);
    expect(u.perWindow).toEqual([
      { counted: 10, gapBeforeMs: 0 },
      { counted: 10, gapBeforeMs: 500 },
    ]);
  });

  it('reads a worker at 90 % of the limit as 0.9, and counts its 429s over the whole run', () => {
    const log = [
      ...spread(0, 1_000, 9),
      ...spread(1_000, 1_000, 9),
      ...spread(2_000, 1_000, 9),
      { at: 2_500, status: 429 },
      ...spread(3_000, 1_000, 9),
      ...rest,
    ];
    const u = utilisation(log, { windowMs: W, limit: 10, backlogDrainedAt: 3_900 });
    expect(u.windows).toBe(3);
    expect(u.utilisation).toBeCloseTo(0.9);
    expect(u.rateLimited).toBe(1);
    expect(u.rateLimitedShare).toBeCloseTo(1 / 47);
  });

  it('leaves out the drain at the end: windows after which less than a window of the backlog was left', () => {
    // Full, then the last sales' stragglers: 9, then 6 and 3 requests. Only the first window had a backlog behind it.
    const log = [
      ...spread(0, 1_000, 10),
      ...spread(1_000, 1_000, 9),
      ...spread(2_000, 1_000, 6),
      ...spread(3_000, 1_000, 3),
    ];
    const u = utilisation(log, { windowMs: W, limit: 10, backlogDrainedAt: 4_000 });
    expect(u.windows).toBe(1);
    expect(u.utilisation).toBe(1);
  });

  it('places the windows where requests before the backlog put them, and counts only what the backlog sent', () => {
    // Two start-up reads open a window at 0; the backlog starts at 600, inside it. The limiter's next window opens at
    // 1,000, so the backlog's 8 + 10 + 10 requests below fill the limit; windows rebuilt from 600 would count 14 in the first.
    const log = [
      ...spread(0, 100, 2),
      ...spread(600, 400, 8),
      ...spread(1_000, 1_000, 10),
      ...spread(2_000, 1_000, 10),
      ...spread(3_000, 500, 5),
      ...rest,
    ];
    const u = utilisation(log, { windowMs: W, limit: 10, backlogStartedAt: 600, backlogDrainedAt: 3_500 });
    expect(u.windows).toBe(2);
    expect(u.productive).toBe(20);
    expect(u.utilisation).toBe(1);
    expect(u.requests).toBe(log.length - 2);
    const unaware = utilisation(log.slice(2), { windowMs: W, limit: 10, backlogDrainedAt: 3_500 });
    expect(unaware.utilisation).toBeGreaterThan(1);
  });

  it('is NaN, never a flattering number, without a complete window', () => {
    expect(utilisation(spread(0, 500, 5), { windowMs: W, limit: 10, backlogDrainedAt: 400 }).utilisation).toBeNaN();
  });

  it('starts counting once a window of activities waits in the queue', () => {
    // Scheduled one every 100 ms, each started 250 ms later: never more than 3 waiting.
    const trickle = Array.from({ length: 20 }, (_, i) => ({ scheduledAt: i * 100, startedAt: i * 100 + 250 }));
    expect(backlogReadyAt(trickle, 3)).toBe(200);
    expect(backlogReadyAt(trickle, 4)).toBeUndefined();
    // Then 10 scheduled at once at 5,000, started one every 100 ms.
    const burst = Array.from({ length: 10 }, (_, i) => ({ scheduledAt: 5_000, startedAt: 5_000 + i * 100 }));
    expect(backlogReadyAt([...trickle, ...burst], 5)).toBe(5_000);
    expect(backlogReadyAt([], 1)).toBeUndefined();
  });

  it('gives the per-minute figure of a short window', () => {
    expect(perMinute(50, 5_000)).toBe(600);
    expect(perMinute(120, 60_000)).toBe(120);
  });
});

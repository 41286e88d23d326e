/**
 * The chunk's pace on its own, its timer a plain one under fake time: workflow code, but its arithmetic needs no
 * server. The end-to-end import (import.test.ts) runs it in a real chunk workflow.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CataloguePace } from '../../src/contracts/catalogue-import.js';

vi.mock('@temporalio/workflow', () => ({
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
}));
const { RowPace } = await import('../../workflows/catalogue-pace.js');

/** A budget of 1,200 requests a minute: slots of 50 ms (judged at 70), at most 10 rows (of 2 requests) a second. */
const BUDGET = 1_200;
/** A creation's wait in the queue where the budget holds slots (a busy worker's pickup). */
const PICKUP_MS = 500;

beforeEach(() => vi.useFakeTimers({ now: 0 }));
afterEach(() => vi.useRealTimers());

/** `rows` lanes asking for turns; each row answered `queuedMs` after it was let go (undefined: failed). */
function lanes(pace: InstanceType<typeof RowPace>, rows: number, queuedMs: (index: number) => number | undefined) {
  const letGo: number[] = [];
  let index = 0;
  const lane = async () => {
    while (index < rows) {
      const mine = index++;
      const letGoAt = await pace.turn();
      letGo.push(Date.now());
      const waited = queuedMs(mine);
      await new Promise((done) => setTimeout(done, waited ?? 0));
      pace.started(letGoAt, waited);
    }
  };
  void Promise.all(Array.from({ length: 16 }, lane));
  return letGo;
}

describe('a catalogue chunk’s pace', () => {
  it('lets the first row go at once, then rows on ticks, a quarter faster each tick while they start at once', async () => {
    const pace = new RowPace(BUDGET);
    const letGo = lanes(pace, 400, () => 5);
    await vi.advanceTimersByTimeAsync(0);
    expect(letGo).toEqual([0]);
    await vi.advanceTimersByTimeAsync(10_000);
    const inSecond = (second: number) => letGo.filter((at) => at >= second * 1_000 && at < (second + 1) * 1_000).length;
    expect(inSecond(1)).toBe(1);
    expect(inSecond(9)).toBeGreaterThan(inSecond(2));
    expect(pace.state.rowsPerSecond).toBeGreaterThan(1.25 ** 8);
    expect(pace.state.rowsPerSecond).toBeLessThan(1.25 ** 11);
  });

  it('cuts the pace below what got through when a row waited more than a slot and a half, and not for less', async () => {
    const pace = new RowPace(BUDGET);
    let spent = false;
    lanes(pace, 400, () => (spent ? 3 * PICKUP_MS : PICKUP_MS));
    await vi.advanceTimersByTimeAsync(12_000);
    const before = pace.state.rowsPerSecond;
    expect(before).toBeGreaterThan(1);
    spent = true;
    await vi.advanceTimersByTimeAsync(6_000);
    expect(pace.state.rowsPerSecond).toBeLessThan(before * 0.85);
  });

  it('cuts to half only for a queue of a second or more: a shorter pause of everything is a cut to 85 %', async () => {
    const firstCut = async (carried: boolean) => {
      const pace = new RowPace(BUDGET, undefined, { carried });
      let waited = PICKUP_MS;
      lanes(pace, 400, () => waited);
      await vi.advanceTimersByTimeAsync(12_000);
      // Seven judged slots (70 ms each) past the pickup, under a second.
      waited = PICKUP_MS + 500;
      while (pace.state.spent === undefined) await vi.advanceTimersByTimeAsync(100);
      return pace.state.rowsPerSecond / pace.state.spent!.rowsPerSecond;
    };
    expect(await firstCut(true)).toBeCloseTo(0.85, 5);
    expect(await firstCut(false)).toBeCloseTo(0.5, 5);
  });

  it('lets nothing more go while rows let go are still queued, until they are held up past five seconds', async () => {
    const pace = new RowPace(BUDGET);
    const letGo = lanes(pace, 10, (index) => (index === 0 ? 30_000 : 5));
    await vi.advanceTimersByTimeAsync(4_000);
    expect(letGo).toEqual([0]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(letGo.length).toBeGreaterThan(1);
    expect(letGo[1]).toBe(5_000);
  });

  it('takes a row held up past five seconds (its worker killed) for no spent budget: the pace keeps its rate', async () => {
    const heldUp = async (heldUpSpendsNothing: boolean) => {
      const pace = new RowPace(BUDGET, undefined, { heldUpSpendsNothing, leavesMargin: heldUpSpendsNothing });
      let killed = false;
      // While the worker is down every row let go waits for it; the first row back waited 6 s, the rest at once.
      lanes(pace, 400, () => (killed ? 6_000 : 5));
      await vi.advanceTimersByTimeAsync(12_000);
      const before = pace.state.rowsPerSecond;
      killed = true;
      await vi.advanceTimersByTimeAsync(1_000);
      killed = false;
      await vi.advanceTimersByTimeAsync(7_000);
      return { before, after: pace.state.rowsPerSecond, spent: pace.state.spent };
    };
    const now = await heldUp(true);
    expect(now.spent).toBeUndefined();
    expect(now.after).toBeGreaterThanOrEqual(now.before);
    // Before, the held-up rows were a spent budget: the pace fell to what got through while they waited.
    const before = await heldUp(false);
    expect(before.spent).toBeDefined();
    expect(before.after).toBeLessThan(before.before * 0.85);
  });

  it('held rows back for ten seconds in a chunk started before the pace carried its fractions', async () => {
    const pace = new RowPace(BUDGET, undefined, { carried: false, heldUpSpendsNothing: false, leavesMargin: false });
    const letGo = lanes(pace, 10, (index) => (index === 0 ? 30_000 : 5));
    await vi.advanceTimersByTimeAsync(9_000);
    expect(letGo).toEqual([0]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(letGo[1]).toBe(10_000);
  });

  it('keeps the part of a row a tick earns: a pace between two whole rows a second lets its own rate go', async () => {
    const ticked = async (carried: boolean) => {
      // Near a spent budget: 3 % a tick, from 2.5 to 3.26 rows a second over the ten (no margin, so both rise alike).
      const pace = new RowPace(
        BUDGET,
        { rowsPerSecond: 2.5, spent: { rowsPerSecond: 2.6, at: 0 } },
        { carried, leavesMargin: false },
      );
      const letGo = lanes(pace, 400, () => 5);
      let owed = 0;
      for (let second = 0; second < 10; second++) {
        owed += pace.state.rowsPerSecond;
        await vi.advanceTimersByTimeAsync(1_000);
      }
      return { owed, letGo: letGo.length - 1 };
    };
    const carried = await ticked(true);
    expect(carried.letGo).toBeGreaterThanOrEqual(Math.floor(carried.owed) - 1);
    expect(carried.letGo).toBeLessThanOrEqual(Math.ceil(carried.owed) + 1);
    // Before, a tick let the pace's whole rows go and lost its fraction: 2 a tick up to 3 rows a second.
    const before = await ticked(false);
    expect(before.letGo).toBeLessThanOrEqual(carried.letGo - 3);
  });

  it('saves no burst up while rows were held: a tick lets go at most a second’s worth', async () => {
    const pace = new RowPace(BUDGET);
    const letGo = lanes(pace, 200, (index) => (index === 30 ? 20_000 : 5));
    const paces: number[] = [];
    for (let second = 0; second < 60; second++) {
      paces.push(pace.state.rowsPerSecond);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    const byTick = new Map<number, number>();
    for (const at of letGo) byTick.set(at, (byTick.get(at) ?? 0) + 1);
    // The pace grows by a quarter a tick at most: a tick's rows are never more than the pace of the tick after.
    expect(Math.max(...byTick.values())).toBeLessThanOrEqual(Math.ceil(Math.max(...paces) * 1.25) + 1);
  });

  it('reads a busy worker’s steady pickup as no spent budget, and waits shorter than its jitter neither', async () => {
    // Every creation waits 1.2 s for a worker (two slots and more of 120 a minute), none for the budget.
    const busy = new RowPace(120);
    lanes(busy, 400, () => 1_200);
    await vi.advanceTimersByTimeAsync(12_000);
    expect(busy.state.spent).toBeUndefined();
    // A budget of 6,000 a minute has slots of 10 ms: a worker's pickup varying by 60 ms is not its bucket.
    const jittery = new RowPace(6_000);
    lanes(jittery, 400, (index) => 5 + (index % 7) * 10);
    await vi.advanceTimersByTimeAsync(12_000);
    expect(jittery.state.spent).toBeUndefined();
    expect(jittery.state.rowsPerSecond).toBeGreaterThan(1.25 ** 8);
  });

  it('started before the margin, rose by a quarter again once a spent budget was long past', async () => {
    const pace = new RowPace(
      BUDGET,
      { rowsPerSecond: 4, spent: { rowsPerSecond: 4.5, at: 0 } },
      { leavesMargin: false },
    );
    const letGo = lanes(pace, 400, () => 5);
    await vi.advanceTimersByTimeAsync(1_000);
    // The first row at once, then the tick's four.
    expect(letGo).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(9_000);
    // Near where the budget was spent: 3 % a tick.
    expect(pace.state.rowsPerSecond).toBeLessThan(4 * 1.03 ** 10 + 0.01);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(pace.state.spent).toBeUndefined();
    expect(pace.state.rowsPerSecond).toBeGreaterThan(4 * 1.25);
  });

  it('never goes faster than the whole budget lets rows through, two requests a row', async () => {
    for (const [budget, most] of [
      [120, 1],
      [BUDGET, 10],
    ] as const) {
      const pace = new RowPace(budget, { rowsPerSecond: 50 });
      expect(pace.state.rowsPerSecond).toBe(most);
      lanes(pace, 400, () => 5);
      await vi.advanceTimersByTimeAsync(20_000);
      expect(pace.state.rowsPerSecond).toBe(most);
    }
  });

  it('reads a pace handed on that is no rate as none: the first row a second, nothing spent', () => {
    const cases: Array<[unknown, number, boolean]> = [
      [{ rowsPerSecond: -3 }, 1, false],
      [{ rowsPerSecond: Number.NaN, spent: { rowsPerSecond: 2, at: 0 } }, 1, true],
      [{ rowsPerSecond: '4', spent: { rowsPerSecond: 0, at: 0 } }, 1, false],
      [{ rowsPerSecond: 2, spent: { rowsPerSecond: 2, at: 'now' } }, 2, false],
    ];
    for (const [from, rowsPerSecond, spent] of cases) {
      const state = new RowPace(BUDGET, from as CataloguePace).state;
      expect(state.rowsPerSecond).toBe(rowsPerSecond);
      expect(state.spent !== undefined).toBe(spent);
    }
  });
  it('keeps 5 % under where it last found the budget spent, and feels beyond it a little a tick once that is long past', async () => {
    const pace = new RowPace(BUDGET, { rowsPerSecond: 4, spent: { rowsPerSecond: 4.5, at: 0 } });
    lanes(pace, 2_000, () => 5);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pace.state.rowsPerSecond).toBeCloseTo(0.95 * 4.5, 5);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(pace.state.rowsPerSecond).toBeCloseTo(0.95 * 4.5, 5);
    // Past 30 s the mark is kept, and the pace climbs by 3 % a tick beyond it, not by a quarter.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pace.state.spent?.rowsPerSecond).toBe(4.5);
    expect(pace.state.rowsPerSecond).toBeGreaterThan(4.5);
    expect(pace.state.rowsPerSecond).toBeLessThan(0.95 * 4.5 * 1.03 ** 10 + 0.01);
  });

  it('takes a queue standing for more than ten seconds for a spent budget: waits are judged from the least pickup', async () => {
    const cuts = async (leavesMargin: boolean) => {
      const pace = new RowPace(120, { rowsPerSecond: 0.8 }, { leavesMargin });
      let standing = false;
      // Every row waits 0.9 of a 500 ms slot once a queue stands: past ¾ of a slot, short of a slot and a half.
      lanes(pace, 400, () => (standing ? 20 + 450 : 20));
      await vi.advanceTimersByTimeAsync(5_000);
      standing = true;
      const paces: number[] = [];
      for (let second = 0; second < 30; second++) {
        await vi.advanceTimersByTimeAsync(1_000);
        paces.push(pace.state.rowsPerSecond);
      }
      return paces;
    };
    const margin = await cuts(true);
    expect(margin.at(-1)!).toBeLessThan(0.8 * 0.5);
    // Before, the shortest wait of the last ten seconds became the pickup, and the pace never saw the queue.
    const before = await cuts(false);
    expect(Math.min(...before)).toBeGreaterThanOrEqual(0.8);
  });

  it('stays under what the service’s window says the rest of the application leaves, and rises as that grows', async () => {
    const paced = async (readsWindow: boolean) => {
      const pace = new RowPace(120, { rowsPerSecond: 0.2 }, { readsWindow });
      // The service counts every request of the application in one-minute windows: the import's two a row, and the
      // rest of the application's (a till, its stock) at `others` a second.
      let used = 0;
      let others = 1;
      let windowEndsAt = 60_000;
      const count = (requests: number) => {
        if (Date.now() >= windowEndsAt) [used, windowEndsAt] = [0, windowEndsAt + 60_000];
        used += requests;
      };
      const rest = setInterval(() => count(others), 1_000);
      let index = 0;
      const lane = async () => {
        while (index++ < 400) {
          const letGoAt = await pace.turn();
          await new Promise((done) => setTimeout(done, 5));
          count(2);
          pace.started(letGoAt, 5);
          const resetSeconds = Math.ceil((windowEndsAt - Date.now()) / 1_000);
          pace.windowRead({ limit: 120, remaining: Math.max(0, 120 - used), resetSeconds });
        }
      };
      void Promise.all(Array.from({ length: 16 }, lane));
      await vi.advanceTimersByTimeAsync(40_000);
      const held = pace.state.rowsPerSecond;
      others = 0;
      await vi.advanceTimersByTimeAsync(40_000);
      clearInterval(rest);
      return { held, after: pace.state.rowsPerSecond };
    };
    // A budget of 2 a second less 1 for the rest leaves half a row a second: 97 % of it.
    const reads = await paced(true);
    expect(reads.held).toBeGreaterThan(0.97 * 0.5 * 0.85);
    expect(reads.held).toBeLessThanOrEqual(0.97 * 0.5 + 1e-9);
    expect(reads.after).toBeGreaterThan(0.8);
    expect(reads.after).toBeLessThanOrEqual(0.97 + 1e-9);
    // Without the window, nothing held the pace under the rest's share: no row waited, so it rose to the whole budget.
    vi.useRealTimers();
    vi.useFakeTimers({ now: 0 });
    expect((await paced(false)).held).toBe(1);
  });

  type ModelWays = { leavesMargin: boolean; readsWindow: boolean };

  /**
   * Temporal's limiter as the `temporal-server` 1.32.2 source has it (`service/matching/ratelimit_manager.go`): a bucket
   * of a second's slots, a till's task served before the import's. Each row is a creation and, 60 ms after it
   * started, a registration; a till's sale comes every few seconds. The figures the import is judged by: how many of
   * the till's tasks waited for a slot, and how much of what the till left the import used.
   */
  async function besideATill(perMinute: number, tillEveryMs: number, ways: ModelWays) {
    const perMs = perMinute / 60_000;
    const burst = perMinute / 60;
    let tokens = burst;
    let filledAt = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const queue: Array<{ till: boolean; since: number; served: (waitedMs: number) => void }> = [];
    // The service's one-minute windows, counting every request sent.
    const WINDOW_MS = 60_000;
    let windowStart = 0;
    let windowUsed = 0;
    const window = () => {
      const now = Date.now();
      const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
      return {
        limit: perMinute,
        remaining: Math.max(0, perMinute - windowUsed),
        resetSeconds: Math.ceil((start + WINDOW_MS - now) / 1000),
      };
    };
    const pump = () => {
      timer = undefined;
      const now = Date.now();
      tokens = Math.min(burst, tokens + (now - filledAt) * perMs);
      filledAt = now;
      while (tokens >= 1 - 1e-9 && queue.length > 0) {
        const till = queue.findIndex((task) => task.till);
        const [task] = queue.splice(till >= 0 ? till : 0, 1);
        tokens -= 1;
        const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
        if (start !== windowStart) [windowStart, windowUsed] = [start, 0];
        windowUsed++;
        task!.served(now - task!.since);
      }
      if (queue.length > 0) timer = setTimeout(pump, Math.max(1, Math.ceil((1 - tokens) / perMs)));
    };
    const dispatched = (till: boolean) =>
      new Promise<number>((served) => {
        queue.push({ till, since: Date.now(), served });
        if (!timer) pump();
      });

    const steadyFrom = 30_000;
    const until = 330_000;
    const tillWaits: number[] = [];
    let importTasks = 0;
    // A till's sales come at every phase of the limiter's second, as a shop's do: never on the import's ticks alone.
    let sales = 0;
    let tillTimer: ReturnType<typeof setTimeout>;
    const sell = () => {
      sales++;
      void dispatched(true).then((waited) => {
        if (Date.now() >= steadyFrom) tillWaits.push(waited);
      });
      tillTimer = setTimeout(sell, tillEveryMs + ((sales * 377) % 1_000) - 500);
    };
    tillTimer = setTimeout(sell, 250);
    const pace = new RowPace(perMinute, undefined, ways);
    const PICKUP_MS = 10;
    const lane = async () => {
      while (Date.now() < until) {
        const letGoAt = await pace.turn();
        const waited = await dispatched(false);
        if (Date.now() >= steadyFrom) importTasks++;
        await new Promise((done) => setTimeout(done, PICKUP_MS));
        pace.started(letGoAt, waited + PICKUP_MS);
        pace.windowRead(window());
        await new Promise((done) => setTimeout(done, 60));
        await dispatched(false);
        if (Date.now() >= steadyFrom) importTasks++;
      }
    };
    void Promise.all(Array.from({ length: 16 }, lane));
    await vi.advanceTimersByTimeAsync(until);
    clearTimeout(tillTimer);
    const left = (until - steadyFrom) * perMs - tillWaits.length;
    return {
      tillWaited: tillWaits.filter((waited) => waited > 40).length / tillWaits.length,
      utilisation: importTasks / left,
    };
  }

  /** The model at 120 a minute with a sale every 3 s, and at 240 with one every 1.5 s: each way, then the way before. */
  async function againstBefore(ways: ModelWays, before: ModelWays) {
    const runs = [];
    for (const [perMinute, tillEveryMs] of [
      [120, 3_000],
      [240, 1_500],
    ] as const) {
      const now = await besideATill(perMinute, tillEveryMs, ways);
      vi.useRealTimers();
      vi.useFakeTimers({ now: 0 });
      runs.push({ now, before: await besideATill(perMinute, tillEveryMs, before) });
      vi.useRealTimers();
      vi.useFakeTimers({ now: 0 });
    }
    return runs;
  }

  it('leaves a till a slot in the limiter while the import uses nine tenths of what the till leaves', async () => {
    const runs = await againstBefore(
      { leavesMargin: true, readsWindow: false },
      { leavesMargin: false, readsWindow: false },
    );
    for (const { now, before } of runs) {
      expect(now.utilisation).toBeGreaterThanOrEqual(0.9);
      expect(now.tillWaited).toBeLessThan(before.tillWaited * 0.7);
    }
  });

  it('leaves a till more slots once it reads the window: it no longer feels past a stale mark', async () => {
    const runs = await againstBefore(
      { leavesMargin: true, readsWindow: true },
      { leavesMargin: true, readsWindow: false },
    );
    for (const { now, before } of runs) {
      expect(now.utilisation).toBeGreaterThanOrEqual(0.9);
      expect(now.tillWaited).toBeLessThan(before.tillWaited * 0.9);
    }
  });
});

/**
 * The chunk's pace on its own, its timer a plain one under fake time: workflow code, but its arithmetic needs no
 * server. The end-to-end import (import.test.ts) runs it in a real chunk workflow.
 */
import type * as Workflow from '@temporalio/workflow';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** How late each timer fires: its workflow task waits in the queue and runs, longer on a busy worker. */
const timer = vi.hoisted(() => ({ lateMs: 0 }));
vi.mock('@temporalio/workflow', async (importOriginal) => ({
  ...(await importOriginal<typeof Workflow>()),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms + timer.lateMs)),
}));
const { RowPace, SHARE_OF_LEFT } = await import('../../workflows/catalogue-pace.js');

/** A budget of 1,200 requests a minute: at most 10 rows (of 2 requests) a second, fewer at the pace's share. */
const BUDGET = 1_200;
const ROWS_PER_SECOND = 10 * SHARE_OF_LEFT;
/** A minute's rows at 120 requests a minute. */
const ROWS_A_MINUTE = Math.floor(60 * SHARE_OF_LEFT);

beforeEach(() => {
  timer.lateMs = 0;
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => vi.useRealTimers());

type Pace = InstanceType<typeof RowPace>;

/** `rows` on 16 lanes; each row answered `answerMs(index)` after its turn, counted as a creation and a registration. */
function lanes(pace: Pace, rows: number, answerMs: (index: number) => number) {
  const letGo: number[] = [];
  let index = 0;
  const lane = async () => {
    while (index < rows) {
      const mine = index++;
      await pace.turn();
      letGo.push(Date.now());
      await new Promise((done) => setTimeout(done, answerMs(mine)));
      pace.counted(2, undefined);
    }
  };
  void Promise.all(Array.from({ length: 16 }, lane));
  return letGo;
}

const inSecond = (letGo: number[], second: number) =>
  letGo.filter((at) => at >= second * 1_000 && at < (second + 1) * 1_000).length;

describe('a catalogue chunk’s pace', () => {
  it('lets the first row go at once, then its share of the budget’s rows on each tick', async () => {
    const pace = new RowPace(BUDGET);
    const letGo = lanes(pace, 400, () => 5);
    await vi.advanceTimersByTimeAsync(0);
    expect(letGo).toEqual([0]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(pace.rowsPerSecond).toBeCloseTo(ROWS_PER_SECOND, 9);
    for (let second = 1; second < 10; second++)
      expect(inSecond(letGo, second)).toBeGreaterThanOrEqual(Math.floor(ROWS_PER_SECOND));
    expect(letGo.length).toBeGreaterThanOrEqual(1 + Math.floor(10 * ROWS_PER_SECOND) - 1);
    expect(letGo.length).toBeLessThanOrEqual(1 + Math.ceil(10 * ROWS_PER_SECOND) + 1);
  });

  it('lets rows go while the rows before are still being answered: a slow answer costs the import nothing', async () => {
    // Each creation answered 3 s after its turn (its queue, the call, the hand-over to its registration).
    const pace = new RowPace(120);
    const letGo = lanes(pace, 400, () => 3_000);
    await vi.advanceTimersByTimeAsync(60_000);
    // Its share of a row a second at 120 a minute: the part of a row a tick earns is kept for the next.
    expect(letGo.length).toBeGreaterThanOrEqual(1 + ROWS_A_MINUTE - 1);
    expect(letGo.length).toBeLessThanOrEqual(1 + ROWS_A_MINUTE + 1);
  });

  it('loses nothing to ticks that each fire late, as a busy worker’s do', async () => {
    // Each tick 300 ms late: counted as one tick's time, the import would take its share ÷ 1.3 of a row a second.
    timer.lateMs = 300;
    const pace = new RowPace(120);
    const letGo = lanes(pace, 400, () => 5);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(letGo.length).toBeGreaterThanOrEqual(1 + ROWS_A_MINUTE - 2);
    expect(letGo.length).toBeLessThanOrEqual(1 + ROWS_A_MINUTE + 1);
  });

  it('saves no burst up while its worker was away: a late tick lets go at most a tick’s rows and one more', async () => {
    const pace = new RowPace(BUDGET);
    const letGo = lanes(pace, 400, () => 5);
    await vi.advanceTimersByTimeAsync(5_000);
    // No worker ran the chunk for 20 s: its timer fired, its workflow task waited. Here: a tick 20 s long.
    const before = letGo.length;
    vi.setSystemTime(Date.now() + 20_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(letGo.length - before).toBeLessThanOrEqual(Math.ceil(ROWS_PER_SECOND) + 1);
  });

  it('stays under what the service’s window says the rest of the application leaves, and rises as that grows', async () => {
    const pace = new RowPace(120);
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
        await pace.turn();
        await new Promise((done) => setTimeout(done, 5));
        count(2);
        const resetSeconds = Math.ceil((windowEndsAt - Date.now()) / 1_000);
        pace.counted(2, { limit: 120, remaining: Math.max(0, 120 - used), resetSeconds });
      }
    };
    void Promise.all(Array.from({ length: 16 }, lane));
    await vi.advanceTimersByTimeAsync(40_000);
    // A budget of 2 a second less 1 for the rest leaves half a row a second: the pace's share of it.
    expect(pace.rowsPerSecond).toBeGreaterThan(SHARE_OF_LEFT * 0.5 * 0.9);
    expect(pace.rowsPerSecond).toBeLessThan(SHARE_OF_LEFT * 0.5 * 1.1);
    others = 0;
    await vi.advanceTimersByTimeAsync(40_000);
    clearInterval(rest);
    expect(pace.rowsPerSecond).toBeGreaterThan(SHARE_OF_LEFT * 0.9);
    expect(pace.rowsPerSecond).toBeLessThanOrEqual(SHARE_OF_LEFT);
    // What it learned is the next chunk's start.
    expect(new RowPace(120, pace.state).rowsPerSecond).toBe(pace.rowsPerSecond);
  });

  it('takes the first reading of the rest whole, where a rate handed on is averaged with what it reads', () => {
    // Two reads of one window 5 s apart: 10 requests counted, none of them the import's, so the rest sends 2 a second.
    const read = (pace: Pace) => {
      pace.counted(0, { limit: 120, remaining: 100, resetSeconds: 40 });
      vi.advanceTimersByTime(5_000);
      pace.counted(0, { limit: 120, remaining: 90, resetSeconds: 35 });
      return pace.state.othersPerSecond;
    };
    const fresh = new RowPace(1_200);
    expect(fresh.state.othersPerSecond).toBeUndefined();
    expect(read(fresh)).toBeCloseTo(2, 9);
    expect(read(new RowPace(1_200, { rowsPerSecond: 0, othersPerSecond: 0 }))).toBeCloseTo(1, 9);
  });

  it('lets no row go while a creation reports a queue before the limiter, and goes on once none does', async () => {
    const pace = new RowPace(BUDGET);
    const letGo = lanes(pace, 400, () => 5);
    await vi.advanceTimersByTimeAsync(3_000);
    const before = letGo.length;
    // Each tick, a creation answered from a queue a second and a half long (the tills' sales wait behind it).
    for (let tick = 0; tick < 3; tick++) {
      pace.counted(1, undefined, 1_500);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(letGo.length).toBe(before);
    // Waits of a slot or two (behind a till's sale) are no queue.
    for (let tick = 0; tick < 3; tick++) {
      pace.counted(1, undefined, 400);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(letGo.length - before).toBeGreaterThanOrEqual(2 * Math.floor(ROWS_PER_SECOND));
  });

  it('reads a state handed on that it cannot use as none, and never goes slower than a row a minute', () => {
    for (const from of [
      { rowsPerSecond: 3 },
      { rowsPerSecond: 1, othersPerSecond: -1 },
      JSON.parse('{"othersPerSecond": "x"}'),
    ])
      expect(new RowPace(120, from).rowsPerSecond).toBeCloseTo(SHARE_OF_LEFT, 9);
    // The rest of the application sends the whole budget: the import still ends, at a row a minute.
    expect(new RowPace(120, { rowsPerSecond: 0, othersPerSecond: 50 }).rowsPerSecond).toBe(1 / 60);
    // No budget known: the service's 120 a minute.
    expect(new RowPace(undefined).rowsPerSecond).toBeCloseTo(SHARE_OF_LEFT, 9);
  });

  /**
   * Temporal's limiter as the `temporal-server` 1.32.2 source has it (`service/matching/ratelimit_manager.go`): a bucket
   * of a second's slots, a till's task served before the import's. Each row is a creation, answered 300 ms after it
   * was served, and 60 ms after that its registration; a till's sale comes every few seconds (`undefined`: no till).
   * The figures the import is judged by: how many of the till's tasks waited for a slot, and how much of what the till
   * left the import used.
   */
  async function besideATill(perMinute: number, tillEveryMs: number | undefined) {
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
    const startWaits: number[] = [];
    let importTasks = 0;
    // A till's sales come at every phase of the limiter's second, as a shop's do: never on the import's ticks alone.
    let sales = 0;
    let tillTimer: ReturnType<typeof setTimeout> | undefined;
    const sell = () => {
      sales++;
      void dispatched(true).then((waited) => {
        (Date.now() >= steadyFrom ? tillWaits : startWaits).push(waited);
      });
      tillTimer = setTimeout(sell, tillEveryMs! + ((sales * 377) % 1_000) - 500);
    };
    if (tillEveryMs !== undefined) tillTimer = setTimeout(sell, 250);
    const pace = new RowPace(perMinute);
    const lane = async () => {
      while (Date.now() < until) {
        await pace.turn();
        const queuedMs = await dispatched(false);
        if (Date.now() >= steadyFrom) importTasks++;
        // The call, and the hand-over of the item to its registration a slot after the call went out.
        await new Promise((done) => setTimeout(done, 300));
        const answered = window();
        await new Promise((done) => setTimeout(done, Math.max(60, 60_000 / perMinute - 300)));
        pace.counted(2, answered, queuedMs);
        await dispatched(false);
        if (Date.now() >= steadyFrom) importTasks++;
      }
    };
    void Promise.all(Array.from({ length: 16 }, lane));
    await vi.advanceTimersByTimeAsync(until);
    if (tillEveryMs !== undefined) clearTimeout(tillTimer);
    const left = (until - steadyFrom) * perMs - tillWaits.length;
    const waitedShare = (waits: number[]) => waits.filter((waited) => waited > 40).length / Math.max(1, waits.length);
    return {
      tillWaited: waitedShare(tillWaits),
      tillWaitedAtStart: waitedShare(startWaits),
      utilisation: importTasks / left,
    };
  }

  it('alone, uses nine tenths of the whole budget and more, each creation answered 300 ms after it was served', async () => {
    for (const perMinute of [120, 240, 1_200]) {
      const alone = await besideATill(perMinute, undefined);
      expect(alone.utilisation, `${perMinute} a minute`).toBeGreaterThanOrEqual(0.9);
      expect(alone.utilisation, `${perMinute} a minute`).toBeLessThanOrEqual(1);
      vi.useRealTimers();
      vi.useFakeTimers({ now: 0 });
    }
  });

  it('beside a till, uses nine tenths of what the till leaves, and the till seldom waits for a slot', async () => {
    // At 120 a minute the limiter's bucket holds two slots, and a row's creation and registration take both on a tick:
    // a till's sale in the moments after waits. At 240 a row takes half of it. The pace that cut itself on queue waits
    // had 41 % and 11 % of the till's tasks wait here.
    for (const [perMinute, tillEveryMs, waitedBelow] of [
      [120, 3_000, 0.4],
      [240, 1_500, 0.1],
    ] as const) {
      const beside = await besideATill(perMinute, tillEveryMs);
      expect(beside.utilisation, `${perMinute} a minute`).toBeGreaterThanOrEqual(0.9);
      expect(beside.tillWaited, `${perMinute} a minute`).toBeLessThan(waitedBelow);
      vi.useRealTimers();
      vi.useFakeTimers({ now: 0 });
    }
  });
});

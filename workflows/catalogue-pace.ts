import { sleep } from '@temporalio/workflow';

/** Rows are let go on ticks: a workflow timer fires on the server's whole seconds, however short it is asked to be. */
const TICK_MS = 1_000;
/**
 * Below 85 % of the pace the budget was last found spent at (and before it ever was), the pace grows by a quarter
 * each tick; nearer, by 3 %: back to where the budget was quickly, then feeling for more slowly.
 */
const FIRST_RISE = 0.25;
const RISE = 0.03;
/** A wait of a slot and a half cuts the pace to 85 %; of four slots or more (a queue has built up), to half. */
const CUT_TO = 0.85;
const DEEP_CUT_AFTER_SLOTS = 4;
const DEEP_CUT_TO = 0.5;
/**
 * Rows let go that have not started are still in the queue: no more go until they have, so the import never stands
 * in the queue more than a tick's worth deep. A row that has not started after this long is held up elsewhere (its
 * worker killed, waiting for its timeout) and no longer holds the others back.
 */
const HELD_UP_AFTER_MS = 10_000;
/**
 * A cut is taken from the rows that got through lately, not from the pace asked for: a bucket that held slots may have
 * hidden for seconds a pace far above the budget, and cutting that by a share would still be above it.
 */
const DELIVERED_OVER_MS = 3_000;
/** One spent budget is seen by the next ticks too: one cut for them all. */
const CUT_AT_MOST_EVERY_MS = 2_000;
/** A row found the budget spent when it waited in the queue longer than this many of the budget's slots. */
const SPENT_AFTER_SLOTS = 1.5;
/** A pace with no budget to read it from (a window whose rate is not known): a slot of the service's 120 a minute. */
const DEFAULT_REQUESTS_PER_MINUTE = 120;
/** Never slower than a row a minute. */
const MIN_ROWS_PER_SECOND = 1 / 60;
export const FIRST_ROWS_PER_SECOND = 1;

/**
 * How fast a chunk lets its rows go: fast enough to spend what the tills leave of the budget, slow enough that the
 * queue's rate limiter still holds a slot when a till's sale comes. Temporal's limiter (a bucket of a second's worth of
 * slots) serves the highest priority first but cannot hold a slot back: an import that always has a task waiting
 * empties the bucket, and each till sale then waits for the next slot. So the import paces itself as a background
 * transfer does, on its own queue wait: while the bucket holds slots its creations start at once, whatever the
 * priority; one that waited more than a slot and a half found it empty, and the pace is cut; while they start at once,
 * the pace creeps up (additive increase, multiplicative decrease).
 */
export class RowPace {
  private rowsPerSecond = FIRST_ROWS_PER_SECOND;
  private readonly slotMs: number;
  private readonly waiting: Array<(letGoAt: number) => void> = [];
  /** Rows the pace owes: one at once, then the pace's share of each tick. */
  private owed = 1;
  private tickAt = Date.now();
  private ticking = false;
  private lastCutAt = Number.NEGATIVE_INFINITY;
  /** The pace the budget was last found spent at. */
  private spentAt = Number.POSITIVE_INFINITY;
  private risenAt = Number.NEGATIVE_INFINITY;
  /** When each row let go and not started yet was let go. */
  private readonly queued: number[] = [];
  /** When the rows started lately started. */
  private readonly startedAt: number[] = [];

  constructor(requestsPerMinute: number | undefined) {
    this.slotMs = 60_000 / (requestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE);
  }

  get perSecond(): number {
    return this.rowsPerSecond;
  }

  /** Waits for the row's turn; resolves to the time it was let go, which `started` takes back. */
  turn(): Promise<number> {
    if (this.owed >= 1 && this.waiting.length === 0 && this.queued.length === 0) {
      this.owed -= 1;
      this.queued.push(Date.now());
      return Promise.resolve(Date.now());
    }
    const mine = new Promise<number>((resolve) => this.waiting.push(resolve));
    if (!this.ticking) void this.tick();
    return mine;
  }

  /**
   * The row let go at `letGoAt` has started, after waiting `queuedMs` in the queue (unknown when it failed): a row
   * held up keeps its own time, so it stops holding the others back ten seconds after it was let go, not later.
   */
  started(letGoAt: number, queuedMs: number | undefined): void {
    const at = this.queued.indexOf(letGoAt);
    if (at >= 0) this.queued.splice(at, 1);
    if (queuedMs === undefined) return;
    const now = Date.now();
    this.startedAt.push(now);
    while (this.startedAt[0]! < now - DELIVERED_OVER_MS) this.startedAt.shift();
    const slots = queuedMs / this.slotMs;
    if (slots > SPENT_AFTER_SLOTS) {
      if (now - this.lastCutAt < CUT_AT_MOST_EVERY_MS) return;
      this.lastCutAt = now;
      const to = slots >= DEEP_CUT_AFTER_SLOTS ? DEEP_CUT_TO : CUT_TO;
      const delivered = (this.startedAt.length * 1000) / DELIVERED_OVER_MS;
      this.spentAt = Math.min(this.rowsPerSecond, delivered);
      this.rowsPerSecond = Math.max(MIN_ROWS_PER_SECOND, this.spentAt * to);
    } else if (now - this.risenAt >= TICK_MS) {
      // Once a tick, however many rows it let go.
      this.risenAt = now;
      this.rowsPerSecond *= 1 + (this.rowsPerSecond < CUT_TO * this.spentAt ? FIRST_RISE : RISE);
    }
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    while (this.waiting.length > 0) {
      await sleep(TICK_MS);
      const now = Date.now();
      const since = this.tickAt;
      this.tickAt = now;
      // Rows still queued: the budget is not there to spend, and nothing is owed for the time they held the others.
      if (this.queued.some((at) => now - at < HELD_UP_AFTER_MS)) continue;
      // What a tick did not use is not saved up for a burst later (a worker restarted, rows held up).
      const earned = (this.rowsPerSecond * Math.min(now - since, TICK_MS)) / 1000;
      this.owed = Math.min(this.owed + earned, Math.max(1, this.rowsPerSecond));
      while (this.owed >= 1 && this.waiting.length > 0) {
        this.owed -= 1;
        this.queued.push(now);
        this.waiting.shift()!(now);
      }
    }
    this.ticking = false;
  }
}

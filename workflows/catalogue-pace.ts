import { sleep } from '@temporalio/workflow';
import type { CatalogueItemFound } from '../activities/catalogue.js';
import type { CataloguePace } from '../src/contracts/catalogue-import.js';

/** Rows are let go on ticks: a workflow timer fires on the server's whole seconds, however short it is asked to be. */
const TICK_MS = 1_000;
/** Below 85 % of the pace last found spent (or never found), the pace grows a quarter a tick; nearer, by 3 %. */
const FIRST_RISE = 0.25;
const RISE = 0.03;
/**
 * A budget found spent this long ago no longer holds the pace under it (without a margin: no longer slows the rise).
 */
const SPENT_FORGOTTEN_AFTER_MS = 30_000;
/** A wait of a slot and a half cuts the pace to 85 %; of four slots or more (a queue has built up), to half. */
const CUT_TO = 0.85;
const DEEP_CUT_AFTER_SLOTS = 4;
/**
 * Nor before a second's wait: a pause of the whole machine (a collection, a checkpoint) is no queue of the import's.
 */
const DEEP_CUT_AFTER_MS_CARRIED = 1_000;
const DEEP_CUT_TO = 0.5;
/** Rows let go and not started hold back the rest, unless they waited this long (held up elsewhere: worker killed). */
const HELD_UP_AFTER_MS = 10_000;
/** Once the pace carries its fractions: a killed worker's calls are sent again after 10 s, its tasks after 5 s. */
const HELD_UP_AFTER_MS_CARRIED = 5_000;
/** A cut is taken from the rows that got through lately: a full bucket may have hidden a pace far above the budget. */
const DELIVERED_OVER_MS = 3_000;
/** One spent budget is seen by the next ticks too: one cut for them all. */
const CUT_AT_MOST_EVERY_MS = 2_000;
/** Without a margin, a row found the budget spent when it waited this many of the budget's slots past the pickup. */
const SPENT_AFTER_SLOTS = 1.5;
/** A wait is judged in slots at least this long: a busy worker's pickup varies by tens of milliseconds. */
const JUDGED_SLOT_MIN_MS = 70;
/** Without a margin, the worker's own pickup was the shortest wait of the rows started in this long. */
const PICKUP_OVER_MS = 10_000;
/** Leaving a margin: the pace stays this far under where it last found the budget spent, so a till finds a slot. */
const MARGIN_UNDER_SPENT = 0.95;
/** With a margin, a wait this many slots past the least pickup is a spent budget (a till found the bucket empty). */
const MARGIN_SPENT_AFTER_SLOTS = 0.75;
/** A pace with no budget to read it from (a window whose rate is not known): a slot of the service's 120 a minute. */
const DEFAULT_REQUESTS_PER_MINUTE = 120;
/** Never slower than a row a minute. */
const MIN_ROWS_PER_SECOND = 1 / 60;
const FIRST_ROWS_PER_SECOND = 1;
/** A row is a creation and a registration: never faster than the whole budget lets rows through. */
const REQUESTS_PER_ROW = 2;
/**
 * The service's window counts every request of the application: read over at least this long, its count less the
 * import's own is what the rest of the application sends, and the pace stays under what that leaves.
 */
const WINDOW_READ_OVER_MS = 5_000;
/** Reset times read a whole second apart are one window's (the header is in whole seconds). */
const SAME_WINDOW_WITHIN_MS = 1_500;
/**
 * The share of what the rest of the application leaves that the pace may take, read from the window: its count is
 * the service's own, so it needs less margin than a mark guessed from waits (95 % gave the import 0.92 of it).
 */
const MARGIN_UNDER_WINDOW = 0.97;

/** How fast a chunk lets its rows go. Why and how: docs/catalogue.md, "The import, end to end", step 5. */
export class RowPace {
  private rowsPerSecond: number;
  private readonly slotMs: number;
  private readonly maxRowsPerSecond: number;
  private readonly waiting: Array<(letGoAt: number) => void> = [];
  /** Rows the pace owes: one at once, then the pace's share of each tick. */
  private owed = 1;
  private tickAt = Date.now();
  private ticking = false;
  private lastCutAt: number;
  /** The pace the budget was last found spent at. */
  private spentAt: number | undefined;
  /** When each row let go and not started yet was let go. */
  private readonly queued: number[] = [];
  /** When the rows started lately started, and how long they waited. */
  private readonly starts: Array<{ at: number; waited: number }> = [];
  private readonly firstAt = Date.now();
  private readonly heldUpAfterMs: number;
  private readonly carried: boolean;
  private readonly heldUpSpendsNothing: boolean;
  private readonly leavesMargin: boolean;
  /**
   * The least wait of a row not held up since the pace began: a queue standing for the last seconds cannot raise it.
   */
  private leastWait = Number.POSITIVE_INFINITY;
  private readonly readsWindow: boolean;
  private readonly requestsPerSecond: number;
  /** Requests a second the rest of the application sends, from the service's window; unknown until read twice. */
  private othersPerSecond: number | undefined;
  private lastWindow: { at: number; used: number; resetAt: number; rows: number } | undefined;
  private rowsStarted = 0;

  /** `from`: the pace the chunk before ended at, so each chunk does not feel for the budget afresh. */
  constructor(requestsPerMinute: number | undefined, from?: CataloguePace, ways: Partial<PaceWays> = {}) {
    this.carried = ways.carried ?? true;
    this.heldUpSpendsNothing = ways.heldUpSpendsNothing ?? true;
    this.leavesMargin = ways.leavesMargin ?? true;
    this.readsWindow = ways.readsWindow ?? true;
    this.heldUpAfterMs = this.carried ? HELD_UP_AFTER_MS_CARRIED : HELD_UP_AFTER_MS;
    const budget = requestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE;
    this.requestsPerSecond = budget / 60;
    this.slotMs = Math.max(JUDGED_SLOT_MIN_MS, 60_000 / budget);
    this.maxRowsPerSecond = Math.max(FIRST_ROWS_PER_SECOND, budget / 60 / REQUESTS_PER_ROW);
    // Read as a rate or not at all: the chunk's input is plain JSON, which another start may have written.
    const rate = (value: unknown) =>
      typeof value === 'number' && Number.isFinite(value) && value > 0
        ? Math.min(this.maxRowsPerSecond, Math.max(MIN_ROWS_PER_SECOND, value))
        : undefined;
    this.rowsPerSecond = rate(from?.rowsPerSecond) ?? FIRST_ROWS_PER_SECOND;
    const spentAt = rate(from?.spent?.rowsPerSecond);
    const at = from?.spent?.at;
    this.spentAt = spentAt !== undefined && typeof at === 'number' && Number.isFinite(at) ? spentAt : undefined;
    this.lastCutAt = this.spentAt === undefined ? Number.NEGATIVE_INFINITY : at!;
  }

  get state(): CataloguePace {
    const { rowsPerSecond, spentAt, lastCutAt } = this;
    return { rowsPerSecond, ...(spentAt === undefined ? {} : { spent: { rowsPerSecond: spentAt, at: lastCutAt } }) };
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

  /** `queuedMs` unknown when it failed; a held-up row keeps its own `letGoAt`, so it stops holding the others back. */
  started(letGoAt: number, queuedMs: number | undefined): void {
    const at = this.queued.indexOf(letGoAt);
    if (at >= 0) this.queued.splice(at, 1);
    if (queuedMs === undefined) return;
    this.rowsStarted++;
    const now = Date.now();
    this.starts.push({ at: now, waited: queuedMs });
    while (this.starts[0]!.at < now - PICKUP_OVER_MS) this.starts.shift();
    // A row held up elsewhere waited for a worker killed with its task, not for the budget. Cut for it, the pace would
    // fall to what got through while no worker ran (next to nothing) and creep back for the next 30 s.
    const heldUp = queuedMs >= this.heldUpAfterMs;
    if (this.heldUpSpendsNothing && heldUp) return;
    if (!heldUp) this.leastWait = Math.min(this.leastWait, queuedMs);
    // The shortest wait lately moves up with a queue that stands: every row waits about a slot, and none looks spent.
    const pickup = this.leavesMargin ? this.leastWait : Math.min(...this.starts.map((s) => s.waited));
    const slots = (queuedMs - pickup) / this.slotMs;
    const spentAfterSlots = this.leavesMargin
      ? Math.max(MARGIN_SPENT_AFTER_SLOTS, (SPENT_AFTER_SLOTS * JUDGED_SLOT_MIN_MS) / this.slotMs)
      : SPENT_AFTER_SLOTS;
    if (slots <= spentAfterSlots || now - this.lastCutAt < CUT_AT_MOST_EVERY_MS) return;
    this.lastCutAt = now;
    if (this.leavesMargin) {
      // The pace asked for is what spent the budget: what got through lags it by the queue the import itself stood.
      this.spentAt = this.rowsPerSecond;
    } else {
      // Over less than a tick, what got through says nothing yet: the pace asked for is all there is to cut.
      const over = Math.min(DELIVERED_OVER_MS, now - this.firstAt);
      const delivered =
        over < TICK_MS ? this.rowsPerSecond : (this.starts.filter((s) => s.at > now - over).length * 1000) / over;
      this.spentAt = Math.min(this.rowsPerSecond, delivered);
    }
    const deep = slots >= DEEP_CUT_AFTER_SLOTS && (!this.carried || queuedMs - pickup >= DEEP_CUT_AFTER_MS_CARRIED);
    this.rowsPerSecond = Math.max(MIN_ROWS_PER_SECOND, this.spentAt * (deep ? DEEP_CUT_TO : CUT_TO));
  }

  /** The window a creation's answer carried: what the rest of the application sends since the last read. */
  windowRead(window: CatalogueItemFound['window']): void {
    if (!this.readsWindow || window === undefined) return;
    const now = Date.now();
    const used = window.limit - window.remaining;
    const read = { at: now, used, resetAt: now + window.resetSeconds * 1000, rows: this.rowsStarted };
    const last = this.lastWindow;
    if (last === undefined || Math.abs(read.resetAt - last.resetAt) > SAME_WINDOW_WITHIN_MS || used < last.used) {
      this.lastWindow = read;
      return;
    }
    if (now - last.at < WINDOW_READ_OVER_MS) return;
    const mine = (read.rows - last.rows) * REQUESTS_PER_ROW;
    const others = Math.max(0, ((used - last.used - mine) * 1000) / (now - last.at));
    this.othersPerSecond = this.othersPerSecond === undefined ? others : (this.othersPerSecond + others) / 2;
    this.lastWindow = read;
    this.rowsPerSecond = Math.min(this.rowsPerSecond, this.windowCeiling());
  }

  /** Under what the rest of the application leaves, as its window says; no ceiling until it has been read. */
  private windowCeiling(): number {
    if (this.othersPerSecond === undefined) return Number.POSITIVE_INFINITY;
    const left = (this.requestsPerSecond - this.othersPerSecond) / REQUESTS_PER_ROW;
    return Math.max(MIN_ROWS_PER_SECOND, MARGIN_UNDER_WINDOW * left);
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    while (this.waiting.length > 0) {
      await sleep(TICK_MS);
      const now = Date.now();
      const since = this.tickAt;
      this.tickAt = now;
      // Rows still queued: the budget is not there to spend, and nothing is owed for the time they held the others.
      if (this.queued.some((at) => now - at < this.heldUpAfterMs)) continue;
      // What a tick did not use is not saved up for a burst later (a worker restarted, rows held up).
      const earned = (this.rowsPerSecond * Math.min(now - since, TICK_MS)) / 1000;
      this.owed = Math.min(this.owed + earned, Math.max(1, this.rowsPerSecond) + (this.carried ? 1 : 0));
      while (this.owed >= 1 && this.waiting.length > 0) {
        this.owed -= 1;
        this.queued.push(now);
        this.waiting.shift()!(now);
      }
      // Rows left waiting: the pace, not the rows in flight, holds the import back, so there may be budget for more.
      if (this.waiting.length > 0 && now - this.lastCutAt >= TICK_MS) this.rise(now);
    }
    this.ticking = false;
  }

  private rise(now: number): void {
    const forgotten = now - this.lastCutAt > SPENT_FORGOTTEN_AFTER_MS;
    if (forgotten && !this.leavesMargin) this.spentAt = undefined;
    const far = this.spentAt === undefined || this.rowsPerSecond < CUT_TO * this.spentAt;
    let most = this.maxRowsPerSecond;
    // Under the mark while it is fresh; a mark long past is felt beyond, a little a tick (its tills may have gone).
    if (this.leavesMargin && this.spentAt !== undefined && !forgotten)
      most = Math.min(most, MARGIN_UNDER_SPENT * this.spentAt);
    most = Math.min(most, this.windowCeiling());
    const risen = this.rowsPerSecond * (1 + (far ? FIRST_RISE : RISE));
    this.rowsPerSecond = Math.max(this.rowsPerSecond, Math.min(most, risen));
  }
}

/** Each way true for a chunk started now, false in one started before its patch (docs/catalogue.md). */
export interface PaceWays {
  carried: boolean;
  heldUpSpendsNothing: boolean;
  leavesMargin: boolean;
  readsWindow: boolean;
}

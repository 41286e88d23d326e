import { sleep } from '@temporalio/workflow';
import type { CatalogueItemFound } from '../activities/catalogue.js';
import { CATALOGUE_DEFAULT_REQUESTS_PER_MINUTE, type CataloguePace } from '../src/contracts/catalogue-import.js';

/** Rows are let go on ticks: a workflow timer fires on the server's whole seconds, however short it is asked to be. */
const TICK_MS = 1_000;
/**
 * A tick is always a little late (the timer, then its workflow task's queue and run), more so on a busy worker: up to
 * this long it earns what its time was worth. Past it no worker ran the chunk, and what it missed is no burst to send.
 */
const TICK_EARNS_AT_MOST_MS = 2 * TICK_MS;
/**
 * The share of what the rest of the application leaves that the import takes. The rest's rate is read a few hundredths
 * low (its requests between two reads, each read a moment old), and what is left keeps Temporal's limiter (a bucket of
 * one second's worth) from standing empty, so a till's sale seldom waits a whole slot: at 97 % the import took all the
 * room a till left, and half the till's sales waited for a slot (docs/benchmarks.md).
 */
export const SHARE_OF_LEFT = 0.95;
/** A row is a creation and a registration: the pace is in rows, the budget in requests. */
const REQUESTS_PER_ROW = 2;
/** Never slower than a row a minute: an import the tills leave nothing still ends, and costs them next to nothing. */
const MIN_ROWS_PER_SECOND = 1 / 60;
/**
 * Two reads of the window at least this far apart give the rest's rate: over less, the answers' whole counts and the
 * import's registrations (sent about a slot after their creations) are most of the difference.
 */
const WINDOW_READ_OVER_MS = 5_000;
/**
 * A creation that waited longer than this for Temporal's limiter found a queue before it: its bucket holds a second's
 * worth, so a wait behind a till's sale or two is shorter.
 */
const QUEUE_STANDS_AFTER_MS = 1_000;
/** Reset times read a whole second apart are one window's (the header is in whole seconds). */
const SAME_WINDOW_WITHIN_MS = 1_500;

type Window = NonNullable<CatalogueItemFound['window']>;

/**
 * How fast a chunk lets its rows go: a share of the budget the rest of the application leaves, as the service's
 * window counts it. Why and how: docs/catalogue.md, "The import, end to end", step 5.
 */
export class RowPace {
  private readonly requestsPerSecond: number;
  /** Requests a second the rest of the application sends; none until the window says otherwise. */
  private othersPerSecond: number;
  /** Whether that rate was ever read (here or by the chunk before): the first reading is taken whole, not averaged. */
  private othersRead: boolean;
  private readonly waiting: Array<() => void> = [];
  /** Rows the pace owes: one at once, then the pace's share of each tick. */
  private owed = 1;
  private tickAt = Date.now();
  private ticking = false;
  /** The import's requests the service has counted, as far as the pace knows. */
  private mine = 0;
  private lastRead: { at: number; used: number; resetAt: number; mine: number } | undefined;

  /** `from`: the state the chunk before it ended with, so each chunk does not learn the rest's rate afresh. */
  constructor(requestsPerMinute: number | undefined, from?: CataloguePace) {
    this.requestsPerSecond = (requestsPerMinute ?? CATALOGUE_DEFAULT_REQUESTS_PER_MINUTE) / 60;
    // Read as a rate or not at all: the chunk's input is plain JSON, which another start (or version) may have written.
    const others = from?.othersPerSecond;
    this.othersRead = typeof others === 'number' && Number.isFinite(others) && others >= 0;
    this.othersPerSecond = this.othersRead ? Math.min(others!, this.requestsPerSecond) : 0;
  }

  get rowsPerSecond(): number {
    const left = (this.requestsPerSecond - this.othersPerSecond) / REQUESTS_PER_ROW;
    return Math.max(MIN_ROWS_PER_SECOND, SHARE_OF_LEFT * left);
  }

  get state(): CataloguePace {
    return { rowsPerSecond: this.rowsPerSecond, ...(this.othersRead ? { othersPerSecond: this.othersPerSecond } : {}) };
  }

  /** Waits for the row's turn. */
  turn(): Promise<void> {
    if (this.owed >= 1 && this.waiting.length === 0) {
      this.owed -= 1;
      return Promise.resolve();
    }
    const mine = new Promise<void>((resolve) => this.waiting.push(resolve));
    if (!this.ticking) void this.tick();
    return mine;
  }

  /**
   * The import's `requests` sent since the last call, and the window the latest answer carried: the requests it counted
   * between two reads, less the import's own, are the rest of the application's. `queuedMs`: how long the creation
   * waited for Temporal's limiter.
   */
  counted(requests: number, window: Window | undefined, queuedMs?: number): void {
    this.mine += requests;
    // A queue stands before the limiter, which every till's sale waits behind: the next tick lets no row go, and each
    // such wait puts it off again until the queue is gone.
    if (queuedMs !== undefined && queuedMs > QUEUE_STANDS_AFTER_MS)
      this.owed = Math.min(this.owed, -this.rowsPerSecond);
    if (window === undefined) return;
    const now = Date.now();
    const used = window.limit - window.remaining;
    const read = { at: now, used, resetAt: now + window.resetSeconds * 1000, mine: this.mine };
    const last = this.lastRead;
    if (last === undefined || Math.abs(read.resetAt - last.resetAt) > SAME_WINDOW_WITHIN_MS || used < last.used) {
      this.lastRead = read;
      return;
    }
    if (now - last.at < WINDOW_READ_OVER_MS) return;
    const others = ((used - last.used - (read.mine - last.mine)) * 1000) / (now - last.at);
    // Averaged with the reads before, and floored only after: floored one by one, the reads of an import alone (the
    // rest sending nothing, each read a little off either way) would add up to a rest that is not there.
    const averaged = this.othersRead ? (this.othersPerSecond + others) / 2 : others;
    this.othersPerSecond = Math.min(this.requestsPerSecond, Math.max(0, averaged));
    this.othersRead = true;
    this.lastRead = read;
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    while (this.waiting.length > 0) {
      await sleep(TICK_MS);
      const now = Date.now();
      const earned = (this.rowsPerSecond * Math.min(now - this.tickAt, TICK_EARNS_AT_MOST_MS)) / 1000;
      this.tickAt = now;
      // The part of a row a tick earns is kept for the next, but nothing more than a row is saved up.
      this.owed = Math.min(this.owed + earned, Math.max(1, this.rowsPerSecond) + 1);
      while (this.owed >= 1 && this.waiting.length > 0) {
        this.owed -= 1;
        this.waiting.shift()!();
      }
    }
    this.ticking = false;
  }
}

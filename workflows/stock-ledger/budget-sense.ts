/** A movement that waited this long in the queue before it started was behind other work: the budget is contended. */
const CONTENDED_AFTER_MS = 1000;

/**
 * Whether the application's budget is contended, as the ledger sees it: from how long its own movements waited in
 * the compliance queue before a worker started them (the queue is paced to the budget, so work waits there only when
 * the budget is spent), and from movements not started at all before their deadline. What it saw goes stale after a
 * max delay without a movement: a quiet ledger starts again as if the budget were idle.
 */
export class BudgetSense {
  private seenAt = Number.NEGATIVE_INFINITY;
  private queued = 0;

  /** A movement's attempt waited `queuedMs` before it started. */
  started(queuedMs: number, now: number): void {
    this.queued = queuedMs;
    this.seenAt = now;
  }

  /** A movement's deadline passed before any worker started it. */
  notStarted(waitedMs: number, now: number): void {
    this.queued = Math.max(waitedMs, CONTENDED_AFTER_MS);
    this.seenAt = now;
  }

  contended(now: number, staleAfterMs: number): boolean {
    return now - this.seenAt <= staleAfterMs && this.queued >= CONTENDED_AFTER_MS;
  }

  /** How long a movement sent now with the tills should be expected to wait: the last wait seen. */
  expectedWaitMs(): number {
    return this.queued;
  }
}

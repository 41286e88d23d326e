/** A movement that waited this long in the queue before it started was behind other work: the budget is contended. */
const CONTENDED_AFTER_MS = 1000;

/**
 * Whether the budget is contended, from how long the ledger's movements waited in the queue (paced to the budget)
 * or that they did not start before their deadline. Stale after a max delay: a quiet ledger assumes an idle budget.
 */
export class BudgetSense {
  private seenAt = Number.NEGATIVE_INFINITY;
  private queued = 0;

  started(queuedMs: number, now: number): void {
    this.queued = queuedMs;
    this.seenAt = now;
  }

  notStarted(waitedMs: number, now: number): void {
    this.queued = Math.max(waitedMs, CONTENDED_AFTER_MS);
    this.seenAt = now;
  }

  contended(now: number, staleAfterMs: number): boolean {
    return now - this.seenAt <= staleAfterMs && this.queued >= CONTENDED_AFTER_MS;
  }

  expectedWaitMs(): number {
    return this.queued;
  }
}

/**
 * The service's own account of the rate budget, kept from the `X-RateLimit-*` headers of every answer. The
 * service counts every request of the application, from every worker and any other client, so this is a
 * fleet-wide view no local counter can give: once it says the window is spent, requests wait for the reset
 * instead of drawing 429s, and while it says requests are left none is held back by a fixed safety margin.
 */
import { parseRateLimit, parseRetryAfter } from './rate-limit.js';

/** What the gate reads of an answer: its status and headers (an HttpResponse is one; the gate needs no transport). */
export interface RateLimitedAnswer {
  status: number;
  headers: Record<string, string>;
}

export interface RateLimitGateOptions {
  /** A request finding the window spent waits for its reset when it is at most this far away (default 0: never). */
  holdUpToMs?: number;
  now?: () => number;
}

export class RateLimitGate {
  /** Requests the service said were left, and when its window resets (epoch ms); unknown until an answer tells. */
  private remaining: number | undefined;
  private resetAtMs = 0;
  /** The earliest the current window can reset, by the same answers. */
  private earliestResetMs = 0;
  /** Sent by this process and not answered yet: the service counts them, its last answer did not. */
  private inFlight = 0;

  readonly holdUpToMs: number;
  private readonly now: () => number;

  constructor(options: RateLimitGateOptions = {}) {
    this.holdUpToMs = options.holdUpToMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  /**
   * Takes a request in (returns undefined, and counts it in flight until `settle`) or says how many ms remain
   * until the window resets, when what the service said is left is already taken by requests in flight.
   */
  admit(): number | undefined {
    const now = this.now();
    if (this.remaining !== undefined && now < this.resetAtMs && this.remaining - this.inFlight <= 0) {
      return this.resetAtMs - now;
    }
    this.inFlight++;
    return undefined;
  }

  /** The admitted request ended, with the service's answer when one came. */
  settle(response: RateLimitedAnswer | undefined): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (!response) return;
    const now = this.now();
    const info = parseRateLimit(response.headers);
    const retryAfter = response.status === 429 ? parseRetryAfter(response.headers) : undefined;
    const resetSeconds = retryAfter ?? info.resetSeconds;
    const remaining = response.status === 429 ? 0 : info.remaining;
    if (remaining === undefined || resetSeconds === undefined) return;
    // Whole seconds, rounded up (C43): the reset lies in (now + reset - 1 s, now + reset s]. Answers at different
    // instants of one window narrow that down to the millisecond, so nothing waits up to a second too long.
    const earliest = now + (resetSeconds - 1) * 1000;
    const latest = now + resetSeconds * 1000;
    if (
      this.remaining !== undefined &&
      now < this.resetAtMs &&
      earliest < this.resetAtMs &&
      latest > this.earliestResetMs
    ) {
      // The same window: answers overtake each other, so the lowest count left is the latest.
      this.remaining = Math.min(this.remaining, remaining);
      this.resetAtMs = Math.min(this.resetAtMs, latest);
      this.earliestResetMs = Math.max(this.earliestResetMs, earliest);
    } else {
      this.remaining = remaining;
      this.resetAtMs = latest;
      this.earliestResetMs = earliest;
    }
  }

  /** What the gate believes now, for metrics and tests. */
  snapshot(): { remaining: number | undefined; resetAtMs: number; inFlight: number } {
    return { remaining: this.remaining, resetAtMs: this.resetAtMs, inFlight: this.inFlight };
  }
}

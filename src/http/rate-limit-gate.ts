// The service's `X-RateLimit-*` headers count every request of the application, from every client: once they say
// the window is spent, requests wait for the reset.
import { SERVICE_DELAY_BOUNDS, parseRateLimit, parseRetryAfter } from './rate-limit.js';

const MAX_RESET_MS = SERVICE_DELAY_BOUNDS.rateLimitResetSeconds * 1000;
const WINDOW_MS = 60_000;
/**
 * A request reaches the service some time after it leaves the gate, and not always the same time: requests sent 60 s
 * apart can arrive 59.5 s apart. So this process counts its sends over a longer window, and no 60 s at the service
 * holds more than the limit while arrivals vary by up to this much. It costs a 61st of the budget only where the
 * process would otherwise run at the limit itself.
 */
export const DELIVERY_SPREAD_MS = 1_000;
const COUNTED_MS = WINDOW_MS + DELIVERY_SPREAD_MS;

export class RateLimitGate {
  private remaining: number | undefined;
  /** When the window resets, at the latest and at the earliest (epoch ms). */
  private resetAtMs = 0;
  private earliestResetMs = 0;
  /** Sent and not answered yet: the service counts them, its last answer did not. */
  private inFlight = 0;
  /** When this process sent its requests of the last window, oldest first. */
  private readonly sent: number[] = [];
  private perWindow: number | undefined;

  readonly holdUpToMs: number;
  private readonly now: () => number;

  /** `holdUpToMs`: a request finding the window spent waits for a reset at most this far away (default 0: never). */
  constructor(options: { holdUpToMs?: number; perMinute?: number; now?: () => number } = {}) {
    const hold = options.holdUpToMs ?? 0;
    this.holdUpToMs = Number.isNaN(hold) ? 0 : Math.min(MAX_RESET_MS, Math.max(0, hold));
    this.now = options.now ?? Date.now;
    this.limitTo(options.perMinute);
  }

  /**
   * At most this many requests of this process in any 60 s at the service (a sliding window, DELIVERY_SPREAD_MS
   * wider here): docs/contract-assumptions.md, C43.
   */
  limitTo(perMinute: number | undefined): void {
    this.perWindow = perMinute !== undefined && perMinute > 0 ? Math.floor(perMinute) : undefined;
  }

  /** Undefined: the request is in flight until `settle`; otherwise the ms until the spent window resets. */
  admit(): number | undefined {
    const now = this.now();
    // A reset further than one window away can only follow a clock set back: believe one window from now.
    this.resetAtMs = Math.min(this.resetAtMs, now + MAX_RESET_MS);
    this.earliestResetMs = Math.min(this.earliestResetMs, this.resetAtMs);
    if (this.remaining !== undefined && now < this.resetAtMs && this.remaining - this.inFlight <= 0)
      return this.resetAtMs - now;
    if (this.perWindow !== undefined) {
      while (this.sent.length > 0 && this.sent[0]! <= now - COUNTED_MS) this.sent.shift();
      if (this.sent.length >= this.perWindow)
        return Math.max(1, this.sent[this.sent.length - this.perWindow]! + COUNTED_MS - now);
      this.sent.push(now);
    }
    this.inFlight++;
    return undefined;
  }

  settle(response: { status: number; headers: Record<string, string> } | undefined): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (!response) return;
    const now = this.now();
    const info = parseRateLimit(response.headers);
    const retryAfter = response.status === 429 ? parseRetryAfter(response.headers) : undefined;
    // Retry-After is bounded more loosely (for outages), but a 429's speaks of this window, which ends within 60 s.
    const asked = retryAfter ?? info.resetSeconds;
    const resetSeconds = asked === undefined ? undefined : Math.min(asked, SERVICE_DELAY_BOUNDS.rateLimitResetSeconds);
    const remaining = response.status === 429 ? 0 : info.remaining;
    if (remaining === undefined || resetSeconds === undefined) return;
    // Whole seconds, rounded up (C43): the reset lies in (now + reset - 1 s, now + reset s]. Answers at different
    // instants of one window narrow that down to the millisecond, so nothing waits up to a second too long.
    const earliest = now + (resetSeconds - 1) * 1000;
    const latest = now + resetSeconds * 1000;
    const before = this.remaining;
    if (before !== undefined && now < this.resetAtMs && earliest < this.resetAtMs && latest > this.earliestResetMs) {
      // The same window: answers overtake each other, so the lowest count left is the latest.
      this.remaining = Math.min(before, remaining);
      this.resetAtMs = Math.min(this.resetAtMs, latest);
      this.earliestResetMs = Math.max(this.earliestResetMs, earliest);
    } else {
      this.remaining = remaining;
      this.resetAtMs = latest;
      this.earliestResetMs = earliest;
    }
  }
}

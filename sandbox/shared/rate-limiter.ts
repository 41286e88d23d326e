export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends, rounded up; at least 1 while a window is open. */
  resetSeconds: number;
  /** 0 when allowed. */
  retryAfterSeconds: number;
}

interface Window {
  startedAt: number;
  count: number;
}

/**
 * Fixed windows per key (contract decision C43): a window starts with the first request counted in
 * it and lasts `windowMs`; refused requests are not counted.
 */
export class FixedWindowRateLimiter {
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly windows = new Map<string, Window>();

  constructor(options: { windowMs: number; now?: () => number }) {
    if (!Number.isFinite(options.windowMs) || options.windowMs <= 0) {
      throw new RangeError(`windowMs must be a positive number of milliseconds, got ${options.windowMs}`);
    }
    this.windowMs = options.windowMs;
    this.now = options.now ?? Date.now;
  }

  take(key: string, limit: number): RateDecision {
    if (!Number.isInteger(limit) || limit < 0) {
      throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
    }
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now >= window.startedAt + this.windowMs) {
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    const msLeft = window.startedAt + this.windowMs - now;
    const resetSeconds = Math.max(1, Math.ceil(msLeft / 1000));
    if (window.count >= limit) {
      // A refused request must not open a window on its own, or it would push the reset forward.
      if (window.count === 0) this.windows.delete(key);
      return { allowed: false, limit, remaining: 0, resetSeconds, retryAfterSeconds: resetSeconds };
    }
    window.count += 1;
    return { allowed: true, limit, remaining: limit - window.count, resetSeconds, retryAfterSeconds: 0 };
  }

  reset(): void {
    this.windows.clear();
  }
}

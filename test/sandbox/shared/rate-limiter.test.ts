import { describe, expect, it } from 'vitest';
import { FixedWindowRateLimiter } from '../../../sandbox/shared/rate-limiter.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('FixedWindowRateLimiter', () => {
  it('allows `limit` requests per window and counts down remaining', () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter({ windowMs: 60_000, now: time.now });
    const remaining = [1, 2, 3].map(() => limiter.take('app', 3));
    expect(remaining.map((d) => [d.allowed, d.remaining, d.limit, d.retryAfterSeconds])).toEqual([
      [true, 2, 3, 0],
      [true, 1, 3, 0],
      [true, 0, 3, 0],
    ]);
    const refused = limiter.take('app', 3);
    expect(refused).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 60, retryAfterSeconds: 60 });
  });

  it('starts the window at the first request and rounds reset seconds up', () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter({ windowMs: 60_000, now: time.now });
    expect(limiter.take('app', 2).resetSeconds).toBe(60);
    time.advance(1_500); // 58.5 s left
    expect(limiter.take('app', 2).resetSeconds).toBe(59);
    time.advance(58_000); // 0.5 s left
    const refused = limiter.take('app', 2);
    expect(refused.allowed).toBe(false);
    expect(refused.resetSeconds).toBe(1);
    expect(refused.retryAfterSeconds).toBe(1);
  });

  it('opens a fresh window exactly when the old one ends', () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter({ windowMs: 10_000, now: time.now });
    limiter.take('app', 1);
    time.advance(9_999);
    expect(limiter.take('app', 1).allowed).toBe(false);
    time.advance(1);
    const fresh = limiter.take('app', 1);
    expect(fresh).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 10 });
  });

  it('does not count refused requests, so they do not extend or use up the next window', () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter({ windowMs: 10_000, now: time.now });
    limiter.take('app', 2);
    limiter.take('app', 2);
    for (let i = 0; i < 5; i++) expect(limiter.take('app', 2).allowed).toBe(false);
    time.advance(10_000);
    expect(limiter.take('app', 2).remaining).toBe(1);
    expect(limiter.take('app', 2).remaining).toBe(0);
  });

  it('keeps separate windows per key', () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter({ windowMs: 10_000, now: time.now });
    limiter.take('a', 1);
    time.advance(4_000);
    expect(limiter.take('a', 1).allowed).toBe(false);
    const b = limiter.take('b', 1);
    expect(b).toMatchObject({ allowed: true, resetSeconds: 10 });
  });

  it('refuses everything with limit 0 without opening a window', () => {
    const time = clock();
    const limiter = new FixedWindowRateLimiter({ windowMs: 10_000, now: time.now });
    expect(limiter.take('a', 0)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 10 });
    time.advance(5_000);
    expect(limiter.take('a', 0).resetSeconds).toBe(10);
  });

  it('forgets every window on reset', () => {
    const limiter = new FixedWindowRateLimiter({ windowMs: 10_000, now: clock().now });
    limiter.take('a', 1);
    limiter.reset();
    expect(limiter.take('a', 1).allowed).toBe(true);
  });

  it('rejects a bad window or limit with the setting named', () => {
    expect(() => new FixedWindowRateLimiter({ windowMs: 0 })).toThrow(/windowMs/);
    const limiter = new FixedWindowRateLimiter({ windowMs: 1000 });
    expect(() => limiter.take('a', -1)).toThrow(/limit/);
    expect(() => limiter.take('a', 1.5)).toThrow(/limit/);
  });
});

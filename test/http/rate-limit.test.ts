import { describe, expect, it } from 'vitest';
import { parseRateLimit, parseRetryAfter } from '../../src/http/rate-limit.js';

describe('parseRateLimit', () => {
  it('reads the three headers as integers', () => {
    expect(
      parseRateLimit({ 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '42' }),
    ).toEqual({
      limit: 120,
      remaining: 7,
      resetSeconds: 42,
    });
  });

  it('ignores malformed values instead of guessing', () => {
    expect(
      parseRateLimit({ 'x-ratelimit-limit': '12O', 'x-ratelimit-remaining': '-1', 'x-ratelimit-reset': '1.5' }),
    ).toEqual({});
  });

  it('returns nothing when the headers are absent', () => {
    expect(parseRateLimit({})).toEqual({});
  });
});

describe('parseRetryAfter', () => {
  it('reads delay seconds', () => {
    expect(parseRetryAfter({ 'retry-after': '17' })).toBe(17);
  });

  it('accepts an HTTP-date too', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Sat, 21 Nov 2026 10:00:30 GMT' }, now)).toBe(30);
  });

  it('never returns a negative delay for a date in the past', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Sat, 21 Nov 2026 09:00:00 GMT' }, now)).toBe(0);
  });

  it('ignores garbage', () => {
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
    expect(parseRetryAfter({})).toBeUndefined();
  });
});

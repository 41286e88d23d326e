import { describe, expect, it } from 'vitest';
import { SERVICE_DELAY_BOUNDS, delayClamps, parseRateLimit, parseRetryAfter } from '../../src/http/rate-limit.js';

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

  it('accepts an HTTP-date too, in its IMF and RFC 850 forms', () => {
    const now = new Date('2026-11-21T10:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Sat, 21 Nov 2026 10:00:30 GMT' }, now)).toBe(30);
    expect(parseRetryAfter({ 'retry-after': 'Saturday, 21-Nov-26 10:00:30 GMT' }, now)).toBe(30);
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

describe('bounded waits', () => {
  const now = new Date('2026-11-21T10:00:00Z');

  it('keeps the bounds the contract assumptions document', () => {
    expect(SERVICE_DELAY_BOUNDS).toEqual({ retryAfterSeconds: 300, rateLimitResetSeconds: 60 });
  });

  it('takes a huge integer Retry-After as the bound', () => {
    expect(parseRetryAfter({ 'retry-after': '99999999' })).toBe(300);
    expect(parseRetryAfter({ 'retry-after': '9'.repeat(400) })).toBe(300);
  });

  it('takes an HTTP-date far in the future as the bound', () => {
    expect(parseRetryAfter({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, now)).toBe(300);
  });

  it('keeps a Retry-After at the bound or below as sent', () => {
    expect(parseRetryAfter({ 'retry-after': '300' })).toBe(300);
    expect(parseRetryAfter({ 'retry-after': 'Sat, 21 Nov 2026 10:04:00 GMT' }, now)).toBe(240);
  });

  it('takes a huge X-RateLimit-Reset as one window', () => {
    expect(parseRateLimit({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '99999999' })).toEqual({
      remaining: 0,
      resetSeconds: 60,
    });
    expect(parseRateLimit({ 'x-ratelimit-reset': '60' })).toEqual({ resetSeconds: 60 });
  });

  it('still ignores garbage rather than reading it as a wait', () => {
    for (const raw of [
      '-5',
      '1e9',
      'Infinity',
      'NaN',
      '0x7fffffff',
      '12 34',
      'tomorrow',
      '2027-01-01',
      'Fri, soon',
      '',
    ]) {
      expect(parseRetryAfter({ 'retry-after': raw }, now)).toBeUndefined();
      expect(parseRateLimit({ 'x-ratelimit-reset': raw })).toEqual({});
    }
  });

  it('reports each header it cut down, with the value sent and the bound', () => {
    expect(delayClamps({ 'retry-after': '99999999', 'x-ratelimit-reset': '86400' }, now)).toEqual([
      { header: 'retry-after', sent: '99999999', boundSeconds: 300 },
      { header: 'x-ratelimit-reset', sent: '86400', boundSeconds: 60 },
    ]);
    expect(delayClamps({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, now)).toMatchObject([
      { header: 'retry-after', sent: 'Fri, 31 Dec 9999 23:59:59 GMT', boundSeconds: 300 },
    ]);
  });

  it('reports nothing for waits within bounds, garbage or absent headers, and shortens a long value', () => {
    expect(delayClamps({ 'retry-after': '300', 'x-ratelimit-reset': '60' }, now)).toEqual([]);
    expect(delayClamps({ 'retry-after': 'soon', 'x-ratelimit-reset': '-1' }, now)).toEqual([]);
    expect(delayClamps({}, now)).toEqual([]);
    const [clamp] = delayClamps({ 'retry-after': '9'.repeat(400) }, now);
    expect(clamp!.sent.length).toBeLessThanOrEqual(65);
  });
});

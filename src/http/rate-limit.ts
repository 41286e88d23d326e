/** `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until the window resets, not a Unix time). */
export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  resetSeconds?: number;
}

/** The longest waits a service is believed when it names one: docs/contract-assumptions.md, "Bounded waits". */
export const SERVICE_DELAY_BOUNDS = {
  retryAfterSeconds: 300,
  rateLimitResetSeconds: 60,
} as const;

/** A header whose wait was beyond its bound and was taken as the bound. */
export interface DelayClamp {
  header: 'retry-after' | 'x-ratelimit-reset';
  /** Shortened; neither header can carry a secret. */
  sent: string;
  boundSeconds: number;
}

type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function nonNegativeInteger(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  return Number.parseInt(raw, 10);
}

function rawResetSeconds(headers: HeaderBag): number | undefined {
  return nonNegativeInteger(header(headers, 'x-ratelimit-reset'));
}

const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i;

/** Integer seconds, or an HTTP-date (RFC 9110); unbounded. */
function rawRetryAfterSeconds(headers: HeaderBag, now: Date): number | undefined {
  const raw = header(headers, 'retry-after')?.trim();
  if (!raw) return undefined;
  const seconds = nonNegativeInteger(raw);
  if (seconds !== undefined) return seconds;
  // Every HTTP-date form starts with the day's name; without that check the lax Date.parse reads `-5` as a year.
  if (!HTTP_DATE_START.test(raw)) return undefined;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** Malformed values are ignored, as clients must; a reset beyond its bound is taken as the bound. */
export function parseRateLimit(headers: HeaderBag): RateLimitInfo {
  const info: RateLimitInfo = {};
  const limit = nonNegativeInteger(header(headers, 'x-ratelimit-limit'));
  const remaining = nonNegativeInteger(header(headers, 'x-ratelimit-remaining'));
  const reset = rawResetSeconds(headers);
  if (limit !== undefined) info.limit = limit;
  if (remaining !== undefined) info.remaining = remaining;
  if (reset !== undefined) info.resetSeconds = Math.min(reset, SERVICE_DELAY_BOUNDS.rateLimitResetSeconds);
  return info;
}

/** The contract promises integer seconds; an HTTP-date is honoured too. A wait beyond its bound is the bound. */
export function parseRetryAfter(headers: HeaderBag, now: Date = new Date()): number | undefined {
  const seconds = rawRetryAfterSeconds(headers, now);
  return seconds === undefined ? undefined : Math.min(seconds, SERVICE_DELAY_BOUNDS.retryAfterSeconds);
}

/** A header may be kilobytes of digits. */
const MAX_SENT_CHARS = 64;

/** The headers of an answer whose waits `parseRetryAfter` and `parseRateLimit` cut down, for the caller to log once. */
export function delayClamps(headers: HeaderBag, now: Date = new Date()): DelayClamp[] {
  const asked = [
    ['retry-after', rawRetryAfterSeconds(headers, now), SERVICE_DELAY_BOUNDS.retryAfterSeconds],
    ['x-ratelimit-reset', rawResetSeconds(headers), SERVICE_DELAY_BOUNDS.rateLimitResetSeconds],
  ] as const;
  return asked
    .filter(([, seconds, bound]) => seconds !== undefined && seconds > bound)
    .map(([name, , boundSeconds]) => {
      const sent = (header(headers, name) ?? '').trim();
      const shortened = sent.length > MAX_SENT_CHARS ? `${sent.slice(0, MAX_SENT_CHARS)}…` : sent;
      return { header: name, sent: shortened, boundSeconds };
    });
}

/** `X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until the window resets, not a Unix time). */
export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  resetSeconds?: number;
}

type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function nonNegativeInteger(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  return Number.parseInt(raw, 10);
}

const HEADERS = { limit: 'x-ratelimit-limit', remaining: 'x-ratelimit-remaining', resetSeconds: 'x-ratelimit-reset' };

/** Reads the three `X-RateLimit-*` headers; malformed values are ignored, as clients must. */
export function parseRateLimit(headers: HeaderBag): RateLimitInfo {
  const entries = Object.entries(HEADERS).map(([key, name]) => [key, nonNegativeInteger(header(headers, name))]);
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as RateLimitInfo;
}

/** `Retry-After` in seconds: the document promises integer seconds; an HTTP-date (RFC 9110) is honoured too. */
export function parseRetryAfter(headers: HeaderBag, now: Date = new Date()): number | undefined {
  const raw = header(headers, 'retry-after')?.trim();
  if (!raw) return undefined;
  const seconds = nonNegativeInteger(raw);
  if (seconds !== undefined) return seconds;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

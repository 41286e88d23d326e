import { createHmac } from 'node:crypto';

interface SignRequestInput {
  method: string;
  /** The request path as sent (with the query string only when the service signs it, A11). */
  path: string;
  /** The exact body bytes sent; '' (or absent) when there is none, as for GET. */
  body?: string;
  /** Unix time in milliseconds, the same value sent in X-Timestamp. */
  timestamp: number;
  clientSecret: string;
}

/** Hex HMAC-SHA256 of uppercase method + path + exact body + timestamp, without separators. */
export function signRequest({ method, path, body, timestamp, clientSecret }: SignRequestInput): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError('timestamp must be a non-negative integer number of milliseconds');
  }
  const message = `${method.toUpperCase()}${path}${body ?? ''}${timestamp}`;
  return createHmac('sha256', clientSecret).update(message, 'utf8').digest('hex');
}

/**
 * Both signature headers for one attempt; the timestamp is taken now, so every attempt signs afresh. The path alone is
 * signed (A11, "request path"), or with `signQuery` path and query.
 */
export function signatureHeaders(input: {
  method: string;
  target: string;
  clientSecret: string;
  signQuery: boolean;
  now: () => number;
}): Record<string, string> {
  const timestamp = Math.floor(input.now());
  const path = input.signQuery ? input.target : input.target.replace(/\?.*/s, '');
  return { 'X-Timestamp': String(timestamp), 'X-Signature': signRequest({ ...input, path, timestamp }) };
}

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

/** The signed message: uppercase method + path + exact body + timestamp, without separators. */
export function signedMessage({ method, path, body, timestamp }: Omit<SignRequestInput, 'clientSecret'>): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError('timestamp must be a non-negative integer number of milliseconds');
  }
  return `${method.toUpperCase()}${path}${body ?? ''}${timestamp}`;
}

export function signRequest(input: SignRequestInput): string {
  return createHmac('sha256', input.clientSecret).update(signedMessage(input), 'utf8').digest('hex');
}

/** What of a request target is signed: the path alone (A11, "request path"), or with `signQuery` path and query. */
export function signedPath(target: string, signQuery: boolean): string {
  if (signQuery) return target;
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/** Both signature headers for one attempt; the timestamp is taken now, so every attempt signs afresh. */
export function signatureHeaders(input: {
  method: string;
  target: string;
  body?: string;
  clientSecret: string;
  signQuery: boolean;
  now: () => number;
}): Record<string, string> {
  const timestamp = Math.floor(input.now());
  const signature = signRequest({ ...input, path: signedPath(input.target, input.signQuery), timestamp });
  return { 'X-Timestamp': String(timestamp), 'X-Signature': signature };
}

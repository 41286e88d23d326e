import { createHmac } from 'node:crypto';

/** Header names of the optional request signature. */
const SIGNATURE_HEADER = 'X-Signature';
const TIMESTAMP_HEADER = 'X-Timestamp';

export interface SignRequestInput {
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

/** Hex HMAC-SHA256 of the signed message under the client secret. */
export function signRequest(input: SignRequestInput): string {
  return createHmac('sha256', input.clientSecret).update(signedMessage(input), 'utf8').digest('hex');
}

/**
 * The part of a request target that is signed: by default the path without the query string (A11,
 * the literal reading of "request path"); with `signQuery`, path and query as sent.
 */
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
  const signature = signRequest({
    method: input.method,
    path: signedPath(input.target, input.signQuery),
    body: input.body ?? '',
    timestamp,
    clientSecret: input.clientSecret,
  });
  return { [TIMESTAMP_HEADER]: String(timestamp), [SIGNATURE_HEADER]: signature };
}

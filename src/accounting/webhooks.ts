import { createHmac, timingSafeEqual } from 'node:crypto';
import { assertCredential } from '../config/credentials.js';

/**
 * Inbound webhook verification for `whsec_` secrets, per Standard Webhooks v1 (contract decision A14):
 * signed content `{webhook-id}.{webhook-timestamp}.{raw body}`, HMAC-SHA256 keyed with the base64
 * decoding of the secret after its prefix, sent as a space-separated list of `v1,<base64>` signatures.
 */

const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookFailureReason =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_signature'
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookFailureReason,
    message: string,
  ) {
    super(message);
  }
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

/** Longest prefixes first, so `whsec_development_` is not mistaken for `whsec_` + base64. */
const SECRET_PREFIXES = ['whsec_development_', 'whsec_production_', 'whsec_'];

function signingKey(secret: string): Buffer {
  assertCredential('accountingWebhookSecret', 'ACCOUNTING_WEBHOOK_SECRET', secret);
  const prefix = SECRET_PREFIXES.find((p) => secret.startsWith(p)) ?? '';
  return Buffer.from(secret.slice(prefix.length), 'base64');
}

function toBuffer(body: string | Uint8Array): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
}

function digest(key: Buffer, id: string, timestamp: string, rawBody: Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(rawBody).digest();
}

export interface SignWebhookInput {
  secret: string;
  id: string;
  /** Unix time in seconds. */
  timestamp: number;
  rawBody: string | Uint8Array;
}

/** The `v1,<base64>` signature of one message (for tests and the sandbox's own deliveries). */
export function signWebhook({ secret, id, timestamp, rawBody }: SignWebhookInput): string {
  return `v1,${digest(signingKey(secret), id, String(timestamp), toBuffer(rawBody)).toString('base64')}`;
}

/** The three headers of a signed delivery. */
export function webhookHeaders(input: SignWebhookInput): Record<string, string> {
  return {
    [WEBHOOK_HEADERS.id]: input.id,
    [WEBHOOK_HEADERS.timestamp]: String(input.timestamp),
    [WEBHOOK_HEADERS.signature]: signWebhook(input),
  };
}

export interface VerifyWebhookInput {
  secret: string;
  headers: HeaderBag;
  /** The body exactly as received: verification is over bytes, never a re-serialised object. */
  rawBody: string | Uint8Array;
  now?: Date;
  toleranceSeconds?: number;
}

/** Verifies a delivery and returns its parsed JSON payload, or throws `WebhookVerificationError`. */
export function verifyWebhook(input: VerifyWebhookInput): unknown {
  const id = header(input.headers, WEBHOOK_HEADERS.id);
  const timestamp = header(input.headers, WEBHOOK_HEADERS.timestamp);
  const signatures = header(input.headers, WEBHOOK_HEADERS.signature);
  const missing = [
    [WEBHOOK_HEADERS.id, id],
    [WEBHOOK_HEADERS.timestamp, timestamp],
    [WEBHOOK_HEADERS.signature, signatures],
  ]
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing_headers', `Webhook is missing header(s): ${missing.join(', ')}`);
  }

  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix time in seconds');
  }
  const tolerance = input.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const age = nowSeconds - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError('timestamp_too_old', 'Webhook timestamp is too old');
  if (age < -tolerance) throw new WebhookVerificationError('timestamp_too_new', 'Webhook timestamp is in the future');

  const rawBody = toBuffer(input.rawBody);
  const expected = digest(signingKey(input.secret), id, timestamp, rawBody);
  const matched = signatures.split(' ').some((entry) => {
    const comma = entry.indexOf(',');
    if (comma === -1 || entry.slice(0, comma) !== 'v1') return false;
    const candidate = Buffer.from(entry.slice(comma + 1), 'base64');
    // timingSafeEqual throws on different lengths; a truncated signature is simply wrong.
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
  if (!matched) throw new WebhookVerificationError('invalid_signature', 'No webhook signature matches');

  try {
    return JSON.parse(rawBody.toString('utf8')) as unknown;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'Webhook body is not JSON');
  }
}

import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { assertCredential } from '../config/credentials.js';

// Standard Webhooks v1 (A14), without `standardwebhooks`' `verify`: it reads the real clock, throws one error for every
// failure (the receiver answers 401 or 400 by reason), accepts `1614265330.5`, cannot decode `whsec_development_…`.

const WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

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
  const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

/** Longest prefixes first, so `whsec_development_` is not mistaken for `whsec_` + base64. */
const SECRET_PREFIXES = ['whsec_development_', 'whsec_production_', 'whsec_'];

/** Strict UTF-8, the BOM kept (JSON does not allow one): a body that is not UTF-8 text is not a JSON payload. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

interface SignWebhookInput {
  secret: string;
  id: string;
  /** Unix time in seconds. */
  timestamp: number;
  rawBody: string | Uint8Array;
}

/** The `v1,<base64>` signature of `{id}.{timestamp}.{body}` (the purchases webhook sink's, and tests'). */
export function signWebhook({ secret, id, timestamp, rawBody }: SignWebhookInput): string {
  assertCredential('accountingWebhookSecret', 'ACCOUNTING_WEBHOOK_SECRET', secret);
  // The key is decoded here and handed over raw: the library would only strip `whsec_`.
  const prefix = SECRET_PREFIXES.find((p) => secret.startsWith(p)) ?? '';
  const signer = new Webhook(Buffer.from(secret.slice(prefix.length), 'base64'), { format: 'raw' });
  // The library signs a string or a Buffer's UTF-8 text: byte-exact for UTF-8 bodies (others are refused anyway).
  const body =
    typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  return signer.sign(id, new Date(timestamp * 1000), body);
}

export function webhookHeaders(input: SignWebhookInput): Record<string, string> {
  const [id, timestamp, signature] = WEBHOOK_HEADERS;
  return { [id]: input.id, [timestamp]: String(input.timestamp), [signature]: signWebhook(input) };
}

interface VerifyWebhookInput {
  secret: string;
  headers: HeaderBag;
  /** The body exactly as received: verification is over bytes, never a re-serialised object. */
  rawBody: string | Uint8Array;
  now?: Date;
  toleranceSeconds?: number;
}

/** Verifies a delivery and returns its parsed JSON payload, or throws `WebhookVerificationError`. */
export function verifyWebhook(input: VerifyWebhookInput): unknown {
  const [id, timestamp, signatures] = WEBHOOK_HEADERS.map((name) => header(input.headers, name));
  if (!id || !timestamp || !signatures) {
    const missing = WEBHOOK_HEADERS.filter((name) => !header(input.headers, name));
    throw new WebhookVerificationError('missing_headers', `Webhook is missing header(s): ${missing.join(', ')}`);
  }

  // No leading zeros: the signed content is the timestamp as a number (as every Standard Webhooks library writes it).
  if (!/^[1-9]\d{0,11}$/.test(timestamp)) {
    throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix time in seconds');
  }
  const tolerance = input.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const age = nowSeconds - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError('timestamp_too_old', 'Webhook timestamp is too old');
  if (age < -tolerance) throw new WebhookVerificationError('timestamp_too_new', 'Webhook timestamp is in the future');

  const ours = signWebhook({ secret: input.secret, id, timestamp: Number(timestamp), rawBody: input.rawBody });
  const expected = Buffer.from(ours.slice('v1,'.length), 'base64');
  const matched = signatures.split(' ').some((entry) => {
    if (!entry.startsWith('v1,')) return false;
    const candidate = Buffer.from(entry.slice('v1,'.length), 'base64');
    // timingSafeEqual throws on different lengths; a truncated signature is simply wrong.
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
  if (!matched) throw new WebhookVerificationError('invalid_signature', 'No webhook signature matches');

  try {
    return JSON.parse(typeof input.rawBody === 'string' ? input.rawBody : UTF8.decode(input.rawBody)) as unknown;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'Webhook body is not UTF-8 JSON');
  }
}

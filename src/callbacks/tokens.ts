/**
 * Callback URLs the worker hands to the compliance service. The service does not sign its callbacks (C46),
 * so the URL itself is the credential: it carries an HMAC that only the holder of the secret can produce, and
 * the receiver signals a workflow only for a URL minted for that workflow.
 *
 * A token is `<expiry, unix seconds in base 36>.<base64url HMAC-SHA256(k, expiry ":" workflowId)>`, where
 * k = HMAC-SHA256(secret, "etims-callback-token:v2"). The expiry is inside the MAC, so it cannot be extended.
 *
 * A minted URL must not change between attempts of one request: the service compares the body of a repeated
 * Idempotency-Key and answers a changed callback URL with 422 idempotency_key_reused (C61). So the expiry is
 * not "now + TTL": inside an activity it is anchored at the activity's FIRST scheduled time (the same on every
 * attempt, on every worker), and it is rounded up to a whole hour.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { DEFAULT_CALLBACK_TOKEN_TTL_MS } from '../config/worker.js';
import { callbackPath, PUBLIC_BASE_URL_MAX_LENGTH, WORKFLOW_ID_MAX_BYTES } from './paths.js';

/** 256 bits of key: as strong as the HMAC-SHA256 output it keys. */
const CALLBACK_SECRET_MIN_BYTES = 32;

const HOUR_MS = 3_600_000;

/** `<expiry base 36>.<43 base64url characters>`; the expiry part is at most 11 characters. */
const TOKEN = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/;

/** 'expired': authentic (minted with this secret for this workflow) but past its expiry. */
export type TokenCheck = 'valid' | 'expired' | 'invalid';

export interface CallbackUrlMinterOptions {
  /** Where the compliance service reaches the receiver, e.g. `https://hooks.example.com` (a path prefix is kept). */
  publicBaseUrl: string;
  /** At least 32 bytes; never logged or echoed. */
  secret: string;
  /** How long a minted URL verifies, from its anchor (see the module comment). Default 72 h. */
  ttlMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** Only verification: what a receiver needs, so hosts and tests can depend on less than the whole minter. */
export interface CallbackTokenVerifier {
  /** True only for a valid (authentic and unexpired) token. */
  verify(workflowId: string, token: string): boolean;
  /** Tells an expired token from a forged one; receivers without it treat every refusal as invalid. */
  check?(workflowId: string, token: string): TokenCheck;
}

/** A bad receiver setting; the message names the field and never repeats a secret. */
export class CallbackConfigError extends Error {
  override readonly name = 'CallbackConfigError';

  constructor(
    readonly field: 'publicBaseUrl' | 'secret' | 'workflowId' | 'ttlMs',
    reason: string,
  ) {
    super(`callback ${field} ${reason}`);
  }
}

export class CallbackUrlMinter implements CallbackTokenVerifier {
  readonly publicBaseUrl: string;
  readonly ttlMs: number;
  private readonly now: () => number;
  // Methods rather than stored key strings keep the secret out of `JSON.stringify(minter)` and inspection.
  private readonly sign: (message: string) => Buffer;

  constructor(options: CallbackUrlMinterOptions) {
    this.publicBaseUrl = normaliseBaseUrl(options.publicBaseUrl);
    const ttlMs = options.ttlMs ?? DEFAULT_CALLBACK_TOKEN_TTL_MS;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
      throw new CallbackConfigError('ttlMs', 'must be a positive number of milliseconds');
    }
    this.ttlMs = ttlMs;
    this.now = options.now ?? Date.now;
    const secret = options.secret;
    if (typeof secret !== 'string' || Buffer.byteLength(secret, 'utf8') < CALLBACK_SECRET_MIN_BYTES) {
      throw new CallbackConfigError(
        'secret',
        `must be at least ${CALLBACK_SECRET_MIN_BYTES} bytes; the value is not shown`,
      );
    }
    // Changing the label would invalidate every URL the service holds for running sales.
    const key = createHmac('sha256', secret).update('etims-callback-token:v2', 'utf8').digest();
    this.sign = (message) => createHmac('sha256', key).update(message, 'utf8').digest();
  }

  /**
   * The capability token for one workflow, valid until `expiresAtMs` (default: the anchor plus the TTL,
   * rounded up to a whole hour; the anchor is the current activity's first scheduled time, or now).
   */
  token(workflowId: string, expiresAtMs?: number): string {
    assertWorkflowId(workflowId);
    if (expiresAtMs !== undefined && !(Number.isFinite(expiresAtMs) && expiresAtMs > 0)) {
      throw new RangeError('expiresAtMs must be a positive epoch time in milliseconds');
    }
    const expiry = expiresAtMs === undefined ? this.defaultExpirySeconds() : Math.ceil(expiresAtMs / 1000);
    const expiryText = expiry.toString(36);
    return `${expiryText}.${this.sign(macInput(expiryText, workflowId)).toString('base64url')}`;
  }

  /**
   * `${publicBaseUrl}/callbacks/${workflowId}/${token}`, the workflow id percent-encoded as one path segment; when
   * that URL would exceed the service's limit, the compact form of paths.ts.
   */
  mint(workflowId: string): string {
    return `${this.publicBaseUrl}${callbackPath(this.publicBaseUrl.length, workflowId, this.token(workflowId))}`;
  }

  /** Constant-time check that `token` was minted for `workflowId` with this secret and has not expired. */
  verify(workflowId: string, token: string): boolean {
    return this.check(workflowId, token) === 'valid';
  }

  /** The MAC is checked first: only an authentic token is ever told apart as 'expired'. */
  check(workflowId: string, token: string): TokenCheck {
    if (typeof workflowId !== 'string' || workflowId === '' || typeof token !== 'string') return 'invalid';
    const parts = TOKEN.exec(token);
    if (!parts) return 'invalid';
    const [, expiryText = '', mac = ''] = parts;
    if (!sameText(mac, this.sign(macInput(expiryText, workflowId)).toString('base64url'))) return 'invalid';
    return this.now() < Number.parseInt(expiryText, 36) * 1000 ? 'valid' : 'expired';
  }

  /** Stable across every attempt of one activity (C61), rounded up to the hour; in seconds. */
  private defaultExpirySeconds(): number {
    const expiresAt = Math.ceil((mintAnchorMs() ?? this.now()) + this.ttlMs);
    return Math.ceil(expiresAt / HOUR_MS) * (HOUR_MS / 1000);
  }
}

/** The expiry has no ':', so the split is unambiguous. */
function macInput(expiryText: string, workflowId: string): string {
  return `${expiryText}:${workflowId}`;
}

/** Constant-time comparison; timingSafeEqual throws on unequal lengths, and a valid token's length is public. */
function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** When minting inside an activity: the time its first attempt was scheduled (the same on every retry). */
function mintAnchorMs(): number | undefined {
  try {
    const scheduled = Context.current().info.scheduledTimestampMs;
    return Number.isFinite(scheduled) && scheduled > 0 ? scheduled : undefined;
  } catch {
    return undefined; // not inside an activity
  }
}

function assertWorkflowId(workflowId: string): void {
  if (typeof workflowId !== 'string' || workflowId === '') {
    throw new CallbackConfigError('workflowId', 'must be a non-empty string');
  }
}

function normaliseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CallbackConfigError('publicBaseUrl', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CallbackConfigError('publicBaseUrl', `must use http or https (got ${url.protocol.replace(/:$/, '')})`);
  }
  // Credentials would travel to the service and appear on its Sale resource; not shown for the same reason.
  if (url.username !== '' || url.password !== '') {
    throw new CallbackConfigError('publicBaseUrl', 'must not contain a username or password; the value is not shown');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new CallbackConfigError(
      'publicBaseUrl',
      'must not have a query or fragment (the minted path is appended to it)',
    );
  }
  const normalised = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  if (normalised.length > PUBLIC_BASE_URL_MAX_LENGTH) {
    throw new CallbackConfigError(
      'publicBaseUrl',
      `must be at most ${PUBLIC_BASE_URL_MAX_LENGTH} characters, so that the callback URL of any workflow id ` +
        `(up to ${WORKFLOW_ID_MAX_BYTES} bytes) fits the service's limit`,
    );
  }
  return normalised;
}

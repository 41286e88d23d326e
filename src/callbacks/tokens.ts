// The URL is the credential; the token's format and expiry: docs/contract-assumptions.md, C46 and C63.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { DEFAULT_CALLBACK_TOKEN_TTL_MS } from '../config/worker.js';
import { callbackPath, PUBLIC_BASE_URL_MAX_LENGTH, WORKFLOW_ID_MAX_BYTES } from './paths.js';

const HOUR_MS = 3_600_000;

const TOKEN = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/;

/** Never repeats a secret. */
export class CallbackConfigError extends Error {
  override readonly name = 'CallbackConfigError';

  constructor(
    readonly field: 'publicBaseUrl' | 'secret' | 'workflowId' | 'ttlMs',
    reason: string,
  ) {
    super(`callback ${field} ${reason}`);
  }
}

export class CallbackUrlMinter {
  readonly publicBaseUrl: string;
  readonly ttlMs: number;
  private readonly now: () => number;
  // Methods rather than stored key strings keep the secret out of `JSON.stringify(minter)` and inspection.
  private readonly sign: (message: string) => Buffer;

  /** `publicBaseUrl`: where the service reaches the receiver (a path prefix is kept). */
  constructor(options: { publicBaseUrl: string; secret: string; ttlMs?: number; now?: () => number }) {
    this.publicBaseUrl = normaliseBaseUrl(options.publicBaseUrl);
    const ttlMs = options.ttlMs ?? DEFAULT_CALLBACK_TOKEN_TTL_MS;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0)
      throw new CallbackConfigError('ttlMs', 'must be a positive number of milliseconds');
    this.ttlMs = ttlMs;
    this.now = options.now ?? Date.now;
    const secret = options.secret;
    // 256 bits of key: as strong as the HMAC-SHA256 output it keys.
    if (typeof secret !== 'string' || Buffer.byteLength(secret, 'utf8') < 32)
      throw new CallbackConfigError('secret', 'must be at least 32 bytes; the value is not shown');
    // Changing the label would invalidate every URL the service holds for running sales.
    const key = createHmac('sha256', secret).update('etims-callback-token:v2', 'utf8').digest();
    this.sign = (message) => createHmac('sha256', key).update(message, 'utf8').digest();
  }

  /** Valid for the TTL from `anchorMs` (else the activity's first scheduled time, or now), to a whole hour. */
  token(workflowId: string, anchorMs?: number): string {
    if (typeof workflowId !== 'string' || workflowId === '')
      throw new CallbackConfigError('workflowId', 'must be a non-empty string');
    const expiryText = this.expirySeconds(anchorMs).toString(36);
    return `${expiryText}.${this.mac(expiryText, workflowId)}`;
  }

  mint(workflowId: string, anchorMs?: number): string {
    const token = this.token(workflowId, anchorMs);
    return `${this.publicBaseUrl}${callbackPath(this.publicBaseUrl.length, workflowId, token)}`;
  }

  /** The MAC is checked first: only an authentic token is ever told 'expired'. */
  check(workflowId: string, token: string): 'valid' | 'expired' | 'invalid' {
    if (typeof workflowId !== 'string' || workflowId === '' || typeof token !== 'string') return 'invalid';
    const parts = TOKEN.exec(token);
    if (!parts) return 'invalid';
    const [, expiryText = '', mac = ''] = parts;
    const expected = Buffer.from(this.mac(expiryText, workflowId), 'utf8');
    const given = Buffer.from(mac, 'utf8');
    // timingSafeEqual throws on unequal lengths; a valid token's length is public.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return this.now() < Number.parseInt(expiryText, 36) * 1000 ? 'valid' : 'expired';
  }

  // The expiry has no ':', so the split is unambiguous.
  private mac(expiryText: string, workflowId: string): string {
    return this.sign(`${expiryText}:${workflowId}`).toString('base64url');
  }

  private expirySeconds(anchorMs: number | undefined): number {
    const anchor = anchorMs !== undefined && Number.isFinite(anchorMs) && anchorMs > 0 ? anchorMs : mintAnchorMs();
    const expiresAt = Math.ceil((anchor ?? this.now()) + this.ttlMs);
    return Math.ceil(expiresAt / HOUR_MS) * (HOUR_MS / 1000);
  }
}

/** The same on every retry of an activity. */
function mintAnchorMs(): number | undefined {
  try {
    const scheduled = Context.current().info.scheduledTimestampMs;
    return Number.isFinite(scheduled) && scheduled > 0 ? scheduled : undefined;
  } catch {
    return undefined; // not inside an activity
  }
}

function normaliseBaseUrl(value: string): string {
  const refuse = (reason: string) => new CallbackConfigError('publicBaseUrl', reason);
  const url = URL.parse(value);
  if (!url) throw refuse('must be an absolute http or https URL');
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw refuse(`must use http or https (got ${url.protocol.replace(/:$/, '')})`);
  // Credentials would travel to the service and appear on its Sale resource; not shown for the same reason.
  if (url.username !== '' || url.password !== '')
    throw refuse('must not contain a username or password; the value is not shown');
  if (url.search !== '' || url.hash !== '')
    throw refuse('must not have a query or fragment (the minted path is appended to it)');
  const normalised = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  if (normalised.length > PUBLIC_BASE_URL_MAX_LENGTH)
    throw refuse(
      `must be at most ${PUBLIC_BASE_URL_MAX_LENGTH} characters, so that the callback URL of any workflow id ` +
        `(up to ${WORKFLOW_ID_MAX_BYTES} bytes) fits the service's limit`,
    );
  return normalised;
}

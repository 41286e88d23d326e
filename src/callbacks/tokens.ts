/**
 * Callback URLs the worker hands to the compliance service. The service does not sign its callbacks (C46),
 * so the URL itself is the credential: it carries an HMAC of the workflow id that only the holder of the
 * secret can produce, and the receiver signals a workflow only for a URL minted for that workflow.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** 256 bits of key: as strong as the HMAC-SHA256 output it keys. */
const CALLBACK_SECRET_MIN_BYTES = 32;

export interface CallbackUrlMinterOptions {
  /** Where the compliance service reaches the receiver, e.g. `https://hooks.example.com` (a path prefix is kept). */
  publicBaseUrl: string;
  /** At least 32 bytes; never logged or echoed. */
  secret: string;
}

/** Only verification: what a receiver needs, so hosts and tests can depend on less than the whole minter. */
export interface CallbackTokenVerifier {
  verify(workflowId: string, token: string): boolean;
}

/** A bad receiver setting; the message names the field and never repeats a secret. */
export class CallbackConfigError extends Error {
  override readonly name = 'CallbackConfigError';

  constructor(
    readonly field: 'publicBaseUrl' | 'secret' | 'workflowId',
    reason: string,
  ) {
    super(`callback ${field} ${reason}`);
  }
}

export class CallbackUrlMinter implements CallbackTokenVerifier {
  readonly publicBaseUrl: string;
  // A method rather than a stored key string keeps the secret out of `JSON.stringify(minter)` and inspection.
  private readonly sign: (workflowId: string) => Buffer;

  constructor(options: CallbackUrlMinterOptions) {
    this.publicBaseUrl = normaliseBaseUrl(options.publicBaseUrl);
    const secret = options.secret;
    if (typeof secret !== 'string' || Buffer.byteLength(secret, 'utf8') < CALLBACK_SECRET_MIN_BYTES) {
      throw new CallbackConfigError(
        'secret',
        `must be at least ${CALLBACK_SECRET_MIN_BYTES} bytes; the value is not shown`,
      );
    }
    this.sign = (workflowId) => createHmac('sha256', secret).update(workflowId, 'utf8').digest();
  }

  /** The capability token for one workflow: base64url of HMAC-SHA256(secret, workflowId), 43 characters. */
  token(workflowId: string): string {
    assertWorkflowId(workflowId);
    return this.sign(workflowId).toString('base64url');
  }

  /** `${publicBaseUrl}/callbacks/${workflowId}/${token}`, the workflow id percent-encoded as one path segment. */
  mint(workflowId: string): string {
    return `${this.publicBaseUrl}/callbacks/${encodeURIComponent(workflowId)}/${this.token(workflowId)}`;
  }

  /** Constant-time check that `token` was minted for `workflowId` with this secret. */
  verify(workflowId: string, token: string): boolean {
    if (typeof workflowId !== 'string' || workflowId === '' || typeof token !== 'string') return false;
    const expected = Buffer.from(this.token(workflowId), 'utf8');
    const given = Buffer.from(token, 'utf8');
    // timingSafeEqual throws on unequal lengths; the length of a valid token is public anyway.
    return given.length === expected.length && timingSafeEqual(given, expected);
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
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { CallbackConfigError, CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { DEFAULT_CALLBACK_TOKEN_TTL_MS } from '../../src/config/worker.js';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
const OTHER_SECRET = 'another-secret-that-is-long-enough-9876543210';
const WORKFLOW_ID = 'sale:biz_nairobi:INV/2025 #1';

function minter(secret = SECRET, publicBaseUrl = 'https://hooks.example.com', now?: () => number): CallbackUrlMinter {
  return new CallbackUrlMinter({ publicBaseUrl, secret, ...(now ? { now } : {}) });
}

const HOUR = 3_600_000;

/** The MAC of the old, non-expiring token format: HMAC-SHA256(secret, message), no derived key. */
function bareMac(message: string): string {
  return createHmac('sha256', SECRET).update(message).digest('base64url');
}

/** The token segment of a minted URL. */
function tokenOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

describe('CallbackUrlMinter.mint', () => {
  it('puts the percent-encoded workflow id and an expiring HMAC-SHA256 token under /callbacks', () => {
    const url = minter().mint(WORKFLOW_ID);
    const parsed = new URL(url);
    const [, callbacks, workflowSegment, token] = parsed.pathname.split('/');

    expect(parsed.origin).toBe('https://hooks.example.com');
    expect(callbacks).toBe('callbacks');
    expect(decodeURIComponent(workflowSegment ?? '')).toBe(WORKFLOW_ID);
    expect(token).toMatch(/^[0-9a-z]{1,11}\.[A-Za-z0-9_-]{43}$/);
    const [expiry = '', mac = ''] = (token ?? '').split('.');
    const v2Key = createHmac('sha256', SECRET).update('etims-callback-token:v2').digest();
    expect(Buffer.from(mac, 'base64url')).toEqual(
      createHmac('sha256', v2Key).update(`${expiry}:${WORKFLOW_ID}`).digest(),
    );
    // At least the TTL from now, at most an hour more (rounded up to a whole hour).
    const expiresAt = Number.parseInt(expiry, 36) * 1000;
    expect(expiresAt % HOUR).toBe(0);
    expect(expiresAt).toBeGreaterThanOrEqual(Date.now() + DEFAULT_CALLBACK_TOKEN_TTL_MS - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + DEFAULT_CALLBACK_TOKEN_TTL_MS + HOUR);
  });

  it('keeps a path prefix of the base URL and drops its trailing slashes', () => {
    const url = minter(SECRET, 'https://example.com/etims/hooks//').mint('wf-1');
    expect(url).toMatch(/^https:\/\/example\.com\/etims\/hooks\/callbacks\/wf-1\/[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
  });

  it('mints the same URL on every attempt of one activity, however long its retries take (C61)', async () => {
    let clock = Date.UTC(2025, 5, 30, 10, 59, 0);
    const m = minter(SECRET, 'https://hooks.example.com', () => clock);
    const scheduledTimestampMs = Date.UTC(2025, 5, 30, 9, 0, 0);
    const first = String(
      await new MockActivityEnvironment({ scheduledTimestampMs, attempt: 1 }).run(async () => m.mint('wf-1')),
    );
    clock += 5 * HOUR; // a later attempt of the same activity, hours after and past an hour boundary
    const later = String(
      await new MockActivityEnvironment({ scheduledTimestampMs, attempt: 7 }).run(async () => m.mint('wf-1')),
    );
    expect(later).toBe(first);
    const expiry = Number.parseInt(tokenOf(first).split('.')[0] ?? '', 36) * 1000;
    expect(expiry).toBe(scheduledTimestampMs + DEFAULT_CALLBACK_TOKEN_TTL_MS);
    // Outside an activity the clock anchors it: the same within an hour.
    expect(m.mint('wf-1')).toBe(m.mint('wf-1'));
  });

  it('gives each workflow its own token and the same token every time', () => {
    const m = minter(SECRET, 'https://hooks.example.com', () => Date.UTC(2025, 5, 30, 10, 0, 0));
    expect(m.mint('wf-1')).toBe(m.mint('wf-1'));
    expect(tokenOf(m.mint('wf-1'))).not.toBe(tokenOf(m.mint('wf-2')));
  });

  it('refuses an empty workflow id', () => {
    expect(() => minter().mint('')).toThrow(CallbackConfigError);
  });
});

describe('CallbackUrlMinter.check', () => {
  const m = minter();
  const token = tokenOf(m.mint(WORKFLOW_ID));

  it('accepts the token minted for the workflow', () => {
    expect(m.check(WORKFLOW_ID, token)).toBe('valid');
    // Another instance with the same secret (another worker, or after a restart) agrees.
    expect(minter(SECRET, 'http://127.0.0.1:1').check(WORKFLOW_ID, token)).toBe('valid');
  });

  it('refuses a tampered token', () => {
    for (const index of [0, 21, 42]) {
      const original = token[index] ?? '';
      const tampered = `${token.slice(0, index)}${original === 'A' ? 'B' : 'A'}${token.slice(index + 1)}`;
      expect(m.check(WORKFLOW_ID, tampered)).toBe('invalid');
    }
  });

  it('refuses a truncated, extended or empty token', () => {
    expect(m.check(WORKFLOW_ID, token.slice(0, -1))).toBe('invalid');
    expect(m.check(WORKFLOW_ID, token.slice(0, 16))).toBe('invalid');
    expect(m.check(WORKFLOW_ID, `${token}A`)).toBe('invalid');
    expect(m.check(WORKFLOW_ID, '')).toBe('invalid');
  });

  it('refuses the token of another workflow', () => {
    expect(m.check(WORKFLOW_ID, tokenOf(m.mint('sale:biz_nairobi:INV-2')))).toBe('invalid');
    expect(m.check('sale:biz_nairobi:INV-2', token)).toBe('invalid');
  });

  it('refuses a token minted with a different secret', () => {
    expect(m.check(WORKFLOW_ID, tokenOf(minter(OTHER_SECRET).mint(WORKFLOW_ID)))).toBe('invalid');
  });

  it('refuses a same-length token of multi-byte characters without throwing', () => {
    expect(m.check(WORKFLOW_ID, 'é'.repeat(43))).toBe('invalid');
    expect(m.check(WORKFLOW_ID, `1.${'é'.repeat(43)}`)).toBe('invalid');
    expect(m.check('', token)).toBe('invalid');
  });
});

describe('CallbackUrlMinter expiry', () => {
  it('the default URL expires after the TTL', () => {
    let clock = Date.UTC(2025, 5, 30, 10, 0, 0);
    const m = new CallbackUrlMinter({
      publicBaseUrl: 'https://h.example',
      secret: SECRET,
      ttlMs: 2 * HOUR,
      now: () => clock,
    });
    const token = tokenOf(m.mint(WORKFLOW_ID));
    clock += 2 * HOUR - 1;
    expect(m.check(WORKFLOW_ID, token)).toBe('valid');
    clock += 1;
    expect(m.check(WORKFLOW_ID, token)).toBe('expired');
  });

  it('an altered expiry, or the expiry of another workflow, is invalid (the expiry is inside the MAC)', () => {
    const m = minter();
    const [expiry = '', mac = ''] = m.token(WORKFLOW_ID).split('.');
    const later = (Number.parseInt(expiry, 36) + 3_600).toString(36);
    expect(m.check(WORKFLOW_ID, `${later}.${mac}`)).toBe('invalid');
    expect(m.check('wf-other', `${expiry}.${mac}`)).toBe('invalid');
    // A MAC keyed by the bare secret with an expiry glued on is not a token, even over the token's own MAC input.
    expect(m.check(WORKFLOW_ID, `${expiry}.${bareMac(WORKFLOW_ID)}`)).toBe('invalid');
    expect(m.check(WORKFLOW_ID, `${expiry}.${bareMac(`${expiry}:${WORKFLOW_ID}`)}`)).toBe('invalid');
    // An expired token of another secret is invalid, not expired: expiry is only told to holders of a real URL.
    expect(m.check(WORKFLOW_ID, minter(OTHER_SECRET).token(WORKFLOW_ID, 1_000))).toBe('invalid');
  });

  it('refuses a token of the old format (the bare HMAC of the workflow id, no expiry)', () => {
    expect(minter().check(WORKFLOW_ID, bareMac(WORKFLOW_ID))).toBe('invalid');
  });

  it('refuses a TTL that is not a positive number', () => {
    for (const ttlMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new CallbackUrlMinter({ publicBaseUrl: 'https://h.example', secret: SECRET, ttlMs })).toThrow(
        CallbackConfigError,
      );
    }
  });
});

describe('CallbackUrlMinter configuration', () => {
  it.each([
    ['hooks.example.com', /absolute http or https URL/],
    ['/callbacks', /absolute http or https URL/],
    ['ftp://hooks.example.com', /must use http or https \(got ftp\)/],
    ['https://hooks.example.com/?a=1', /query or fragment/],
  ])('refuses the base URL %s naming the field', (publicBaseUrl, reason) => {
    const error = captureError(() => minter(SECRET, publicBaseUrl));
    expect(error).toBeInstanceOf(CallbackConfigError);
    expect(error).toMatchObject({ field: 'publicBaseUrl' });
    expect(error.message).toMatch(/^callback publicBaseUrl /);
    expect(error.message).toMatch(reason);
  });

  it('refuses a base URL with credentials without repeating them', () => {
    const error = captureError(() => minter(SECRET, 'https://user:hunter2-password@hooks.example.com'));
    expect(error).toMatchObject({ field: 'publicBaseUrl' });
    expect(error.message).toMatch(/username or password/);
    expect(error.message).not.toContain('hunter2');
  });

  it('refuses a secret shorter than 32 bytes without printing it', () => {
    const short = 'short-secret-value-31-bytes-xxxx'.slice(0, 31);
    const error = captureError(() => minter(short));
    expect(error).toBeInstanceOf(CallbackConfigError);
    expect(error).toMatchObject({ field: 'secret' });
    expect(error.message).toMatch(/at least 32 bytes/);
    expect(error.message).not.toContain(short);
  });

  it('counts the secret in bytes: 32 bytes is enough, 31 is not', () => {
    expect(() => minter('x'.repeat(32))).not.toThrow();
    expect(() => minter('x'.repeat(31))).toThrow(/at least 32 bytes/);
    expect(() => minter('é'.repeat(16))).not.toThrow(); // 2 bytes each
  });

  it('does not expose the secret through JSON or inspection', () => {
    const m = minter();
    expect(JSON.stringify(m)).not.toContain(SECRET);
    expect(inspect(m, { depth: 5, showHidden: true })).not.toContain(SECRET);
  });
});

function captureError(action: () => unknown): Error {
  try {
    action();
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`expected an Error, got ${String(err)}`);
  }
  throw new Error('expected an error, nothing was thrown');
}

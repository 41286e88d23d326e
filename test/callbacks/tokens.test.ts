import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CallbackConfigError, CallbackUrlMinter } from '../../src/callbacks/tokens.js';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
const OTHER_SECRET = 'another-secret-that-is-long-enough-9876543210';
const WORKFLOW_ID = 'sale:biz_nairobi:INV/2025 #1';

function minter(secret = SECRET, publicBaseUrl = 'https://hooks.example.com'): CallbackUrlMinter {
  return new CallbackUrlMinter({ publicBaseUrl, secret });
}

/** The token segment of a minted URL. */
function tokenOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

describe('CallbackUrlMinter.mint', () => {
  it('puts the percent-encoded workflow id and a base64url HMAC-SHA256 token under /callbacks', () => {
    const url = minter().mint(WORKFLOW_ID);
    const parsed = new URL(url);
    const [, callbacks, workflowSegment, token] = parsed.pathname.split('/');

    expect(parsed.origin).toBe('https://hooks.example.com');
    expect(callbacks).toBe('callbacks');
    expect(decodeURIComponent(workflowSegment ?? '')).toBe(WORKFLOW_ID);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token ?? '', 'base64url')).toEqual(createHmac('sha256', SECRET).update(WORKFLOW_ID).digest());
  });

  it('keeps a path prefix of the base URL and drops its trailing slashes', () => {
    const url = minter(SECRET, 'https://example.com/etims/hooks//').mint('wf-1');
    expect(url).toMatch(/^https:\/\/example\.com\/etims\/hooks\/callbacks\/wf-1\/[A-Za-z0-9_-]{43}$/);
  });

  it('gives each workflow its own token and the same token every time', () => {
    const m = minter();
    expect(m.mint('wf-1')).toBe(m.mint('wf-1'));
    expect(tokenOf(m.mint('wf-1'))).not.toBe(tokenOf(m.mint('wf-2')));
  });

  it('refuses an empty workflow id', () => {
    expect(() => minter().mint('')).toThrow(CallbackConfigError);
  });
});

describe('CallbackUrlMinter.verify', () => {
  const m = minter();
  const token = tokenOf(m.mint(WORKFLOW_ID));

  it('accepts the token minted for the workflow', () => {
    expect(m.verify(WORKFLOW_ID, token)).toBe(true);
    // Another instance with the same secret (another worker, or after a restart) agrees.
    expect(minter(SECRET, 'http://127.0.0.1:1').verify(WORKFLOW_ID, token)).toBe(true);
  });

  it('refuses a tampered token', () => {
    for (const index of [0, 21, 42]) {
      const original = token[index] ?? '';
      const tampered = `${token.slice(0, index)}${original === 'A' ? 'B' : 'A'}${token.slice(index + 1)}`;
      expect(m.verify(WORKFLOW_ID, tampered)).toBe(false);
    }
  });

  it('refuses a truncated, extended or empty token', () => {
    expect(m.verify(WORKFLOW_ID, token.slice(0, -1))).toBe(false);
    expect(m.verify(WORKFLOW_ID, token.slice(0, 16))).toBe(false);
    expect(m.verify(WORKFLOW_ID, `${token}A`)).toBe(false);
    expect(m.verify(WORKFLOW_ID, '')).toBe(false);
  });

  it('refuses the token of another workflow', () => {
    expect(m.verify(WORKFLOW_ID, tokenOf(m.mint('sale:biz_nairobi:INV-2')))).toBe(false);
    expect(m.verify('sale:biz_nairobi:INV-2', token)).toBe(false);
  });

  it('refuses a token minted with a different secret', () => {
    expect(m.verify(WORKFLOW_ID, tokenOf(minter(OTHER_SECRET).mint(WORKFLOW_ID)))).toBe(false);
  });

  it('refuses a same-length token of multi-byte characters without throwing', () => {
    expect(m.verify(WORKFLOW_ID, 'é'.repeat(43))).toBe(false);
    expect(m.verify('', token)).toBe(false);
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

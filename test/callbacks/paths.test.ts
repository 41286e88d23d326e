import { describe, expect, it } from 'vitest';
import { clip } from '../../src/callbacks/answer-log.js';
import {
  callbackPath,
  parseCallbackPath,
  PUBLIC_BASE_URL_MAX_LENGTH,
  WORKFLOW_ID_MAX_BYTES,
} from '../../src/callbacks/paths.js';
import { CallbackConfigError, CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { CALLBACK_URL_MAX_LENGTH } from '../../src/compliance/callback-url.js';

const SECRET = 'paths-test-secret-0123456789-abcdefghijklmnop';
const after = (url: string) => url.slice(url.indexOf('/callbacks/') + '/callbacks/'.length);

describe('callback paths', () => {
  it('mints the percent-encoded form, byte for byte as before, whenever the URL fits', () => {
    const minter = new CallbackUrlMinter({ publicBaseUrl: 'https://hooks.example.com/etims', secret: SECRET });
    const workflowId = `sale:biz_nairobi:${'🧾'.repeat(50)}`;
    const url = minter.mint(workflowId);
    expect(url).toBe(
      `https://hooks.example.com/etims/callbacks/${encodeURIComponent(workflowId)}/${minter.token(workflowId)}`,
    );
    expect(parseCallbackPath(after(url))).toEqual({ workflowId, token: minter.token(workflowId) });
  });

  it('mints the compact form when the percent-encoded URL would be too long, and it round-trips', () => {
    const minter = new CallbackUrlMinter({ publicBaseUrl: 'https://hooks.example.com', secret: SECRET });
    const workflowId = `sale:b:${'😀'.repeat(200)}`;
    const url = minter.mint(workflowId);
    expect(url).toMatch(/\/callbacks\/b64\/[A-Za-z0-9_-]+\/[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    expect(url.length).toBeLessThanOrEqual(CALLBACK_URL_MAX_LENGTH);
    expect(parseCallbackPath(after(url))).toEqual({ workflowId, token: minter.token(workflowId) });
    expect(minter.check(workflowId, parseCallbackPath(after(url))?.token ?? '')).toBe('valid');
  });

  it('fits any id up to the Temporal limit with the longest base URL allowed', () => {
    const base = `https://hooks.example.com/${'p'.repeat(PUBLIC_BASE_URL_MAX_LENGTH - 'https://hooks.example.com/'.length)}`;
    expect(base.length).toBe(PUBLIC_BASE_URL_MAX_LENGTH);
    const minter = new CallbackUrlMinter({ publicBaseUrl: base, secret: SECRET });
    const workflowId = `s:${'😀'.repeat((WORKFLOW_ID_MAX_BYTES - 2) / 4)}x`;
    expect(Buffer.byteLength(workflowId)).toBeLessThanOrEqual(WORKFLOW_ID_MAX_BYTES);
    expect(minter.mint(workflowId).length).toBeLessThanOrEqual(CALLBACK_URL_MAX_LENGTH);
    expect(() => new CallbackUrlMinter({ publicBaseUrl: `${base}q`, secret: SECRET })).toThrow(CallbackConfigError);
  });

  it.each([
    ['one segment', 'abc'],
    ['four segments', 'a/b/c/d'],
    ['three segments without the marker', 'x64/YQ/token'],
    ['non-canonical base64url', 'b64/YR/token'],
    ['base64url of bytes that are not UTF-8', `b64/${Buffer.from([0xff, 0xfe]).toString('base64url')}/token`],
    ['a malformed percent-encoding', '%E0%A4%A/token'],
    ['an empty token', 'sale%3Ab%3A1/'],
  ])('refuses %s', (_label, rest) => {
    expect(parseCallbackPath(rest)).toBeUndefined();
  });

  it('an id of any length is one percent-encoded segment when it fits, whatever its characters', () => {
    const workflowId = 'sale:biz 1:INV/2025#7?x=%41';
    expect(callbackPath(20, workflowId, 't')).toBe(`/callbacks/${encodeURIComponent(workflowId)}/t`);
  });
});

describe('clip', () => {
  it('keeps short values, cuts long ones without splitting a character, and says how long they were', () => {
    expect(clip('short')).toBe('short');
    const cut = clip('😀'.repeat(500), 10);
    expect(cut).toBe(`${'😀'.repeat(4)}… (1000 chars)`);
    expect(clip(`a${'😀'.repeat(20)}`, 10)).toBe(`a${'😀'.repeat(4)}… (41 chars)`);
  });
});

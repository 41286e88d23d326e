/**
 * CALLBACK_TOKEN_TTL and CALLBACK_LEGACY_TOKENS_UNTIL: how long a minted callback URL verifies, and from when
 * the legacy (non-expiring) tokens stop verifying.
 */
import { describe, expect, it } from 'vitest';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import { DEFAULT_CALLBACK_TOKEN_TTL_MS } from '../../src/config/worker.js';
import { ConfigError } from '../../src/config/env.js';
import { loadWorkerConfig } from '../../src/config/worker.js';

const HOUR = 3_600_000;
const SECRET = 'callback-token-config-test-secret-0123456789';

describe('CALLBACK_TOKEN_TTL', () => {
  it('defaults to 72 hours', () => {
    expect(loadWorkerConfig({}).callbackTokenTtlMs).toBe(72 * HOUR);
    expect(DEFAULT_CALLBACK_TOKEN_TTL_MS).toBe(72 * HOUR);
  });

  it('reads a duration with its unit', () => {
    expect(loadWorkerConfig({ CALLBACK_TOKEN_TTL: '48h' }).callbackTokenTtlMs).toBe(48 * HOUR);
    expect(loadWorkerConfig({ CALLBACK_TOKEN_TTL: '3 days' }).callbackTokenTtlMs).toBe(72 * HOUR);
    expect(loadWorkerConfig({ CALLBACK_TOKEN_TTL: ' 90m ' }).callbackTokenTtlMs).toBe(1.5 * HOUR);
    expect(loadWorkerConfig({ CALLBACK_TOKEN_TTL: '30d' }).callbackTokenTtlMs).toBe(720 * HOUR);
  });

  it.each(['72', 'soon', '-1h', '0h', '59m', '31d', '72 parsecs'])(
    'refuses %j with an error naming the variable',
    (value) => {
      expect(() => loadWorkerConfig({ CALLBACK_TOKEN_TTL: value })).toThrow(ConfigError);
      expect(() => loadWorkerConfig({ CALLBACK_TOKEN_TTL: value })).toThrow(
        /^CALLBACK_TOKEN_TTL: must be a duration from 1h to 30d with its unit, e\.g\. 72h/,
      );
    },
  );

  it('is the lifetime of the URLs the minter then mints', () => {
    const now = Date.UTC(2026, 10, 21, 10, 0, 0);
    const { callbackTokenTtlMs } = loadWorkerConfig({ CALLBACK_TOKEN_TTL: '2h' });
    const minter = new CallbackUrlMinter({
      publicBaseUrl: 'https://hooks.example',
      secret: SECRET,
      ttlMs: callbackTokenTtlMs,
      now: () => now,
    });
    const token = minter.token('wf-1');
    expect(Number.parseInt(token.split('.')[0]!, 36) * 1000).toBe(now + 2 * HOUR);
  });
});

describe('CALLBACK_LEGACY_TOKENS_UNTIL', () => {
  it('is unset by default: legacy tokens keep verifying', () => {
    expect(loadWorkerConfig({}).callbackLegacyTokensUntilMs).toBeUndefined();
  });

  it('reads an ISO 8601 instant with its time zone', () => {
    expect(loadWorkerConfig({ CALLBACK_LEGACY_TOKENS_UNTIL: '2026-12-31T00:00:00Z' }).callbackLegacyTokensUntilMs).toBe(
      Date.UTC(2026, 11, 31),
    );
    expect(
      loadWorkerConfig({ CALLBACK_LEGACY_TOKENS_UNTIL: '2026-12-31T03:00:00+03:00' }).callbackLegacyTokensUntilMs,
    ).toBe(Date.UTC(2026, 11, 31));
  });

  it.each(['2026-12-31', '2026-12-31T00:00:00', 'next week', '1767139200000'])(
    'refuses %j with an error naming the variable',
    (value) => {
      expect(() => loadWorkerConfig({ CALLBACK_LEGACY_TOKENS_UNTIL: value })).toThrow(
        /^CALLBACK_LEGACY_TOKENS_UNTIL: must be an ISO 8601 date-time with a time zone/,
      );
    },
  );

  it('refuses legacy tokens from that instant on', () => {
    const cutoff = Date.UTC(2026, 11, 31);
    const { callbackLegacyTokensUntilMs } = loadWorkerConfig({ CALLBACK_LEGACY_TOKENS_UNTIL: '2026-12-31T00:00:00Z' });
    let now = cutoff - 1;
    const minter = new CallbackUrlMinter({
      publicBaseUrl: 'https://hooks.example',
      secret: SECRET,
      legacyTokensUntilMs: callbackLegacyTokensUntilMs,
      now: () => now,
    });
    const legacy = minter.legacyToken('wf-1');
    expect(minter.check('wf-1', legacy)).toBe('valid');
    now = cutoff;
    expect(minter.check('wf-1', legacy)).toBe('expired');
  });
});

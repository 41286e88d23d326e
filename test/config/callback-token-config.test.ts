/** CALLBACK_TOKEN_TTL: how long a minted callback URL verifies. */
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

/**
 * The demo's stock-in piece, the parts that need no stack: what it prints of the quantities on hand and when it
 * calls them right, the stock ledgers' delay it asks for, and the environment its CLI runs in (the stack's server, namespace and key, as `npm start`
 * tells a user).
 */
import { describe, expect, it } from 'vitest';
import { stockRiseReport, withDemoStockDelay } from '../../tools/local-stack/demo-stock-in.js';
import { cliCommandLine, stackCliEnv } from '../../tools/local-stack/stack-cli.js';

const stack = { temporalAddress: '127.0.0.1:40123', namespace: 'default', payloadKeysFile: '/repo/.temporal/keys' };

describe('the stock-in piece', () => {
  it('prints each item before and after, aligned, and is right only when each rose by exactly its units', () => {
    const report = stockRiseReport([
      { name: 'Sugar 2kg', before: 74, after: 84, expected: 10 },
      { name: 'Fresh milk 500ml', before: 111, after: 159, expected: 48 },
    ]);
    expect(report.lines).toEqual(['Sugar 2kg          74 →  84  (+10)', 'Fresh milk 500ml  111 → 159  (+48)']);
    expect(report.ok).toBe(true);
  });

  it("keeps the demo's stock ledgers from holding lines for minutes, unless the environment says how long", () => {
    expect(withDemoStockDelay({ LOG_LEVEL: 'warn' })).toEqual({ LOG_LEVEL: 'warn', STOCK_MAX_DELAY: '10 seconds' });
    expect(withDemoStockDelay({ STOCK_MAX_DELAY: '2 minutes' })).toEqual({ STOCK_MAX_DELAY: '2 minutes' });
  });

  it('says which item rose by the wrong amount', () => {
    const report = stockRiseReport([{ name: 'Cooking oil 1L', before: 60, after: 72, expected: 6 }]);
    expect(report.lines).toEqual(['Cooking oil 1L  60 → 72  (+12, expected +6)']);
    expect(report.ok).toBe(false);
  });
});

describe("the stack's CLIs", () => {
  it("reach the stack's server with its key, keeping the rest of the user's environment", () => {
    expect(stackCliEnv(stack, { TEMPORAL_ADDRESS: '127.0.0.1:7233', LOG_LEVEL: 'warn' })).toEqual({
      TEMPORAL_ADDRESS: '127.0.0.1:40123',
      TEMPORAL_NAMESPACE: 'default',
      PAYLOAD_KEYS_FILE: '/repo/.temporal/keys',
      LOG_LEVEL: 'warn',
    });
  });

  it("keep the user's own keys when the stack made none", () => {
    const env = stackCliEnv({ ...stack, payloadKeysFile: undefined }, { PAYLOAD_KEYS: 'k1:abc' });
    expect(env.PAYLOAD_KEYS).toBe('k1:abc');
    expect(env).not.toHaveProperty('PAYLOAD_KEYS_FILE');
  });

  it('are shown as a user types them', () => {
    expect(cliCommandLine('purchases', ['map', 'line', 'biz_1', 'pur_1', '3', '--not-stock'])).toBe(
      'npm run purchases -- map line biz_1 pur_1 3 --not-stock',
    );
    expect(cliCommandLine('purchases', ['map', 'set', '--description', 'Sugar 50kg'])).toBe(
      "npm run purchases -- map set --description 'Sugar 50kg'",
    );
  });
});

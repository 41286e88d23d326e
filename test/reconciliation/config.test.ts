import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { loadReconciliationConfig, parseReconcilePeriodDays } from '../../src/config/reconciliation.js';

describe('RECONCILE_PERIOD_DAYS', () => {
  it('sets the days each scheduled run reconciles; unset, the workflow’s default applies', () => {
    expect(loadReconciliationConfig({ RECONCILE_PERIOD_DAYS: ' 120 ' })).toEqual({
      links: [],
      every: '24h',
      periodDays: 120,
    });
    expect(loadReconciliationConfig({ RECONCILE_EVERY: '12h', RECONCILE_PERIOD_DAYS: '30' })).toMatchObject({
      every: '12h',
      periodDays: 30,
    });
    expect(loadReconciliationConfig({})).toEqual({ links: [], every: '24h' });
    expect(parseReconcilePeriodDays('')).toBeUndefined();
    expect(parseReconcilePeriodDays('3660')).toBe(3660);
  });

  it.each([['0'], ['3661'], ['90d'], ['1.5'], ['-7'], ['ninety']])('refuses %j, naming the variable', (text) => {
    expect(() => loadReconciliationConfig({ RECONCILE_PERIOD_DAYS: text })).toThrow(ConfigError);
    expect(() => parseReconcilePeriodDays(text)).toThrow(
      `RECONCILE_PERIOD_DAYS: must be a whole number of days from 1 to 3660 (got "${text}")`,
    );
  });
});

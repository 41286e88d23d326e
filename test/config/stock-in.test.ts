import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { firstStockIn, isCalendarDate, loadStockIn } from '../../src/config/stock-in.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';

function refusal(env: Record<string, string>): string {
  try {
    loadStockIn(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('stock-in configuration', () => {
  it('takes no stock in for any business when nothing is set', () => {
    expect(loadStockIn({})('biz_a')).toBeUndefined();
    expect(loadStockIn({ STOCK_IN_FROM: ' ', STOCK_IN_BY_BUSINESS: '' })('biz_a')).toBeUndefined();
  });

  it('reads businesses one by one, with all-or-nothing as an option; the others take none in', () => {
    const of = loadStockIn({
      STOCK_IN_BY_BUSINESS: 'biz_a=2025-01-01, biz_b = 2025-03-31 : all-or-nothing,biz:c=2024-02-29',
    });
    expect(of('biz_a')).toEqual({ from: '2025-01-01', allOrNothing: false });
    expect(of('biz_b')).toEqual({ from: '2025-03-31', allOrNothing: true });
    expect(of('biz:c')).toEqual({ from: '2024-02-29', allOrNothing: false });
    expect(of('biz_x')).toBeUndefined();
  });

  it('STOCK_IN_FROM covers every other business, STOCK_IN_ALL_OR_NOTHING with it; named ones keep their own', () => {
    const of = loadStockIn({
      STOCK_IN_FROM: '2025-06-01',
      STOCK_IN_ALL_OR_NOTHING: 'true',
      STOCK_IN_BY_BUSINESS: 'biz_a=2025-01-01',
    });
    expect(of('biz_x')).toEqual({ from: '2025-06-01', allOrNothing: true });
    expect(of('biz_a')).toEqual({ from: '2025-01-01', allOrNothing: false });
    expect(loadStockIn({ STOCK_IN_FROM: '2025-06-01' })('biz_x')).toEqual({ from: '2025-06-01', allOrNothing: false });
    expect(loadStockIn({ STOCK_IN_FROM: '2025-06-01', STOCK_IN_ALL_OR_NOTHING: 'false' })('biz_x')).toEqual({
      from: '2025-06-01',
      allOrNothing: false,
    });
  });

  it('refuses what it cannot use, naming the variable and the business', () => {
    expect(refusal({ STOCK_IN_BY_BUSINESS: '2025-01-01' })).toBe(
      'STOCK_IN_BY_BUSINESS: "2025-01-01" is not <business>=<from>[:all-or-nothing]',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: '=2025-01-01' })).toBe(
      'STOCK_IN_BY_BUSINESS: "=2025-01-01" is not <business>=<from>[:all-or-nothing]',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'biz a=2025-01-01' })).toMatch(/"biz a=2025-01-01" is not <business>=/);
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=2025-01-01,a=2025-02-01' })).toBe(
      'STOCK_IN_BY_BUSINESS: a is named twice',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=1/1/2025' })).toBe(
      'STOCK_IN_BY_BUSINESS (a): "1/1/2025" is not a date in the form YYYY-MM-DD',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=' })).toBe(
      'STOCK_IN_BY_BUSINESS (a): "" is not a date in the form YYYY-MM-DD',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=2025-02-29' })).toBe(
      'STOCK_IN_BY_BUSINESS (a): 2025-02-29 is not a date the calendar has',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=2025-01-01:all' })).toBe(
      'STOCK_IN_BY_BUSINESS (a): unknown option "all" (the one option is all-or-nothing)',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=2025-01-01:all-or-nothing:partial' })).toMatch(
      /unknown option "partial"/,
    );
    expect(refusal({ STOCK_IN_FROM: '2025-13-01' })).toBe('STOCK_IN_FROM: 2025-13-01 is not a date the calendar has');
    expect(refusal({ STOCK_IN_FROM: 'today' })).toBe('STOCK_IN_FROM: "today" is not a date in the form YYYY-MM-DD');
    expect(refusal({ STOCK_IN_FROM: '2025-01-01', STOCK_IN_ALL_OR_NOTHING: 'yes' })).toBe(
      'STOCK_IN_ALL_OR_NOTHING: must be true or false, not "yes"',
    );
    expect(refusal({ STOCK_IN_BY_BUSINESS: 'a=2025-01-01', STOCK_IN_ALL_OR_NOTHING: 'true' })).toBe(
      'STOCK_IN_ALL_OR_NOTHING: applies to STOCK_IN_FROM, which is not set ' +
        '(per business: STOCK_IN_BY_BUSINESS=<business>=<from>:all-or-nothing)',
    );
  });

  it('knows the calendar: leap years, month lengths', () => {
    expect(['2024-02-29', '2000-02-29', '2025-12-31', '2025-04-30'].every(isCalendarDate)).toBe(true);
    expect(['2100-02-29', '2025-04-31', '2025-00-10', '2025-01-00', '2025-1-1', '20250101'].some(isCalendarDate)).toBe(
      false,
    );
  });

  it('firstStockIn asks each source in turn: a tenants file before the environment', () => {
    const file = (id: string) => (id === 'biz_a' ? { from: '2025-05-01', allOrNothing: true } : undefined);
    const of = firstStockIn(file, undefined, loadStockIn({ STOCK_IN_FROM: '2025-01-01' }));
    expect(of('biz_a')).toEqual({ from: '2025-05-01', allOrNothing: true });
    expect(of('biz_b')).toEqual({ from: '2025-01-01', allOrNothing: false });
    expect(firstStockIn()('biz_a')).toBeUndefined();
  });

  it("is read with the worker's settings, and refused there with its message", () => {
    const services = {
      COMPLIANCE_BASE_URL: 'https://compliance.example',
      COMPLIANCE_API_KEY: 'cmp_sk_test_settings_fixture_not_a_key',
      ACCOUNTING_BASE_URL: 'https://accounting.example',
      ACCOUNTING_API_KEY: 'sk_development_settings_fixture_not_a_key',
      PAYLOAD_ENCRYPTION: 'off',
    };
    const settings = loadWorkerSettings({ ...services, STOCK_IN_BY_BUSINESS: 'biz_a=2025-01-01:all-or-nothing' });
    expect(settings.stockIn('biz_a')).toEqual({ from: '2025-01-01', allOrNothing: true });
    expect(loadWorkerSettings(services).stockIn('biz_a')).toBeUndefined();
    expect(() => loadWorkerSettings({ ...services, STOCK_IN_FROM: '2025-02-30' })).toThrow(
      'STOCK_IN_FROM: 2025-02-30 is not a date the calendar has',
    );
  });
});

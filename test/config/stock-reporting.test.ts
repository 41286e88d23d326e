import { describe, expect, it } from 'vitest';
import { loadStockReporting } from '../../src/config/stock-reporting.js';

describe('stock reporting configuration', () => {
  it('defaults to coalesced within 3 minutes', () => {
    expect(loadStockReporting({})('biz_a')).toEqual({ mode: 'coalesced', maxDelaySeconds: 180 });
  });

  it('reads the fleet default, its max delay and per-business overrides', () => {
    const of = loadStockReporting({
      STOCK_REPORTING: 'per-sale',
      STOCK_MAX_DELAY: '30s',
      STOCK_REPORTING_BY_BUSINESS: 'biz_a=coalesced, biz_b=coalesced:5 minutes,biz_c=per-sale',
    });
    expect(of('biz_x')).toEqual({ mode: 'per-sale' });
    expect(of('biz_a')).toEqual({ mode: 'coalesced', maxDelaySeconds: 30 });
    expect(of('biz_b')).toEqual({ mode: 'coalesced', maxDelaySeconds: 300 });
    expect(of('biz_c')).toEqual({ mode: 'per-sale' });
  });

  it('refuses what it cannot use, naming the variable', () => {
    expect(() => loadStockReporting({ STOCK_REPORTING: 'batched' })).toThrow(
      /STOCK_REPORTING: must be per-sale or coalesced, not "batched"/,
    );
    expect(() => loadStockReporting({ STOCK_MAX_DELAY: 'soon' })).toThrow(
      /STOCK_REPORTING: the max delay "soon" is not a duration/,
    );
    expect(() => loadStockReporting({ STOCK_MAX_DELAY: '2 days' })).toThrow(/between 1 second and 1 day/);
    expect(() => loadStockReporting({ STOCK_REPORTING_BY_BUSINESS: 'per-sale' })).toThrow(
      /"per-sale" is not <business>=<mode>/,
    );
    expect(() => loadStockReporting({ STOCK_REPORTING_BY_BUSINESS: 'a=per-sale,a=coalesced' })).toThrow(
      /a is named twice/,
    );
    expect(() => loadStockReporting({ STOCK_REPORTING_BY_BUSINESS: 'a=coalesced:forever' })).toThrow(
      /STOCK_REPORTING_BY_BUSINESS \(a\): the max delay "forever"/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ACCOUNTING_ACTIVITIES_PER_SECOND,
  loadAccountingWorkerConfig,
} from '../../src/config/accounting-worker.js';
import { ConfigError } from '../../src/config/env.js';

describe('ACCOUNTING_ACTIVITIES_PER_SECOND', () => {
  it('defaults to 2 activities per second', () => {
    expect(DEFAULT_ACCOUNTING_ACTIVITIES_PER_SECOND).toBe(2);
    expect(loadAccountingWorkerConfig({})).toEqual({ activitiesPerSecond: 2 });
    expect(loadAccountingWorkerConfig({ ACCOUNTING_ACTIVITIES_PER_SECOND: '  ' })).toEqual({ activitiesPerSecond: 2 });
  });

  it('takes whole and fractional rates', () => {
    expect(loadAccountingWorkerConfig({ ACCOUNTING_ACTIVITIES_PER_SECOND: '5' }).activitiesPerSecond).toBe(5);
    expect(loadAccountingWorkerConfig({ ACCOUNTING_ACTIVITIES_PER_SECOND: '0.5' }).activitiesPerSecond).toBe(0.5);
  });

  it('refuses anything else with the variable named', () => {
    for (const value of ['0', '-1', 'fast', '1e3', '20000', '2/s']) {
      expect(() => loadAccountingWorkerConfig({ ACCOUNTING_ACTIVITIES_PER_SECOND: value }), value).toThrow(ConfigError);
      expect(() => loadAccountingWorkerConfig({ ACCOUNTING_ACTIVITIES_PER_SECOND: value }), value).toThrow(
        /^ACCOUNTING_ACTIVITIES_PER_SECOND: /,
      );
    }
  });
});

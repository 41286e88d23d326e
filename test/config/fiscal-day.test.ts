import { describe, expect, it } from 'vitest';
import { loadFiscalDaySettings } from '../../src/config/fiscal-day.js';
import { ConfigError } from '../../src/config/env.js';

describe('loadFiscalDaySettings', () => {
  it('defaults: 30 minutes of grace, 7 days kept open, one numbering per control unit, books on', () => {
    expect(loadFiscalDaySettings({})).toEqual({ grace: '30 minutes', keepOpen: '7 days', numbering: 'control-unit' });
  });

  it('takes each setting, and the books off', () => {
    expect(
      loadFiscalDaySettings({
        FISCAL_DAY_GRACE: '5m',
        FISCAL_DAY_KEEP_OPEN: '30 days',
        FISCAL_DAY_NUMBERING: 'label',
        FISCAL_DAY_BOOKS: 'off',
        FISCAL_DAY_CLOCK_AHEAD: '3h',
      }),
    ).toEqual({ grace: '5m', keepOpen: '30 days', numbering: 'label', books: 'off', clockAhead: '3h' });
  });

  it.each([
    ['FISCAL_DAY_GRACE', 'soon', /FISCAL_DAY_GRACE: a duration from 0 to 2 days/],
    ['FISCAL_DAY_GRACE', '3 days', /FISCAL_DAY_GRACE/],
    ['FISCAL_DAY_KEEP_OPEN', '90 days', /FISCAL_DAY_KEEP_OPEN: a duration from 0 to 60 days/],
    ['FISCAL_DAY_NUMBERING', 'branch', /FISCAL_DAY_NUMBERING: control-unit or label, got "branch"/],
    ['FISCAL_DAY_BOOKS', 'maybe', /FISCAL_DAY_BOOKS: on or off/],
  ])('refuses %s=%s naming it', (name, value, message) => {
    expect(() => loadFiscalDaySettings({ [name]: value })).toThrow(ConfigError);
    expect(() => loadFiscalDaySettings({ [name]: value })).toThrow(message);
  });
});

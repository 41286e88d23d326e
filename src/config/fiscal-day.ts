import { parseDuration } from '../contracts/duration.js';
import { DEFAULT_FISCAL_DAY_SETTINGS, type FiscalDaySettings } from '../contracts/fiscal-day.js';
import { ConfigError, type Env } from './env.js';

/** The FISCAL_DAY_* variables: docs/fiscal-day.md, "Settings". */
export function loadFiscalDaySettings(env: Env): FiscalDaySettings {
  const duration = (name: string, fallback: string, atMostMs: number) => {
    const text = env[name]?.trim() || fallback;
    const ms = parseDuration(text);
    if (ms === undefined || ms < 0 || ms > atMostMs)
      throw new ConfigError(
        `${name}: a duration from 0 to ${atMostMs / 86_400_000} days, e.g. "30 minutes"; got "${text}"`,
      );
    return text;
  };
  const numbering = env.FISCAL_DAY_NUMBERING?.trim() || DEFAULT_FISCAL_DAY_SETTINGS.numbering;
  if (numbering !== 'control-unit' && numbering !== 'label')
    throw new ConfigError(`FISCAL_DAY_NUMBERING: control-unit or label, got "${numbering}"`);
  const books = env.FISCAL_DAY_BOOKS?.trim() || 'on';
  if (books !== 'on' && books !== 'off') throw new ConfigError(`FISCAL_DAY_BOOKS: on or off, got "${books}"`);
  const clockAhead = env.FISCAL_DAY_CLOCK_AHEAD?.trim();
  return {
    grace: duration('FISCAL_DAY_GRACE', DEFAULT_FISCAL_DAY_SETTINGS.grace, 2 * 86_400_000),
    keepOpen: duration('FISCAL_DAY_KEEP_OPEN', DEFAULT_FISCAL_DAY_SETTINGS.keepOpen, 60 * 86_400_000),
    numbering,
    ...(books === 'off' ? { books } : {}),
    ...(clockAhead ? { clockAhead: duration('FISCAL_DAY_CLOCK_AHEAD', clockAhead, 86_400_000) } : {}),
  };
}

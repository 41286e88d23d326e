/** How each business's stock is reported: STOCK_REPORTING, STOCK_MAX_DELAY and per business (docs/stock-ledger.md). */
import { parseDuration } from '../contracts/duration.js';
import { DEFAULT_STOCK_REPORTING, type StockReporting } from '../contracts/stock-ledger.js';
import { ConfigError, splitList, type Env } from './env.js';

export type StockReportingOf = (businessId: string) => StockReporting;

// At least 1 s (shorter is per-sale in all but name, and wastes timers); at most a day, or it is no longer the day's.
const MIN_MAX_DELAY_SECONDS = 1;
const MAX_MAX_DELAY_SECONDS = 86_400;

export function loadStockReporting(env: Env): StockReportingOf {
  const fallback = parseMode(
    'STOCK_REPORTING',
    env.STOCK_REPORTING?.trim() || DEFAULT_STOCK_REPORTING.mode,
    env.STOCK_MAX_DELAY?.trim(),
  );
  const byBusiness = new Map<string, StockReporting>();
  for (const entry of splitList(env.STOCK_REPORTING_BY_BUSINESS)) {
    const at = entry.indexOf('=');
    const business = at > 0 ? entry.slice(0, at).trim() : '';
    if (!business) throw new ConfigError(`STOCK_REPORTING_BY_BUSINESS: "${entry}" is not <business>=<mode>`);
    if (byBusiness.has(business)) throw new ConfigError(`STOCK_REPORTING_BY_BUSINESS: ${business} is named twice`);
    const [mode = '', delay] = entry.slice(at + 1).split(':', 2);
    const name = `STOCK_REPORTING_BY_BUSINESS (${business})`;
    byBusiness.set(business, parseMode(name, mode.trim(), delay?.trim() || env.STOCK_MAX_DELAY?.trim()));
  }
  return (businessId) => byBusiness.get(businessId) ?? fallback;
}

function parseMode(name: string, mode: string, maxDelay: string | undefined): StockReporting {
  if (mode === 'per-sale') return { mode: 'per-sale' };
  if (mode !== 'coalesced') throw new ConfigError(`${name}: must be per-sale or coalesced, not "${mode}"`);
  if (maxDelay === undefined) return DEFAULT_STOCK_REPORTING;
  const ms = parseDuration(maxDelay);
  if (ms === undefined)
    throw new ConfigError(`${name}: the max delay "${maxDelay}" is not a duration such as 2 minutes or 90s`);
  const seconds = ms / 1000;
  if (seconds < MIN_MAX_DELAY_SECONDS || seconds > MAX_MAX_DELAY_SECONDS) {
    throw new ConfigError(
      `${name}: the max delay must be between ${MIN_MAX_DELAY_SECONDS} second and 1 day, not ${maxDelay}`,
    );
  }
  return { mode: 'coalesced', maxDelaySeconds: seconds };
}

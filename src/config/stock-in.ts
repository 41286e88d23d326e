/** Which businesses take their supplier invoices in as stock, and from when: STOCK_IN_FROM and STOCK_IN_BY_BUSINESS. */
import type { StockInSettings } from '../contracts/stock-in.js';
import { ConfigError, readVariable, splitList, type Env } from './env.js';

/** A business's stock-in settings; undefined: it takes no stock in (its ERP may post it). */
export type StockInSettingsOf = (businessId: string) => StockInSettings | undefined;

const ALL_OR_NOTHING = 'all-or-nothing';
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` naming a day the calendar has: 2025-02-29 passes the pattern but never comes. */
export function isCalendarDate(text: string): boolean {
  const parts = DATE.exec(text);
  if (!parts) return false;
  const [year, month, day] = parts.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function parseDate(name: string, text: string): string {
  if (!DATE.test(text)) throw new ConfigError(`${name}: "${text}" is not a date in the form YYYY-MM-DD`);
  if (!isCalendarDate(text)) throw new ConfigError(`${name}: ${text} is not a date the calendar has`);
  return text;
}

/** STOCK_IN_BY_BUSINESS's businesses, then STOCK_IN_FROM for every other business the worker serves (when set). */
export function loadStockIn(env: Env): StockInSettingsOf {
  const byBusiness = new Map<string, StockInSettings>();
  for (const entry of splitList(env.STOCK_IN_BY_BUSINESS)) {
    const at = entry.indexOf('=');
    const business = at > 0 ? entry.slice(0, at).trim() : '';
    if (!business || /\s/.test(business))
      throw new ConfigError(`STOCK_IN_BY_BUSINESS: "${entry}" is not <business>=<from>[:${ALL_OR_NOTHING}]`);
    if (byBusiness.has(business)) throw new ConfigError(`STOCK_IN_BY_BUSINESS: ${business} is named twice`);
    const name = `STOCK_IN_BY_BUSINESS (${business})`;
    const [from = '', ...options] = entry
      .slice(at + 1)
      .split(':')
      .map((part) => part.trim());
    const unknown = options.find((option) => option !== ALL_OR_NOTHING);
    if (unknown !== undefined)
      throw new ConfigError(`${name}: unknown option "${unknown}" (the one option is ${ALL_OR_NOTHING})`);
    byBusiness.set(business, { from: parseDate(name, from), allOrNothing: options.length > 0 });
  }
  const everyBusiness = fleetDefault(env);
  return (businessId) => byBusiness.get(businessId) ?? everyBusiness;
}

function fleetDefault(env: Env): StockInSettings | undefined {
  const from = readVariable(env, 'STOCK_IN_FROM');
  const allOrNothing = readVariable(env, 'STOCK_IN_ALL_OR_NOTHING');
  if (allOrNothing !== undefined && allOrNothing !== 'true' && allOrNothing !== 'false')
    throw new ConfigError(`STOCK_IN_ALL_OR_NOTHING: must be true or false, not "${allOrNothing}"`);
  if (from === undefined) {
    // Said rather than ignored: it reads as if it set STOCK_IN_BY_BUSINESS's entries, which carry their own.
    if (allOrNothing !== undefined)
      throw new ConfigError(
        `STOCK_IN_ALL_OR_NOTHING: applies to STOCK_IN_FROM, which is not set (per business: ` +
          `STOCK_IN_BY_BUSINESS=<business>=<from>:${ALL_OR_NOTHING})`,
      );
    return undefined;
  }
  return { from: parseDate('STOCK_IN_FROM', from), allOrNothing: allOrNothing === 'true' };
}

/** The first source that has settings for the business: a tenants file's list before the environment's. */
export function firstStockIn(...sources: ReadonlyArray<StockInSettingsOf | undefined>): StockInSettingsOf {
  return (businessId) => {
    for (const source of sources) {
      const settings = source?.(businessId);
      if (settings !== undefined) return settings;
    }
    return undefined;
  };
}

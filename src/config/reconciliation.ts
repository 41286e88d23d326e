import type { Duration } from '@temporalio/common';
import { parseDuration } from '../contracts/duration.js';
import { ConfigError, splitList, type Env } from './env.js';
import { MAX_PERIOD_DAYS } from '../contracts/reconciliation.js';

export const DEFAULT_RECONCILIATION_INTERVAL: Duration = '24h';

export interface ReconciliationLink {
  businessId: string;
  companyId: string;
}

const ID = /^[A-Za-z0-9_.:-]+$/;

/** `biz_a=comp_1,biz_b=comp_2`: one company per business (a business's invoices are paid from one set of books). */
export function parseReconciliationLinks(text: string | undefined): ReconciliationLink[] {
  const links: ReconciliationLink[] = [];
  for (const entry of splitList(text)) {
    const [businessId, companyId, extra] = entry.split('=').map((part) => part.trim());
    if (extra !== undefined || !businessId || !companyId || !ID.test(businessId) || !ID.test(companyId)) {
      throw new ConfigError(`RECONCILE_LINKS: "${entry}" is not businessId=companyId`);
    }
    if (links.some((l) => l.businessId === businessId))
      throw new ConfigError(`RECONCILE_LINKS: business ${businessId} is linked twice`);
    links.push({ businessId, companyId });
  }
  return links;
}

export interface ReconciliationConfig {
  links: ReconciliationLink[];
  every: Duration;
  /** RECONCILE_PERIOD_DAYS: days of invoices each scheduled run reconciles; absent, the workflow's default (90). */
  periodDays?: number;
}

/** A whole number of days from 1 to MAX_PERIOD_DAYS; unset or empty, undefined (the default applies). */
export function parseReconcilePeriodDays(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  const days = /^\d{1,6}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!(days >= 1 && days <= MAX_PERIOD_DAYS))
    throw new ConfigError(
      `RECONCILE_PERIOD_DAYS: must be a whole number of days from 1 to ${MAX_PERIOD_DAYS} (got "${trimmed}")`,
    );
  return days;
}

export function loadReconciliationConfig(env: Env): ReconciliationConfig {
  const links = parseReconciliationLinks(env.RECONCILE_LINKS);
  const periodDays = parseReconcilePeriodDays(env.RECONCILE_PERIOD_DAYS);
  const period = periodDays === undefined ? {} : { periodDays };
  const text = env.RECONCILE_EVERY?.trim();
  if (!text) return { links, every: DEFAULT_RECONCILIATION_INTERVAL, ...period };
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new ConfigError(`RECONCILE_EVERY: must be a duration with its unit, e.g. 24h or 12h (got "${text}")`);
  if (ms < 60_000) throw new ConfigError(`RECONCILE_EVERY: must be at least 1m (got "${text}")`);
  return { links, every: text as Duration, ...period };
}

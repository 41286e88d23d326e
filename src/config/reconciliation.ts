import type { Duration } from '@temporalio/common';
import { parseDuration } from '../contracts/duration.js';
import { ConfigError, splitList, type Env } from './env.js';

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

export type ReconciliationConfig = ReturnType<typeof loadReconciliationConfig>;

export function loadReconciliationConfig(env: Env): { links: ReconciliationLink[]; every: Duration } {
  const links = parseReconciliationLinks(env.RECONCILE_LINKS);
  const text = env.RECONCILE_EVERY?.trim();
  if (!text) return { links, every: DEFAULT_RECONCILIATION_INTERVAL };
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new ConfigError(`RECONCILE_EVERY: must be a duration with its unit, e.g. 24h or 12h (got "${text}")`);
  if (ms < 60_000) throw new ConfigError(`RECONCILE_EVERY: must be at least 1m (got "${text}")`);
  return { links, every: text as Duration };
}

import { ConfigError } from '../config/env.js';

/** A business (compliance service) and the accounting company that keeps its books. */
export interface ReconciliationLink {
  businessId: string;
  companyId: string;
}

const ID = /^[A-Za-z0-9_.:-]+$/;

/**
 * `RECONCILE_LINKS`: `biz_a=comp_1,biz_b=comp_2`. One company per business (a business's invoices are paid
 * from one set of books); errors name the setting and the entry, which hold ids, never secrets.
 */
export function parseReconciliationLinks(text: string | undefined, setting = 'RECONCILE_LINKS'): ReconciliationLink[] {
  const links: ReconciliationLink[] = [];
  for (const entry of (text ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const [businessId, companyId, extra] = entry.split('=').map((part) => part.trim());
    if (extra !== undefined || !businessId || !companyId || !ID.test(businessId) || !ID.test(companyId)) {
      throw new ConfigError(`${setting}: "${entry}" is not businessId=companyId`);
    }
    if (links.some((l) => l.businessId === businessId)) throw new ConfigError(`${setting}: business ${businessId} is linked twice`);
    links.push({ businessId, companyId });
  }
  return links;
}

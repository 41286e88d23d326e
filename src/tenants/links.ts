/** The file's links from a business to an accounting company, checked against what both services' keys can see. */
import { someIds } from './assignment.js';
import type { AccountingProbe, ComplianceProbe } from './probes.js';
import type { TenantLink } from './types.js';

/** `singleKey`: the single-key variables' compliance key, whose RECONCILE_LINKS are said as the keys see them. */
export function resolveLinks(
  links: readonly TenantLink[],
  served: ReadonlyMap<string, ComplianceProbe>,
  accounting: ReadonlyMap<string, AccountingProbe | undefined>,
  singleKey: ComplianceProbe | undefined,
) {
  const problems: string[] = [];
  const resolved: Array<TenantLink & { compliance: string }> = [];
  const companyLink = new Map<string, TenantLink>();
  for (const link of links) {
    const compliance = served.get(link.businessId);
    const sees = singleKey?.businesses.map((b) => b.id);
    if (!compliance && sees && !sees.includes(link.businessId)) {
      problems.push(
        `${link.source}: business ${link.businessId} is not one the compliance API key may act for ` +
          `(it sees: ${sees.join(', ') || 'none'})`,
      );
    } else if (!compliance) {
      problems.push(`${link.source}: business ${link.businessId} is served by no compliance application`);
    }
    // Undefined also when its key was refused, which is reported already.
    const probe = accounting.get(link.accounting);
    if (!accounting.has(link.accounting)) {
      problems.push(`${link.source}: accounting application "${link.accounting}" is not configured`);
    } else if (probe && !probe.companies.includes(link.companyId)) {
      problems.push(
        singleKey
          ? `${link.source}: accounting company ${link.companyId} is not visible to the accounting API key`
          : `${link.source}: company ${link.companyId} is not one accounting application "${link.accounting}" can ` +
              `see (it sees ${someIds(probe.companies)})`,
      );
    }
    const earlier = companyLink.get(link.companyId);
    if (earlier && earlier.accounting !== link.accounting) {
      problems.push(
        `${link.source}: company ${link.companyId} is linked through accounting application "${link.accounting}" ` +
          `here and "${earlier.accounting}" in ${earlier.source}`,
      );
    } else if (!earlier) {
      companyLink.set(link.companyId, link);
    }
    if (compliance) resolved.push({ ...link, compliance: compliance.tenant.application });
  }
  return {
    resolved,
    companyApplication: new Map([...companyLink].map(([company, link]) => [company, link.accounting])),
    problems,
  };
}

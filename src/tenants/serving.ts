/** docs/tenancy.md, "Which application serves a business", from the file and what the keys answered. */
import type { Business } from '../compliance/schemas.js';
import type { Logger } from '../logger.js';
import { BUSINESS_ENVIRONMENT, keyRule, type AccountingProbe, type ComplianceProbe } from './probes.js';
import type { ApplicationName, TenantLink } from './types.js';

export interface ResolvedTenantLink extends TenantLink {
  compliance: ApplicationName;
}

export function someIds(ids: readonly string[], max = 10): string {
  if (ids.length === 0) return 'none';
  const shown = ids.slice(0, max).join(', ');
  return ids.length > max ? `${shown} and ${ids.length - max} more` : shown;
}

export function duplicateNames(entries: ReadonlyArray<{ application: ApplicationName; source: string }>): string[] {
  const first = new Map<ApplicationName, string>();
  const problems: string[] = [];
  for (const entry of entries) {
    const earlier = first.get(entry.application);
    if (earlier === undefined) first.set(entry.application, entry.source);
    else problems.push(`${entry.source}: application name "${entry.application}" is also the name of ${earlier}`);
  }
  return problems;
}

/** Why `probe`'s key cannot serve the listed business `id`, with what the other entries show of it. */
function unknownBusiness(probe: ComplianceProbe, id: string, probes: readonly ComplianceProbe[]): string {
  const { source } = probe.tenant;
  const own = BUSINESS_ENVIRONMENT[probe.environment];
  const reachable = someIds(probe.businesses.map((b) => b.id));
  const unknown = `${source}: unknown business ${id}: the key cannot act for it (it can act for ${reachable})`;
  for (const other of probes) {
    if (other === probe) continue;
    const business = other.businesses.find((b) => b.id === id);
    if (!business) continue;
    const environment =
      business.environment === 'sandbox' || business.environment === 'production'
        ? business.environment
        : BUSINESS_ENVIRONMENT[other.environment];
    if (environment !== own) {
      const rule = keyRule(probe.environment, 'sentence');
      return `${source}: business ${id} is a ${environment} business (${other.tenant.source} lists it); ${rule}`;
    }
    return `${unknown}; the key of ${other.tenant.source} can`;
  }
  return `${unknown}; this is ${keyRule(probe.environment, 'clause')}`;
}

/** A listed business whose environment the service reports as the other one (a listing the contract rules out). */
function crossedEnvironment(probe: ComplianceProbe, business: Business): string | undefined {
  const own = BUSINESS_ENVIRONMENT[probe.environment];
  if (business.environment === undefined || business.environment === own) return undefined;
  const rule = keyRule(probe.environment, 'sentence');
  return `${probe.tenant.source}: business ${business.id} is a ${business.environment} business; ${rule}`;
}

export function assignBusinesses(
  probes: readonly ComplianceProbe[],
  logger: Logger | undefined,
): { owner: Map<string, ComplianceProbe>; problems: string[] } {
  const problems: string[] = [];
  const explicit = new Map<string, ComplianceProbe>();
  for (const probe of probes) {
    const listed = probe.tenant.businesses;
    if (listed === undefined) continue;
    for (const id of new Set(listed)) {
      const earlier = explicit.get(id);
      if (earlier) {
        const entries = `${earlier.tenant.source} and ${probe.tenant.source}`;
        problems.push(`business ${id} is listed under two entries, ${entries}: list it under one`);
        continue;
      }
      explicit.set(id, probe);
      const business = probe.businesses.find((b) => b.id === id);
      const problem = business ? crossedEnvironment(probe, business) : unknownBusiness(probe, id, probes);
      if (problem) problems.push(problem);
    }
  }
  const implicit = new Map<string, ComplianceProbe>();
  const contested = new Set<string>();
  for (const probe of probes) {
    if (probe.tenant.businesses !== undefined) continue;
    for (const business of probe.businesses) {
      const listedBy = explicit.get(business.id);
      if (listedBy) {
        logger?.debug(
          { business: business.id, servedBy: listedBy.tenant.application, alsoReachableBy: probe.tenant.application },
          'business served by the entry that lists it',
        );
        continue;
      }
      const crossed = crossedEnvironment(probe, business);
      if (crossed) {
        problems.push(crossed);
        continue;
      }
      const earlier = implicit.get(business.id);
      if (!earlier) {
        implicit.set(business.id, probe);
      } else if (!contested.has(business.id)) {
        contested.add(business.id);
        problems.push(
          `business ${business.id} can be served by two entries, ${earlier.tenant.source} and ${probe.tenant.source} ` +
            '(neither lists its businesses, and both keys can act for it): list it under the one that should serve it',
        );
      }
    }
  }
  return { owner: new Map([...explicit, ...implicit]), problems };
}

/** `singleKey`: the single-key variables' compliance key, whose RECONCILE_LINKS are said as the keys see them. */
export function resolveLinks(
  links: readonly TenantLink[],
  served: ReadonlyMap<string, ComplianceProbe>,
  accounting: ReadonlyMap<ApplicationName, AccountingProbe | undefined>,
  singleKey: ComplianceProbe | undefined,
): { resolved: ResolvedTenantLink[]; companyApplication: Map<string, ApplicationName>; problems: string[] } {
  const problems: string[] = [];
  const resolved: ResolvedTenantLink[] = [];
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
    if (!accounting.has(link.accounting)) {
      problems.push(`${link.source}: accounting application "${link.accounting}" is not configured`);
    } else {
      // Undefined: its key was refused, which is reported already.
      const probe = accounting.get(link.accounting);
      if (probe && !probe.companies.includes(link.companyId) && singleKey) {
        problems.push(`${link.source}: accounting company ${link.companyId} is not visible to the accounting API key`);
      } else if (probe && !probe.companies.includes(link.companyId)) {
        problems.push(
          `${link.source}: company ${link.companyId} is not one accounting application "${link.accounting}" can ` +
            `see (it sees ${someIds(probe.companies)})`,
        );
      }
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

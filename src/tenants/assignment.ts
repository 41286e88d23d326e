/** Which application serves each business: the file's lists first, then what each key alone can act for. */
import type { Business } from '../compliance/schemas.js';
import type { Logger } from '../logger.js';
import { BUSINESS_ENVIRONMENT, keyRule, type ComplianceProbe } from './probes.js';
import type { ComplianceTenant } from './types.js';

/** Why `probe`'s key cannot serve the listed business `id`, with what the other entries show of it. */
function unknownBusiness(probe: ComplianceProbe, id: string, probes: readonly ComplianceProbe[]): string {
  const { source } = probe.tenant;
  const own = BUSINESS_ENVIRONMENT[probe.environment];
  const reachable = someIds(probe.businesses.map((b) => b.id));
  const unknown = `${source}: unknown business ${id}: the key cannot act for it (it can act for ${reachable})`;
  const other = probes.find((candidate) => candidate !== probe && candidate.businesses.some((b) => b.id === id));
  if (!other) return `${unknown}; this is ${keyRule(probe.environment, 'clause')}`;
  const listed = other.businesses.find((b) => b.id === id)!.environment;
  const environment =
    listed === 'sandbox' || listed === 'production' ? listed : BUSINESS_ENVIRONMENT[other.environment];
  if (environment !== own) {
    const rule = keyRule(probe.environment, 'sentence');
    return `${source}: business ${id} is a ${environment} business (${other.tenant.source} lists it); ${rule}`;
  }
  return `${unknown}; the key of ${other.tenant.source} can`;
}

/** A listed business whose environment the service reports as the other one (a listing the contract rules out). */
function crossedEnvironment(probe: ComplianceProbe, business: Business): string | undefined {
  const own = BUSINESS_ENVIRONMENT[probe.environment];
  if (business.environment === undefined || business.environment === own) return undefined;
  const rule = keyRule(probe.environment, 'sentence');
  return `${probe.tenant.source}: business ${business.id} is a ${business.environment} business; ${rule}`;
}

export function assignBusinesses(probes: readonly ComplianceProbe[], logger: Logger | undefined) {
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

/** Businesses awaited entries list (taken back from unlisting owners), or, when one lists none, any not served. */
export function holdForAwaited(awaited: readonly ComplianceTenant[], owner: Map<string, ComplianceProbe>) {
  const listed = new Set(awaited.flatMap((tenant) => tenant.businesses ?? []));
  for (const id of listed) if (owner.get(id)?.tenant.businesses === undefined) owner.delete(id);
  const anyUnlisted = awaited.some((tenant) => tenant.businesses === undefined);
  return (businessId: string) => !owner.has(businessId) && (anyUnlisted || listed.has(businessId));
}

export function someIds(ids: readonly string[], max = 10): string {
  if (ids.length === 0) return 'none';
  const shown = ids.slice(0, max).join(', ');
  return ids.length > max ? `${shown} and ${ids.length - max} more` : shown;
}

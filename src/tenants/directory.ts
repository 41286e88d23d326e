/** The tenants resolved against the services (docs/tenancy.md): which application serves a business, a client each. */
import type { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import { ConfigError } from '../config/env.js';
import { RateLimitGate } from '../http/rate-limit-gate.js';
import type { HttpObserver } from '../http/transport.js';
import type { Logger } from '../logger.js';
import type { Business } from '../compliance/schemas.js';
import {
  BUSINESS_ENVIRONMENT,
  keyRule,
  entryDigest,
  mapBounded,
  probeAccounting,
  probeComplianceOnce,
  type AccountingProbe,
  type ComplianceProbe,
  type Outcome,
  variableFailure,
} from './probes.js';
import { warnSharedWindows } from './budget-windows.js';
import { ENVIRONMENT_ORIGIN } from './single-key.js';
import type { AccountingTenant, ComplianceTenant, TenantLink, TenantsConfig } from './types.js';

export type TenantDirectory = Awaited<ReturnType<typeof resolveTenantDirectory>>;
/** What is known of one compliance entry once resolved: everything but its key. */
export type ComplianceApplication = ReturnType<TenantDirectory['applications']>[number];
/** An entry left out because its service was down when asked; `reason` never names the key. */
export interface AwaitedEntry {
  service: 'compliance' | 'accounting';
  application: string;
  source: string;
  reason: string;
}

export interface ResolveTenantDirectoryOptions {
  /** Entries asked at once: hundreds of keys must not open hundreds of connections at start-up. */
  concurrency?: number;
  /** By service application id, kept across reloads: a rotated key keeps pacing against the window still counted. */
  gates?: Map<string, RateLimitGate>;
  /** Earlier answers by entryDigest, so a reload asks only the entries that changed; pruned to this resolution's. */
  complianceProbes?: Map<string, ComplianceProbe>;
  observerFor?: (application: ComplianceApplication) => HttpObserver | undefined;
  logger?: Logger;
  /** An entry whose service is down is listed by `awaited()`, its businesses and links held, instead of failing. */
  awaitOutages?: boolean;
}

/** The file asks for what the services do not allow: every problem, each naming its entry. */
export class TenantConfigError extends ConfigError {
  override readonly name: string = 'TenantConfigError';

  constructor(
    origin: string,
    readonly problems: readonly string[],
  ) {
    super(summary(origin, problems));
  }
}

/** A service could not be asked about a tenant: not the file's fault; a retry may pass. */
export class TenantServiceError extends Error {
  override readonly name = 'TenantServiceError';

  constructor(
    origin: string,
    readonly failures: readonly string[],
  ) {
    super(summary(origin, failures));
  }
}

function summary(origin: string, lines: readonly string[]): string {
  return lines.length === 1
    ? lines[0]!
    : `${origin}: ${lines.length} problems:\n${lines.map((line) => `  - ${line}`).join('\n')}`;
}

const DEFAULT_CONCURRENCY = 8;
// Longest wait for an application's rate-limit window to reset before a call is handed back.
const HOLD_MS = 10_000;

/** Throws TenantConfigError (every problem of the file) or TenantServiceError, leaving nothing open. */
export async function resolveTenantDirectory(tenants: TenantsConfig, options: ResolveTenantDirectoryOptions = {}) {
  const { logger } = options;
  const singleKey = tenants.origin === ENVIRONMENT_ORIGIN;
  const problems = [...duplicateNames(tenants.compliance), ...duplicateNames(tenants.accounting)];
  const failures: string[] = [];
  const awaited: AwaitedEntry[] = [];
  const awaitedCompliance: ComplianceTenant[] = [];
  type Answer =
    | { service: 'compliance'; tenant: ComplianceTenant; outcome: Outcome<ComplianceProbe> }
    | { service: 'accounting'; tenant: AccountingTenant; outcome: Outcome<AccountingProbe> };
  const answers = await mapBounded<ComplianceTenant | AccountingTenant, Answer>(
    [...tenants.compliance, ...tenants.accounting],
    options.concurrency ?? DEFAULT_CONCURRENCY,
    async (tenant) =>
      'requestsPerMinute' in tenant
        ? { service: 'compliance', tenant, outcome: await probeComplianceOnce(tenant, options.complianceProbes) }
        : { service: 'accounting', tenant, outcome: await probeAccounting(tenant) },
  );
  if (options.complianceProbes) {
    const current = new Set(tenants.compliance.map(entryDigest));
    for (const digest of options.complianceProbes.keys())
      if (!current.has(digest)) options.complianceProbes.delete(digest);
  }
  const complianceProbes: ComplianceProbe[] = [];
  // By name; undefined for an entry whose key was refused.
  const accountingProbes = new Map<string, AccountingProbe | undefined>();
  const openAccounting: AccountingClient[] = [];
  for (const answer of answers) {
    const { service, outcome, tenant } = answer;
    if (options.awaitOutages && 'failure' in outcome && outcome.outage) {
      const reason = singleKey ? variableFailure(service, tenant.service, outcome.error) : outcome.failure;
      awaited.push({ service, application: tenant.application, source: tenant.source, reason });
      if (answer.service === 'compliance') awaitedCompliance.push(answer.tenant);
      continue;
    }
    // The single-key variables' keys are named as variables, and stop the start as a failure would.
    if (singleKey && 'error' in outcome) failures.push(variableFailure(service, tenant.service, outcome.error));
    else if ('problem' in outcome) problems.push(outcome.problem);
    else if ('failure' in outcome) failures.push(outcome.failure);
    if (answer.service === 'compliance') {
      if ('ok' in answer.outcome) complianceProbes.push(answer.outcome.ok);
      continue;
    }
    const probe = 'ok' in answer.outcome ? answer.outcome.ok : undefined;
    if (probe) openAccounting.push(probe.client);
    if (!accountingProbes.has(tenant.application)) accountingProbes.set(tenant.application, probe);
  }
  const closeAccounting = () => Promise.all(openAccounting.map((client) => client.close()));

  if (failures.length > 0) {
    await closeAccounting();
    throw new TenantServiceError(tenants.origin, [...failures, ...problems]);
  }
  const assigned = assignBusinesses(complianceProbes, logger);
  problems.push(...assigned.problems);
  const awaits = holdForAwaited(awaitedCompliance, assigned.owner);
  const awaitedAccounting = new Set(awaited.filter((a) => a.service === 'accounting').map((a) => a.application));
  // Settled once the entries they depend on answer (every link then checked as at any start).
  const linksNow = tenants.links.filter((l) => !awaitedAccounting.has(l.accounting) && !awaits(l.businessId));
  const links = resolveLinks(linksNow, assigned.owner, accountingProbes, singleKey ? complianceProbes[0] : undefined);
  problems.push(...links.problems);
  if (problems.length > 0) {
    await closeAccounting();
    throw new TenantConfigError(tenants.origin, problems);
  }
  // What each key may do, as the service says: a key without the scope a sale needs is seen here, not at the till.
  const keys = complianceProbes.map(({ tenant, identity, environment }) => ({
    application: tenant.application,
    environment,
    scopes: identity.apiKey?.scopes ?? null,
  }));
  if (complianceProbes.length > 0 || awaited.length === 0) logger?.info({ keys }, 'compliance keys accepted');

  const applications = complianceProbes.map((probe) => {
    const { tenant, identity, serviceLimit } = probe;
    // The file's order for listed businesses, the service's for the rest.
    const candidates = tenant.businesses ? new Set(tenant.businesses) : probe.businesses.map((b) => b.id);
    return {
      application: tenant.application,
      source: tenant.source,
      // COMPLIANCE_REQUESTS_PER_MINUTE is taken as given; a file's budget is capped by the service's own limit.
      requestsPerMinute:
        serviceLimit === undefined || singleKey
          ? tenant.requestsPerMinute
          : Math.min(tenant.requestsPerMinute, serviceLimit),
      configuredRequestsPerMinute: tenant.requestsPerMinute,
      serviceRequestsPerMinute: serviceLimit,
      serviceApplicationId: identity.application?.id,
      businesses: [...candidates].filter((id) => assigned.owner.get(id) === probe),
    };
  });
  const gates = options.gates ?? new Map<string, RateLimitGate>();
  const gateOf = (application: (typeof applications)[number]) => {
    const perMinute = application.requestsPerMinute;
    const newGate = () => new RateLimitGate({ holdUpToMs: HOLD_MS, perMinute });
    if (application.serviceApplicationId === undefined) return newGate();
    let gate = gates.get(application.serviceApplicationId);
    if (!gate) gates.set(application.serviceApplicationId, (gate = newGate()));
    // A reloaded file may pace the application differently: the window already counted stays.
    gate.limitTo(perMinute);
    return gate;
  };
  const complianceClients = new Map<string, ComplianceClient>();
  applications.forEach((application, index) => {
    const observer = options.observerFor?.(application);
    const client = new ComplianceClient({
      ...complianceProbes[index]!.tenant.service,
      credentialSetting: application.source,
      rateLimitGate: gateOf(application),
      ...(observer ? { observer } : {}),
      // A delay the service asks for beyond its bound is logged with the worker's own lines.
      ...(logger ? { logger } : {}),
    });
    complianceClients.set(application.application, client);
    if (application.requestsPerMinute < application.configuredRequestsPerMinute) {
      logger?.warn(
        {
          application: application.application,
          configured: application.configuredRequestsPerMinute,
          service: application.serviceRequestsPerMinute,
        },
        'application paced to the service’s own limit, lower than the tenants file’s requests per minute',
      );
    }
  });
  warnSharedWindows(applications, logger);
  const accountingApplications = [...accountingProbes.values()].flatMap((probe) =>
    probe ? [{ application: probe.tenant.application, source: probe.tenant.source, companies: probe.companies }] : [],
  );
  const accountingClients = new Map(
    [...accountingProbes].flatMap(([name, probe]) => (probe ? [[name, probe.client] as const] : [])),
  );
  const owner = new Map([...assigned.owner].map(([business, probe]) => [business, probe.tenant.application]));
  let closing: Promise<void> | undefined;

  return {
    origin: tenants.origin,
    applicationOf: (businessId: string) => owner.get(businessId),
    applications: () => applications,
    accountingApplications: () => accountingApplications,
    accountingApplicationOf: (companyId: string) => links.companyApplication.get(companyId),
    links: () => links.resolved,
    awaited: () => awaited,
    awaits,
    complianceClient: (application: string) => complianceClients.get(application),
    accountingClient: (application: string) => accountingClients.get(application),
    close: () =>
      (closing ??= Promise.all(
        [...complianceClients.values(), ...accountingClients.values()].map((client) => client.close()),
      ).then(() => undefined)),
  };
}

/** Businesses awaited entries list (taken back from unlisting owners), or, when one lists none, any not served. */
function holdForAwaited(awaited: readonly ComplianceTenant[], owner: Map<string, ComplianceProbe>) {
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

function duplicateNames(entries: ReadonlyArray<{ application: string; source: string }>): string[] {
  const first = new Map<string, string>();
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

function assignBusinesses(probes: readonly ComplianceProbe[], logger: Logger | undefined) {
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
function resolveLinks(
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

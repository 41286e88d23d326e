/**
 * The tenants resolved against the services (docs/tenancy.md): each key asked, its businesses assigned, a client each.
 */
import type { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import { ConfigError } from '../config/env.js';
import { RateLimitGate } from '../http/rate-limit-gate.js';
import type { HttpObserver } from '../http/transport.js';
import type { Logger } from '../logger.js';
import { assignBusinesses, holdForAwaited } from './assignment.js';
import {
  entryDigest,
  mapBounded,
  probeAccounting,
  probeComplianceOnce,
  type AccountingProbe,
  type ComplianceProbe,
  type Outcome,
  variableFailure,
} from './probes.js';
import { budgetWindows, warnSharedWindows } from './budget-windows.js';
import { resolveLinks } from './links.js';
import { ENVIRONMENT_ORIGIN } from './single-key.js';
import type { AccountingTenant, ComplianceTenant, TenantsConfig } from './types.js';

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

export const DEFAULT_CONCURRENCY = 8;
// Longest wait for an application's rate-limit window to reset before a call is handed back.
const HOLD_MS = 10_000;

/** Throws TenantConfigError (every problem of the file) or TenantServiceError, leaving nothing open. */
export async function resolveTenantDirectory(tenants: TenantsConfig, options: ResolveTenantDirectoryOptions = {}) {
  const { logger } = options;
  const singleKey = tenants.origin === ENVIRONMENT_ORIGIN;
  const problems: string[] = [];
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
  // Worked out once: a placement is asked for every sale.
  const windows = budgetWindows({ applications: () => applications });
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
    /** Every business a compliance application serves, in the tenants' order. */
    businesses: () => applications.flatMap((application) => application.businesses),
    budgetWindow: (fairnessKey: string) => windows.find((window) => window.fairnessKey === fairnessKey),
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

/** For the worker's `workers ready`: where the services are and what is served, never a key. */
export function describeTenants(tenants: TenantsConfig, directory: TenantDirectory): Record<string, unknown> {
  const urls = (entries: ReadonlyArray<{ service: { baseUrl: string } }>) =>
    [...new Set(entries.map((entry) => entry.service.baseUrl))].join(', ');
  const awaited = directory.awaited().map((entry) => `${entry.service} ${entry.application}`);
  return {
    services: { compliance: urls(tenants.compliance), accounting: urls(tenants.accounting) },
    tenants: {
      origin: directory.origin,
      businesses: directory.businesses().length,
      compliance: directory.applications().map(({ application, businesses, requestsPerMinute }) => ({
        application,
        businesses: businesses.length,
        requestsPerMinute,
      })),
      accounting: directory
        .accountingApplications()
        .map(({ application, companies }) => ({ application, companies: companies.length })),
      links: directory.links().length,
      ...(awaited.length > 0 ? { awaited } : {}),
    },
  };
}

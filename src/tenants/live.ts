/**
 * The tenants a worker process serves, replaceable while it runs: each replacement is resolved as start-up resolves
 * (a file that would not start a worker is refused, the tenants served stay as they were). docs/tenancy.md,
 * "Onboarding, offboarding and key rotation without a restart", says what a change does to work under way.
 */
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import type { ApplicationName, TenantsConfig } from './types.js';
import type { RateLimitGate } from '../http/rate-limit-gate.js';
import {
  resolveTenantDirectory,
  type ComplianceApplication,
  type ResolveTenantDirectoryOptions,
  type TenantDirectory,
} from './directory.js';
import type { ComplianceProbe } from './probes.js';

/** Longer than an activity's start-to-close timeout (60 s): a call in flight on a replaced client ends first. */
const DRAIN_GRACE_MS = 2 * 60_000;

export interface TenantsChange {
  businessesAdded: string[];
  businessesRemoved: string[];
  applicationsAdded: ApplicationName[];
  applicationsRemoved: ApplicationName[];
  businessesMoved: string[];
}

interface ComplianceRoute {
  application: ComplianceApplication;
  client: ComplianceClient;
  /** False for a business removed from the tenants whose work under way is being finished. */
  serving: boolean;
}

export interface LiveTenants {
  current(): TenantDirectory;
  /** A business's application now, or the one finishing its work. */
  routeOf(businessId: string): ComplianceRoute | undefined;
  /** Serves `config` from now on; throws as resolveTenantDirectory does, leaving the tenants served unchanged. */
  replace(config: TenantsConfig): Promise<TenantsChange>;
  close(): Promise<void>;
}

export async function openLiveTenants(
  config: TenantsConfig,
  options: Omit<ResolveTenantDirectoryOptions, 'gates' | 'complianceProbes'> & { drainGraceMs?: number } = {},
): Promise<LiveTenants> {
  const gates = new Map<string, RateLimitGate>();
  const complianceProbes = new Map<string, ComplianceProbe>();
  const resolve = (tenants: TenantsConfig) => resolveTenantDirectory(tenants, { ...options, gates, complianceProbes });
  let current = await resolve(config);
  // Removed businesses whose work under way is finished with the application that served them.
  const drained = new Map<string, { directory: TenantDirectory; application: ComplianceApplication }>();
  const retired = new Set<TenantDirectory>();
  const timers = new Set<NodeJS.Timeout>();
  let replacing: Promise<unknown> = Promise.resolve();

  const applicationOf = (directory: TenantDirectory, businessId: string): ComplianceApplication | undefined => {
    const name = directory.applicationOf(businessId);
    return name === undefined ? undefined : directory.applications().find((a) => a.application === name);
  };
  const closeWhenUnused = (directory: TenantDirectory) => {
    retired.add(directory);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if ([...drained.values()].some((d) => d.directory === directory)) return; // closed with the process
      retired.delete(directory);
      void directory.close();
    }, options.drainGraceMs ?? DRAIN_GRACE_MS);
    timer.unref();
    timers.add(timer);
  };

  const swap = async (tenants: TenantsConfig): Promise<TenantsChange> => {
    const next = await resolve(tenants);
    const previous = current;
    const change = changeBetween(previous, next);
    for (const businessId of change.businessesRemoved) {
      const application = applicationOf(previous, businessId);
      if (application) drained.set(businessId, { directory: previous, application });
    }
    for (const application of next.applications())
      for (const businessId of application.businesses) drained.delete(businessId);
    current = next;
    closeWhenUnused(previous);
    options.logger?.info({ origin: tenants.origin, ...counts(change) }, 'tenants replaced');
    return change;
  };

  return {
    current: () => current,
    routeOf: (businessId) => {
      const application = applicationOf(current, businessId);
      const client = application && current.complianceClient(application.application);
      if (application && client) return { application, client, serving: true };
      const old = drained.get(businessId);
      const oldClient = old?.directory.complianceClient(old.application.application);
      return old && oldClient ? { application: old.application, client: oldClient, serving: false } : undefined;
    },
    // One replacement at a time: two overlapping ones would each drain from a directory the other replaced.
    replace: (tenants) => {
      const run = replacing.then(() => swap(tenants));
      replacing = run.catch(() => undefined);
      return run;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all([current, ...retired].map((directory) => directory.close()));
    },
  };
}

function servedBusinesses(directory: TenantDirectory): Map<string, ApplicationName> {
  return new Map(directory.applications().flatMap((a) => a.businesses.map((b) => [b, a.application] as const)));
}

function changeBetween(previous: TenantDirectory, next: TenantDirectory): TenantsChange {
  const before = servedBusinesses(previous);
  const after = servedBusinesses(next);
  const namesBefore = new Set(previous.applications().map((a) => a.application));
  const namesAfter = new Set(next.applications().map((a) => a.application));
  return {
    businessesAdded: [...after.keys()].filter((b) => !before.has(b)),
    businessesRemoved: [...before.keys()].filter((b) => !after.has(b)),
    businessesMoved: [...after].filter(([b, a]) => before.has(b) && before.get(b) !== a).map(([b]) => b),
    applicationsAdded: [...namesAfter].filter((a) => !namesBefore.has(a)),
    applicationsRemoved: [...namesBefore].filter((a) => !namesAfter.has(a)),
  };
}

function counts(change: TenantsChange): Record<string, number | string[]> {
  // Names of applications are operator's words and bounded by the file; businesses are counted, not listed.
  return {
    applicationsAdded: change.applicationsAdded,
    applicationsRemoved: change.applicationsRemoved,
    businessesAdded: change.businessesAdded.length,
    businessesRemoved: change.businessesRemoved.length,
    businessesMoved: change.businessesMoved.length,
  };
}

/** The accounting client of a company (undefined when none is linked for it). */
export function accountingClientOf(
  directory: TenantDirectory,
  companyId: string | undefined,
): AccountingClient | undefined {
  const linked = companyId === undefined ? undefined : directory.accountingApplicationOf(companyId);
  const applications = directory.accountingApplications();
  // One accounting application serves every company, linked or not, as the single-key worker always did.
  const application = linked ?? (applications.length === 1 ? applications[0]!.application : undefined);
  return application === undefined ? undefined : directory.accountingClient(application);
}

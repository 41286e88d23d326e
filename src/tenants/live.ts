/** The tenants a worker serves, replaceable while it runs (docs/tenancy.md, "…without a restart"). */
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
import { askAgainUntilAnswered, stillDown, type OutageRetry } from './awaited.js';

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
  /** False for a removed business whose work under way is being finished. */
  serving: boolean;
}

export interface LiveTenants {
  current(): TenantDirectory;
  /** A business an entry whose service was down at start may serve: its calls wait instead of being refused. */
  awaits(businessId: string): boolean;
  awaitsAccounting(): boolean;
  /** A business's application now, or the one finishing its work. */
  routeOf(businessId: string): ComplianceRoute | undefined;
  /** Throws as resolveTenantDirectory does, leaving the tenants served unchanged. */
  replace(config: TenantsConfig): Promise<TenantsChange>;
  close(): Promise<void>;
}

interface OpenLiveTenantsOptions extends Omit<
  ResolveTenantDirectoryOptions,
  'gates' | 'complianceProbes' | 'awaitOutages'
> {
  /** Start while a service is down, asking its entries again with this backoff; else an outage fails the start. */
  awaitOutages?: OutageRetry & { onAwaitedServed?: (change: TenantsChange) => void };
}

export async function openLiveTenants(
  config: TenantsConfig,
  options: OpenLiveTenantsOptions = {},
): Promise<LiveTenants> {
  const { awaitOutages, ...resolveOptions } = options;
  const gates = new Map<string, RateLimitGate>();
  const complianceProbes = new Map<string, ComplianceProbe>();
  const resolve = (tenants: TenantsConfig, deferOutages = false) =>
    resolveTenantDirectory(tenants, { ...resolveOptions, gates, complianceProbes, awaitOutages: deferOutages });
  let current = await resolve(config, awaitOutages !== undefined);
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
    }, DRAIN_GRACE_MS);
    timer.unref();
    timers.add(timer);
  };

  const install = (tenants: TenantsConfig, next: TenantDirectory): TenantsChange => {
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
  // One replacement at a time: two overlapping ones would each drain from a directory the other replaced.
  const serially = <T>(run: () => Promise<T>): Promise<T> => {
    const result = replacing.then(run);
    replacing = result.catch(() => undefined);
    return result;
  };

  const askingAgain =
    awaitOutages && current.awaited().length > 0
      ? askAgainUntilAnswered({
          retry: awaitOutages,
          awaited: current.awaited(),
          logger: options.logger,
          // The file as it was at start: a reload served since (a full resolution) settles everything, and ends this.
          attempt: () =>
            serially(async () => {
              const awaited = current.awaited();
              if (awaited.length === 0) return [];
              const down = await stillDown(config, awaited, complianceProbes);
              if (down.length === awaited.length) return down;
              const next = await resolve(config, true);
              // Served only when it settles more than is served now, and drops nothing served (an accounting key is
              // asked again each time, and its service may be the one down now).
              const before = new Set(current.awaited().map((entry) => entry.source));
              const after = next.awaited().map((entry) => entry.source);
              if (after.length >= before.size || after.some((source) => !before.has(source))) {
                await next.close();
                return next.awaited();
              }
              const change = install(config, next);
              awaitOutages.onAwaitedServed?.(change);
              return next.awaited();
            }),
        })
      : undefined;

  return {
    current: () => current,
    awaits: (businessId) => current.awaits(businessId),
    awaitsAccounting: () => current.awaited().some((entry) => entry.service === 'accounting'),
    routeOf: (businessId) => {
      const application = applicationOf(current, businessId);
      const client = application && current.complianceClient(application.application);
      if (application && client) return { application, client, serving: true };
      const old = drained.get(businessId);
      const oldClient = old?.directory.complianceClient(old.application.application);
      return old && oldClient ? { application: old.application, client: oldClient, serving: false } : undefined;
    },
    replace: (tenants) => serially(async () => install(tenants, await resolve(tenants))),
    close: async () => {
      await askingAgain?.stop();
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

export function accountingClientOf(
  directory: TenantDirectory,
  companyId: string | undefined,
): AccountingClient | undefined {
  const linked = companyId === undefined ? undefined : directory.accountingApplicationOf(companyId);
  const applications = directory.accountingApplications();
  // One accounting application serves every company, linked or not, as the single-key worker always did; not while
  // another one is awaited, whose companies are its own.
  const alone = applications.length === 1 && !directory.awaited().some((entry) => entry.service === 'accounting');
  const application = linked ?? (alone ? applications[0]!.application : undefined);
  return application === undefined ? undefined : directory.accountingClient(application);
}

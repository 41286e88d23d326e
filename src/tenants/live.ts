// Replaceable while the worker runs. Why: docs/tenancy.md, "…without a restart", "…during an outage".
import { setTimeout as sleep } from 'node:timers/promises';
import type { StockInSettings } from '../contracts/stock-in.js';
import type { Logger } from '../logger.js';
import type { AccountingTenant, ComplianceTenant, TenantsConfig } from './types.js';
import type { RateLimitGate } from '../http/rate-limit-gate.js';
import {
  DEFAULT_CONCURRENCY,
  resolveTenantDirectory,
  type AwaitedEntry,
  type ComplianceApplication,
  type ResolveTenantDirectoryOptions,
  type TenantDirectory,
} from './directory.js';
import {
  errorText,
  mapBounded,
  probeAccounting,
  probeComplianceOnce,
  variableFailure,
  type AccountingProbe,
  type ComplianceProbe,
  type Outcome,
} from './probes.js';
import { ENVIRONMENT_ORIGIN } from './single-key.js';

/** Longer than an activity's start-to-close timeout (60 s): a call in flight on a replaced client ends first. */
const DRAIN_GRACE_MS = 2 * 60_000;

export type TenantsChange = ReturnType<typeof changeBetween>;
export type LiveTenants = Awaited<ReturnType<typeof openLiveTenants>>;

/** The first wait is doubled after each try that did not settle everything, up to the longest. */
export interface OutageRetry {
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export async function openLiveTenants(
  config: TenantsConfig,
  options: Omit<ResolveTenantDirectoryOptions, 'gates' | 'complianceProbes' | 'awaitOutages'> & {
    /** Start while a service is down, asking its entries again with this backoff; else an outage fails the start. */
    awaitOutages?: OutageRetry & { onAwaitedServed?: (change: TenantsChange) => void };
  } = {},
) {
  const { awaitOutages, ...resolveOptions } = options;
  const gates = new Map<string, RateLimitGate>();
  const complianceProbes = new Map<string, ComplianceProbe>();
  const resolve = (tenants: TenantsConfig, deferOutages = false) =>
    resolveTenantDirectory(tenants, { ...resolveOptions, gates, complianceProbes, awaitOutages: deferOutages });
  let current = await resolve(config, awaitOutages !== undefined);
  // Replaced with the directory it came with: a reload that the services refuse changes neither.
  let stockIn = stockInOf(config);
  // Removed businesses whose work under way is finished with the application that served them.
  const drained = new Map<string, { directory: TenantDirectory; application: ComplianceApplication }>();
  const retired = new Set<TenantDirectory>();
  const timers = new Set<NodeJS.Timeout>();

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
    stockIn = stockInOf(tenants);
    closeWhenUnused(previous);
    // Names of applications are operator's words and bounded by the file; businesses are counted, not listed.
    const { applicationsAdded, applicationsRemoved, ...businesses } = change;
    const counted = Object.fromEntries(Object.entries(businesses).map(([key, list]) => [key, list.length]));
    options.logger?.info(
      { origin: tenants.origin, applicationsAdded, applicationsRemoved, ...counted },
      'tenants replaced',
    );
    return change;
  };
  // One replacement at a time: two overlapping ones would each drain from a directory the other replaced.
  const serially = serialRunner();

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
              // Served only when it settles more than is served now, and drops nothing served.
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
    /** A business an entry whose service was down at start may serve: its calls wait instead of being refused. */
    awaits: (businessId: string) => current.awaits(businessId),
    awaitsAccounting: () => current.awaited().some((entry) => entry.service === 'accounting'),
    /** The stock-in settings the tenants served name for a business (a tenants file's `stockIn`). */
    stockIn: (businessId: string): StockInSettings | undefined => stockIn.get(businessId),
    /** A business's application now, or the one finishing its work (`serving` false). */
    routeOf: (businessId: string) => {
      const application = applicationOf(current, businessId);
      const client = application && current.complianceClient(application.application);
      if (application && client) return { application, client, serving: true };
      const old = drained.get(businessId);
      const oldClient = old?.directory.complianceClient(old.application.application);
      return old && oldClient ? { application: old.application, client: oldClient, serving: false } : undefined;
    },
    /** Throws as resolveTenantDirectory does, leaving the tenants served unchanged. */
    replace: (tenants: TenantsConfig) => serially(async () => install(tenants, await resolve(tenants))),
    close: async () => {
      await askingAgain?.stop();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all([current, ...retired].map((directory) => directory.close()));
    },
  };
}

/** Runs each function once those given before have settled, whatever their outcome. */
export function serialRunner() {
  let chain: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const result = chain.then(run);
    chain = result.catch(() => undefined);
    return result;
  };
}

function stockInOf(tenants: TenantsConfig): ReadonlyMap<string, StockInSettings> {
  return new Map((tenants.stockIn ?? []).map((entry) => [entry.businessId, entry.settings]));
}

function servedBusinesses(directory: TenantDirectory): Map<string, string> {
  return new Map(directory.applications().flatMap((a) => a.businesses.map((b) => [b, a.application] as const)));
}

function changeBetween(previous: TenantDirectory, next: TenantDirectory) {
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

export function accountingClientOf(directory: TenantDirectory, companyId: string | undefined) {
  const linked = companyId === undefined ? undefined : directory.accountingApplicationOf(companyId);
  const applications = directory.accountingApplications();
  // One accounting application serves every company, linked or not; not while another, awaited, may own them.
  const alone = applications.length === 1 && !directory.awaited().some((entry) => entry.service === 'accounting');
  const application = linked ?? (alone ? applications[0]!.application : undefined);
  return application === undefined ? undefined : directory.accountingClient(application);
}

/** Calls `attempt` after each wait until no entry is awaited; a refused answer is logged once and asked again. */
function askAgainUntilAnswered(options: {
  retry: OutageRetry;
  awaited: readonly AwaitedEntry[];
  attempt: () => Promise<readonly AwaitedEntry[]>;
  logger: Logger | undefined;
}): { stop(): Promise<void> } {
  const { logger } = options;
  const first = options.retry.firstDelayMs ?? 5_000;
  const max = Math.max(first, options.retry.maxDelayMs ?? 60_000);
  for (const entry of options.awaited) {
    logger?.warn(
      { service: entry.service, application: entry.application, entry: entry.source, cause: entry.reason },
      `the ${entry.service} service is unavailable: starting without this key, asked again until it answers ` +
        '(its businesses wait)',
    );
  }
  const stopping = new AbortController();
  const asking = (async () => {
    const refusals = new Set<string>();
    let waiting = options.awaited;
    let delayMs = first;
    while (waiting.length > 0) {
      await sleep(delayMs, undefined, { signal: stopping.signal, ref: false }).catch(() => undefined);
      if (stopping.signal.aborted) return;
      delayMs = Math.min(max, delayMs * 2);
      let still = waiting;
      try {
        still = await options.attempt();
      } catch (err) {
        const message = errorText(err);
        if (!refusals.has(message)) {
          refusals.add(message);
          logger?.error(
            { err: message },
            'a service answered again, but the tenants it settles were refused: still waiting for them',
          );
        }
      }
      const left = new Set(still.map((entry) => entry.source));
      for (const entry of waiting) {
        if (!left.has(entry.source))
          logger?.info({ service: entry.service, application: entry.application }, 'the awaited key answered: served');
      }
      waiting = still;
      if (stopping.signal.aborted) return;
      for (const entry of waiting) {
        logger?.debug(
          { application: entry.application, cause: entry.reason, retryInSeconds: delayMs / 1000 },
          'still waiting for the service',
        );
      }
    }
  })();

  return {
    stop: async () => {
      stopping.abort();
      await asking;
    },
  };
}

/** The awaited entries still down, asking only them (one request per key); an accepted answer is kept in `cache`. */
async function stillDown(config: TenantsConfig, awaited: readonly AwaitedEntry[], cache: Map<string, ComplianceProbe>) {
  const singleKey = config.origin === ENVIRONMENT_ORIGIN;
  const answers = await mapBounded(awaited, DEFAULT_CONCURRENCY, async (entry) => {
    const tenants: ReadonlyArray<ComplianceTenant | AccountingTenant> = config[entry.service];
    const tenant = tenants.find((candidate) => candidate.source === entry.source);
    if (!tenant) return undefined;
    const outcome: Outcome<ComplianceProbe | AccountingProbe> =
      'requestsPerMinute' in tenant ? await probeComplianceOnce(tenant, cache) : await probeAccounting(tenant);
    if ('ok' in outcome && 'client' in outcome.ok) await outcome.ok.client.close();
    if (!('failure' in outcome) || !outcome.outage) return undefined;
    const reason = singleKey ? variableFailure(entry.service, tenant.service, outcome.error) : outcome.failure;
    return { ...entry, reason };
  });
  return answers.filter((entry) => entry !== undefined);
}

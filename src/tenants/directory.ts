/**
 * Which application serves which business (issue 16): the tenants configuration resolved against the services at
 * start-up. Each compliance key is asked who it is (GET /v1/identity) and which businesses it can act for
 * (GET /v1/businesses); each accounting key which companies it sees. From the answers and the file, every business
 * gets exactly one application and every linked company one accounting application, or the start-up stops with
 * every problem of the file at once, each naming its tenant entry and none repeating a key.
 *
 * Rules, from the compliance contract (compliance-api.md, Authentication 2, 3, 6; Limits):
 * - A business one entry lists is served by that entry; listed under two entries, refused. An entry that lists
 *   none serves every business its key can act for that no entry lists. A business two such entries can reach is
 *   refused: the file must say which one serves it. Organisation-wide and business-bound keys of one organisation
 *   overlap by design (a key is one or the other, and both kinds list the same business), so overlap alone is no
 *   mistake; only an unsettled one is.
 * - A listed business the key cannot act for is refused. `cmp_sk_test_` keys act for sandbox businesses and
 *   `cmp_sk_live_` keys for production ones, and the service answers a crossing with the same 403 as any other
 *   refusal, so the environment is named from what is known: the key's (identity, else its prefix) and the
 *   business's (the `environment` of another entry's listing).
 * - A key refused (401, 403) is a configuration error naming the entry; a service that cannot be reached or fails
 *   is not (TenantServiceError): the same file may start fine a minute later.
 * - An application is paced to the file's requests per minute, or to the service's own limit (the
 *   `X-RateLimit-Limit` of its identity answer) when that is lower: pacing above it only draws 429s.
 * - Entries whose keys belong to one service application share that application's window, so their clients
 *   share one rate-limit gate.
 */
import { createHash } from 'node:crypto';
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import type { Business, Identity } from '../compliance/schemas.js';
import { CredentialFormatError } from '../config/credentials.js';
import { ConfigError } from '../config/env.js';
import type { AccountingTenant, ApplicationName, ComplianceTenant, TenantLink, TenantsConfig } from './types.js';
import { ApiError } from '../http/errors.js';
import { RateLimitGate } from '../http/rate-limit-gate.js';
import type { HttpObserver } from '../http/transport.js';
import type { Logger } from '../logger.js';

export type KeyEnvironment = 'test' | 'live';
export type BusinessEnvironment = 'sandbox' | 'production';

/** What is known of one compliance entry once resolved: everything but its key. */
export interface ComplianceApplication {
  application: ApplicationName;
  source: string;
  /** The budget the fleet paces it to: the file's, or the service's own limit when that is lower. */
  requestsPerMinute: number;
  configuredRequestsPerMinute: number;
  /** The service's limit for the application (`X-RateLimit-Limit`), when it said. */
  serviceRequestsPerMinute: number | undefined;
  /** The service's id of the application the key belongs to: entries with the same one share one window. */
  serviceApplicationId: string | undefined;
  /** The service's id of the key (an identifier, not the secret). */
  keyId: string | undefined;
  environment: KeyEnvironment;
  /** The one business a business-bound key acts for; null for an organisation-wide key. */
  boundBusinessId: string | null;
  scopes: readonly string[];
  /** Whether the file lists its businesses (else it serves those its key reaches that no entry lists). */
  listed: boolean;
  /** The businesses its key can act for. */
  reachable: readonly string[];
  /** The businesses it serves. */
  businesses: readonly string[];
}

export interface AccountingApplication {
  application: ApplicationName;
  source: string;
  /** The companies its key sees. */
  companies: readonly string[];
}

export interface ResolvedTenantLink extends TenantLink {
  /** The compliance application serving the business. */
  compliance: ApplicationName;
}

export interface TenantDirectory {
  /** Where the tenants were read from (for messages). */
  readonly origin: string;
  /** The application serving the business; undefined when none does. */
  applicationOf(businessId: string): ApplicationName | undefined;
  businessesOf(application: ApplicationName): readonly string[];
  /** Every compliance application, in the file's order. */
  applications(): readonly ComplianceApplication[];
  accountingApplications(): readonly AccountingApplication[];
  /** The accounting application a company is linked through; undefined when no link names it. */
  accountingApplicationOf(companyId: string): ApplicationName | undefined;
  links(): readonly ResolvedTenantLink[];
  complianceClient(application: ApplicationName): ComplianceClient | undefined;
  accountingClient(application: ApplicationName): AccountingClient | undefined;
  /** Closes every client. */
  close(): Promise<void>;
}

export interface ResolveTenantDirectoryOptions {
  /** Entries asked at once (default 8): hundreds of keys must not open hundreds of connections at start-up. */
  concurrency?: number;
  /** Longest wait for an application's rate-limit window to reset before a call is handed back (default 10 s). */
  holdUpToMs?: number;
  /**
   * The rate-limit gates of the service applications, by the service's application id: a directory resolved again
   * (the tenants file changed) passes the previous one's, so a rotated key or a moved business keeps pacing against
   * the window the service still counts.
   */
  gates?: Map<string, RateLimitGate>;
  /**
   * What earlier resolutions learnt of each compliance entry, by a digest of the entry (its key included): a directory
   * resolved again (the tenants file changed) asks only the entries that changed, so a change spends no budget of the
   * applications it does not touch. Pruned to the entries of this resolution.
   */
  complianceProbes?: Map<string, ComplianceProbe>;
  /** Sees every request and answer of an application's client (its metrics). */
  observerFor?: (application: ComplianceApplication) => HttpObserver | undefined;
  logger?: Logger;
}

/** The tenants file asks for what the services do not allow: every problem, each naming its entry. */
export class TenantConfigError extends ConfigError {
  override readonly name: string = 'TenantConfigError';

  constructor(
    origin: string,
    readonly problems: readonly string[],
  ) {
    super(summary(origin, problems));
  }
}

/** A service could not be asked about a tenant (unreachable, failing): not the file's fault; a retry may pass. */
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
/** As openServiceAccess holds the single application's calls. */
const DEFAULT_HOLD_MS = 10_000;
const COMPANY_PAGE_SIZE = 100;
const MAX_COMPANY_PAGES = 100;
/** Businesses or companies named in one message, at most. */
const LISTED_IN_MESSAGE = 10;

/** What asking one entry gave: its answers, a configuration problem, or a failure of the service. */
type Outcome<T> = { ok: T } | { problem: string } | { failure: string };

export interface ComplianceProbe {
  tenant: ComplianceTenant;
  identity: Identity;
  /** `X-RateLimit-Limit` of the identity answer. */
  serviceLimit: number | undefined;
  businesses: Business[];
  environment: KeyEnvironment;
}

interface AccountingProbe {
  tenant: AccountingTenant;
  client: AccountingClient;
  companies: string[];
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function idList(ids: readonly string[]): string {
  if (ids.length === 0) return 'none';
  const shown = ids.slice(0, LISTED_IN_MESSAGE).join(', ');
  return ids.length > LISTED_IN_MESSAGE ? `${shown} and ${ids.length - LISTED_IN_MESSAGE} more` : shown;
}

const BUSINESS_ENVIRONMENT: Record<KeyEnvironment, BusinessEnvironment> = { test: 'sandbox', live: 'production' };
const KEY_PREFIX: Record<KeyEnvironment, string> = { test: 'cmp_sk_test_', live: 'cmp_sk_live_' };

/** The identity's word when it gives one; else the prefix, which the contract ties to the environment. */
function keyEnvironment(identity: Identity, apiKey: string): KeyEnvironment {
  const said = identity.apiKey?.environment;
  if (said === 'live' || said === 'test') return said === 'live' ? 'live' : 'test';
  return apiKey.startsWith(KEY_PREFIX.live) ? 'live' : 'test';
}

/** "a test key (cmp_sk_test_) acts only for sandbox businesses", or as a clause: "…_), which acts only…". */
function keyRule(environment: KeyEnvironment, form: 'sentence' | 'clause'): string {
  const verb = form === 'clause' ? ', which acts' : ' acts';
  return `a ${environment} key (${KEY_PREFIX[environment]})${verb} only for ${BUSINESS_ENVIRONMENT[environment]} businesses`;
}

/** `run` over `items`, at most `limit` at once, results in the items' order. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

function complianceRefusal(tenant: ComplianceTenant, err: unknown): Outcome<never> {
  const where = `the compliance service at ${tenant.service.baseUrl}`;
  if (!(err instanceof ApiError))
    return { failure: `${tenant.source}: ${where} answered unexpectedly (${errorText(err)})` };
  const what = `${err.status ?? 'no answer'} ${err.code}`;
  if (err.status === undefined) return { failure: `${tenant.source}: ${where} cannot be reached (${err.message})` };
  if (err.status === 401) {
    return {
      problem: `${tenant.source}: ${where} refused the key (${what}): it is wrong, revoked or expired, or its application is suspended; the value is not shown`,
    };
  }
  if (err.status === 403) {
    const action = err.operation === 'getIdentity' ? 'read its identity' : 'list its businesses';
    return {
      problem: `${tenant.source}: the key is not allowed to ${action} at ${tenant.service.baseUrl} (${what}); the value is not shown`,
    };
  }
  return { failure: `${tenant.source}: ${where} failed ${err.operation} (${what})` };
}

/** What an entry says (where, which key, which businesses, what budget): equal digests ask the service the same. */
function entryDigest(tenant: ComplianceTenant): string {
  return createHash('sha256')
    .update(JSON.stringify([tenant.service, tenant.businesses ?? null, tenant.requestsPerMinute]))
    .digest('hex');
}

/** The entry's probe from `cache` when an earlier resolution asked the same, else asked now (and kept when accepted). */
async function probeComplianceOnce(
  tenant: ComplianceTenant,
  cache: Map<string, ComplianceProbe> | undefined,
): Promise<Outcome<ComplianceProbe>> {
  const digest = entryDigest(tenant);
  const known = cache?.get(digest);
  // The entry's place in the file may have moved: its messages name where it is now.
  if (known) return { ok: { ...known, tenant } };
  const outcome = await probeCompliance(tenant);
  if (cache && 'ok' in outcome) cache.set(digest, outcome.ok);
  return outcome;
}

async function probeCompliance(tenant: ComplianceTenant): Promise<Outcome<ComplianceProbe>> {
  let client: ComplianceClient;
  try {
    // No gate: these two requests come before the application's window is shared with anything.
    client = new ComplianceClient({ ...tenant.service, credentialSetting: tenant.source });
  } catch (err) {
    return { problem: err instanceof CredentialFormatError ? err.message : `${tenant.source}: ${errorText(err)}` };
  }
  try {
    const identity = await client.getIdentity();
    const businesses = await client.listBusinesses();
    return {
      ok: {
        tenant,
        identity: identity.data,
        serviceLimit: identity.meta.rateLimit.limit ?? identity.data.application?.rateLimitPerMinute,
        businesses: businesses.data,
        environment: keyEnvironment(identity.data, tenant.service.apiKey),
      },
    };
  } catch (err) {
    return complianceRefusal(tenant, err);
  } finally {
    await client.close();
  }
}

function accountingRefusal(tenant: AccountingTenant, err: unknown): Outcome<never> {
  const where = `the accounting service at ${tenant.service.baseUrl}`;
  if (!(err instanceof ApiError))
    return { failure: `${tenant.source}: ${where} answered unexpectedly (${errorText(err)})` };
  const what = `${err.status ?? 'no answer'} ${err.code}`;
  if (err.status === undefined) return { failure: `${tenant.source}: ${where} cannot be reached (${err.message})` };
  if (err.status === 401) {
    const secret =
      tenant.service.signRequests && /signature|timestamp/i.test(err.message) ? 'client secret' : 'API key';
    return {
      problem: `${tenant.source}: ${where} refused the ${secret} (${what}): it is wrong, revoked or its application inactive; the value is not shown`,
    };
  }
  if (err.status === 403)
    return {
      problem: `${tenant.source}: the API key is not allowed to list companies at ${tenant.service.baseUrl} (${what}); the value is not shown`,
    };
  return { failure: `${tenant.source}: ${where} failed ${err.operation} (${what})` };
}

async function probeAccounting(tenant: AccountingTenant): Promise<Outcome<AccountingProbe>> {
  let client: AccountingClient;
  try {
    client = new AccountingClient(tenant.service);
  } catch (err) {
    if (err instanceof CredentialFormatError) {
      const what = /SECRET/.test(err.setting) ? 'client secret' : 'API key';
      return {
        problem: `${tenant.source}: the ${what} is not in the expected form (${err.expected}); the value is not shown`,
      };
    }
    return { problem: `${tenant.source}: ${errorText(err)}` };
  }
  try {
    const companies: string[] = [];
    for (let page = 1; ; page++) {
      if (page > MAX_COMPANY_PAGES) {
        throw new Error(
          `the key sees more than ${MAX_COMPANY_PAGES * COMPANY_PAGE_SIZE} companies; the links cannot be checked`,
        );
      }
      const { data } = await client.listCompanies({ page, limit: COMPANY_PAGE_SIZE });
      companies.push(...data.data.map((company) => company.id));
      if (!data.hasNextPage || data.data.length === 0) break;
    }
    return { ok: { tenant, client, companies } };
  } catch (err) {
    await client.close();
    return accountingRefusal(tenant, err);
  }
}

function duplicateNames(entries: ReadonlyArray<{ application: ApplicationName; source: string }>): string[] {
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
  for (const other of probes) {
    if (other === probe) continue;
    const business = other.businesses.find((b) => b.id === id);
    if (!business) continue;
    const environment =
      business.environment === 'sandbox' || business.environment === 'production'
        ? business.environment
        : BUSINESS_ENVIRONMENT[other.environment];
    if (environment !== own) {
      return `${source}: business ${id} is a ${environment} business (${other.tenant.source} lists it); ${keyRule(probe.environment, 'sentence')}`;
    }
    return `${source}: unknown business ${id}: the key cannot act for it (it can act for ${idList(probe.businesses.map((b) => b.id))}); the key of ${other.tenant.source} can`;
  }
  return `${source}: unknown business ${id}: the key cannot act for it (it can act for ${idList(probe.businesses.map((b) => b.id))}); this is ${keyRule(probe.environment, 'clause')}`;
}

/** A listed business whose environment the service reports as the other one (a listing the contract rules out). */
function crossedEnvironment(probe: ComplianceProbe, business: Business): string | undefined {
  const own = BUSINESS_ENVIRONMENT[probe.environment];
  if (business.environment === undefined || business.environment === own) return undefined;
  return `${probe.tenant.source}: business ${business.id} is a ${business.environment} business; ${keyRule(probe.environment, 'sentence')}`;
}

/** Business → the probe serving it, by the rules in the header; the problems when they do not settle it. */
function assignBusinesses(
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
        problems.push(
          `business ${id} is listed under two entries, ${earlier.tenant.source} and ${probe.tenant.source}: list it under one`,
        );
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

function resolveLinks(
  links: readonly TenantLink[],
  served: ReadonlyMap<string, ComplianceProbe>,
  accounting: ReadonlyMap<ApplicationName, AccountingProbe | undefined>,
): { resolved: ResolvedTenantLink[]; companyApplication: Map<string, ApplicationName>; problems: string[] } {
  const problems: string[] = [];
  const resolved: ResolvedTenantLink[] = [];
  const companyLink = new Map<string, TenantLink>();
  for (const link of links) {
    const compliance = served.get(link.businessId);
    if (!compliance)
      problems.push(`${link.source}: business ${link.businessId} is served by no compliance application`);
    if (!accounting.has(link.accounting)) {
      problems.push(`${link.source}: accounting application "${link.accounting}" is not configured`);
    } else {
      // Undefined: its key was refused, which is reported already.
      const probe = accounting.get(link.accounting);
      if (probe && !probe.companies.includes(link.companyId)) {
        problems.push(
          `${link.source}: company ${link.companyId} is not one accounting application "${link.accounting}" can see (it sees ${idList(probe.companies)})`,
        );
      }
    }
    const earlier = companyLink.get(link.companyId);
    if (earlier && earlier.accounting !== link.accounting) {
      problems.push(
        `${link.source}: company ${link.companyId} is linked through accounting application "${link.accounting}" here and "${earlier.accounting}" in ${earlier.source}`,
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

function facts(probe: ComplianceProbe, businesses: readonly string[]): ComplianceApplication {
  const { tenant, identity, serviceLimit } = probe;
  return {
    application: tenant.application,
    source: tenant.source,
    requestsPerMinute:
      serviceLimit === undefined ? tenant.requestsPerMinute : Math.min(tenant.requestsPerMinute, serviceLimit),
    configuredRequestsPerMinute: tenant.requestsPerMinute,
    serviceRequestsPerMinute: serviceLimit,
    serviceApplicationId: identity.application?.id,
    keyId: identity.apiKey?.id,
    environment: probe.environment,
    boundBusinessId: identity.apiKey?.businessId ?? null,
    scopes: [...(identity.apiKey?.scopes ?? [])],
    listed: tenant.businesses !== undefined,
    reachable: probe.businesses.map((b) => b.id),
    businesses,
  };
}

/**
 * Entries whose keys belong to one service application draw on one window: budgets that add up to more than the
 * service allows would draw 429s once all are busy. Allowed (business-bound keys of one application are a normal
 * set-up), but said.
 */
function warnSharedWindows(applications: readonly ComplianceApplication[], logger: Logger | undefined): void {
  const byService = new Map<string, ComplianceApplication[]>();
  for (const application of applications) {
    if (application.serviceApplicationId === undefined) continue;
    byService.set(application.serviceApplicationId, [
      ...(byService.get(application.serviceApplicationId) ?? []),
      application,
    ]);
  }
  for (const [serviceApplicationId, sharing] of byService) {
    const total = sharing.reduce((sum, application) => sum + application.requestsPerMinute, 0);
    const limit = sharing[0]!.serviceRequestsPerMinute;
    if (sharing.length > 1 && limit !== undefined && total > limit) {
      logger?.warn(
        {
          serviceApplicationId,
          applications: sharing.map((a) => a.application),
          requestsPerMinute: total,
          serviceRequestsPerMinute: limit,
        },
        'entries share one service application, and their budgets add up to more than its limit',
      );
    }
  }
}

/**
 * Asks the services about every tenant (bounded in parallel) and settles which application serves which business
 * and which accounting application each linked company. Throws TenantConfigError with every problem of the file,
 * or TenantServiceError when a service could not be asked; nothing is left open either way.
 */
export async function resolveTenantDirectory(
  tenants: TenantsConfig,
  options: ResolveTenantDirectoryOptions = {},
): Promise<TenantDirectory> {
  const { logger } = options;
  const problems = [...duplicateNames(tenants.compliance), ...duplicateNames(tenants.accounting)];
  const failures: string[] = [];
  type Ask = { compliance: ComplianceTenant } | { accounting: AccountingTenant };
  type Answer =
    { compliance: Outcome<ComplianceProbe> } | { accounting: Outcome<AccountingProbe>; tenant: AccountingTenant };
  const asks: Ask[] = [
    ...tenants.compliance.map((compliance) => ({ compliance })),
    ...tenants.accounting.map((accounting) => ({ accounting })),
  ];
  const answers = await mapBounded(asks, options.concurrency ?? DEFAULT_CONCURRENCY, async (ask): Promise<Answer> =>
    'compliance' in ask
      ? { compliance: await probeComplianceOnce(ask.compliance, options.complianceProbes) }
      : { accounting: await probeAccounting(ask.accounting), tenant: ask.accounting },
  );
  if (options.complianceProbes) {
    const current = new Set(tenants.compliance.map(entryDigest));
    for (const digest of options.complianceProbes.keys())
      if (!current.has(digest)) options.complianceProbes.delete(digest);
  }
  const complianceProbes: ComplianceProbe[] = [];
  /** By name; undefined for an entry whose key was refused. */
  const accountingProbes = new Map<ApplicationName, AccountingProbe | undefined>();
  const openAccounting: AccountingClient[] = [];
  for (const answer of answers) {
    const outcome = 'compliance' in answer ? answer.compliance : answer.accounting;
    if ('problem' in outcome) problems.push(outcome.problem);
    if ('failure' in outcome) failures.push(outcome.failure);
    if ('compliance' in answer) {
      if ('ok' in answer.compliance) complianceProbes.push(answer.compliance.ok);
      continue;
    }
    const probe = 'ok' in answer.accounting ? answer.accounting.ok : undefined;
    if (probe) openAccounting.push(probe.client);
    if (!accountingProbes.has(answer.tenant.application)) accountingProbes.set(answer.tenant.application, probe);
  }
  const closeAccounting = () => Promise.all(openAccounting.map((client) => client.close()));

  if (failures.length > 0) {
    await closeAccounting();
    throw new TenantServiceError(tenants.origin, [...failures, ...problems]);
  }
  const assigned = assignBusinesses(complianceProbes, logger);
  problems.push(...assigned.problems);
  const links = resolveLinks(tenants.links, assigned.owner, accountingProbes);
  problems.push(...links.problems);
  if (problems.length > 0) {
    await closeAccounting();
    throw new TenantConfigError(tenants.origin, problems);
  }

  const servedBy = new Map<ComplianceProbe, string[]>(complianceProbes.map((probe) => [probe, []]));
  // The file's order for listed businesses, the service's for the rest.
  for (const probe of complianceProbes) {
    for (const id of probe.tenant.businesses ? new Set(probe.tenant.businesses) : probe.businesses.map((b) => b.id)) {
      if (assigned.owner.get(id) === probe) servedBy.get(probe)!.push(id);
    }
  }
  const applications = complianceProbes.map((probe) => facts(probe, servedBy.get(probe)!));
  const gates = options.gates ?? new Map<string, RateLimitGate>();
  const gateOf = (application: ComplianceApplication) => {
    const newGate = () => new RateLimitGate({ holdUpToMs: options.holdUpToMs ?? DEFAULT_HOLD_MS });
    if (application.serviceApplicationId === undefined) return newGate();
    let gate = gates.get(application.serviceApplicationId);
    if (!gate) gates.set(application.serviceApplicationId, (gate = newGate()));
    return gate;
  };
  const complianceClients = new Map<ApplicationName, ComplianceClient>();
  applications.forEach((application, index) => {
    const observer = options.observerFor?.(application);
    complianceClients.set(
      application.application,
      new ComplianceClient({
        ...complianceProbes[index]!.tenant.service,
        credentialSetting: application.source,
        rateLimitGate: gateOf(application),
        ...(observer ? { observer } : {}),
      }),
    );
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
  const byName = new Map(applications.map((application) => [application.application, application]));
  let closing: Promise<void> | undefined;

  return {
    origin: tenants.origin,
    applicationOf: (businessId) => owner.get(businessId),
    businessesOf: (application) => byName.get(application)?.businesses ?? [],
    applications: () => applications,
    accountingApplications: () => accountingApplications,
    accountingApplicationOf: (companyId) => links.companyApplication.get(companyId),
    links: () => links.resolved,
    complianceClient: (application) => complianceClients.get(application),
    accountingClient: (application) => accountingClients.get(application),
    close: () =>
      (closing ??= Promise.all(
        [...complianceClients.values(), ...accountingClients.values()].map((client) => client.close()),
      ).then(() => undefined)),
  };
}

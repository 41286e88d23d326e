/** Asking each key who it is: a refusal (401, 403) is the file's problem; a failing service is not. */
import { hash } from 'node:crypto';
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import type { Business, Identity } from '../compliance/schemas.js';
import { CredentialFormatError } from '../config/credentials.js';
import { ApiError } from '../http/errors.js';
import type { RateLimitInfo } from '../http/rate-limit.js';
import type { AccountingTenant, ComplianceTenant } from './types.js';

type KeyEnvironment = 'test' | 'live';

const COMPANY_PAGE_SIZE = 100;
const MAX_COMPANY_PAGES = 100;

/** `outage`: a failure the service gives while it is down, which the same request may pass later. */
export type Outcome<T> = { ok: T } | (({ problem: string } | { failure: string; outage?: true }) & { error?: unknown });

/** A refused connection, an unresolved name or a timeout look to a running fleet exactly like an outage. */
export function isOutage(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.status === undefined) return err.code !== 'aborted';
  return err.status >= 500 || err.status === 408 || err.status === 429;
}

export interface ComplianceProbe {
  tenant: ComplianceTenant;
  identity: Identity;
  rateLimit: RateLimitInfo;
  serviceLimit: number | undefined;
  businesses: Business[];
  environment: KeyEnvironment;
}

export interface AccountingProbe {
  tenant: AccountingTenant;
  client: AccountingClient;
  companies: string[];
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const BUSINESS_ENVIRONMENT: Record<KeyEnvironment, 'sandbox' | 'production'> = {
  test: 'sandbox',
  live: 'production',
};
const KEY_PREFIX: Record<KeyEnvironment, string> = { test: 'cmp_sk_test_', live: 'cmp_sk_live_' };

/** The identity's word when it gives one; else the prefix, which the contract ties to the environment. */
export function keyEnvironment(identity: Identity | undefined, apiKey: string): KeyEnvironment {
  const said = identity?.apiKey?.environment;
  if (said === 'live' || said === 'test') return said === 'live' ? 'live' : 'test';
  return apiKey.startsWith(KEY_PREFIX.live) ? 'live' : 'test';
}

export function keyRule(environment: KeyEnvironment, form: 'sentence' | 'clause'): string {
  const verb = form === 'clause' ? ', which acts' : ' acts';
  const businesses = BUSINESS_ENVIRONMENT[environment];
  return `a ${environment} key (${KEY_PREFIX[environment]})${verb} only for ${businesses} businesses`;
}

/** Results in the items' order. */
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

function refusal(
  service: 'compliance' | 'accounting',
  tenant: ComplianceTenant | AccountingTenant,
  err: unknown,
  refused: (err: ApiError) => { secret: string; why: string; forbidden: string },
): Outcome<never> {
  const where = `the ${service} service at ${tenant.service.baseUrl}`;
  const fail = (why: string): Outcome<never> => ({
    failure: `${tenant.source}: ${where} ${why}`,
    error: err,
    ...(isOutage(err) ? { outage: true as const } : {}),
  });
  if (!(err instanceof ApiError)) return fail(`answered unexpectedly (${errorText(err)})`);
  const what = `${err.status ?? 'no answer'} ${err.code}`;
  if (err.status === undefined) return fail(`cannot be reached (${err.message})`);
  if (err.status !== 401 && err.status !== 403) return fail(`failed ${err.operation} (${what})`);
  const { secret, why, forbidden } = refused(err);
  const problem =
    err.status === 401
      ? `${where} refused the ${secret} (${what}): ${why}`
      : `the ${secret} is not allowed to ${forbidden} at ${tenant.service.baseUrl} (${what})`;
  return { problem: `${tenant.source}: ${problem}; the value is not shown`, error: err };
}

/** A single-key variable's key that fails its first request, said naming the variable, never its value. */
export function variableFailure(
  service: 'compliance' | 'accounting',
  { baseUrl, signRequests }: { baseUrl: string; signRequests?: boolean },
  err: unknown,
): string {
  const prefix = service.toUpperCase();
  const at = `the ${service} service at ${baseUrl}`;
  if (!(err instanceof ApiError)) return `${prefix}_BASE_URL: ${at} answered unexpectedly (${errorText(err)})`;
  if (err.status === undefined) return `${prefix}_BASE_URL: ${at} cannot be reached (${err.message})`;
  const what = `${err.status} ${err.code}`;
  if (err.status === 401) {
    const setting =
      signRequests && /signature|timestamp/i.test(err.message) ? `${prefix}_CLIENT_SECRET` : `${prefix}_API_KEY`;
    return `${setting} was refused by ${at} (${what}): the key is wrong, revoked or expired; the value is not shown`;
  }
  if (err.status === 403)
    return `${prefix}_API_KEY is not allowed to ${err.operation} at ${baseUrl} (${what}); the value is not shown`;
  return `${at} failed the start-up check ${err.operation} (${what}: ${err.message})`;
}

/** Equal digests ask the service the same. */
export function entryDigest(tenant: ComplianceTenant): string {
  return hash('sha256', JSON.stringify([tenant.service, tenant.businesses ?? null, tenant.requestsPerMinute]));
}

/** From `cache` when an earlier resolution asked the same, else asked now (kept when accepted). */
export async function probeComplianceOnce(tenant: ComplianceTenant, cache: Map<string, ComplianceProbe> | undefined) {
  const digest = entryDigest(tenant);
  const known = cache?.get(digest);
  // The entry's place in the file may have moved: its messages name where it is now.
  if (known) return { ok: { ...known, tenant } };
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
    const ok: ComplianceProbe = {
      tenant,
      identity: identity.data,
      rateLimit: identity.meta.rateLimit,
      serviceLimit: identity.meta.rateLimit.limit ?? identity.data.application?.rateLimitPerMinute,
      businesses: businesses.data,
      environment: keyEnvironment(identity.data, tenant.service.apiKey),
    };
    cache?.set(digest, ok);
    return { ok };
  } catch (err) {
    return refusal('compliance', tenant, err, (e) => ({
      secret: 'key',
      why: 'it is wrong, revoked or expired, or its application is suspended',
      forbidden: e.operation === 'getIdentity' ? 'read its identity' : 'list its businesses',
    }));
  } finally {
    await client.close();
  }
}

export async function probeAccounting(tenant: AccountingTenant): Promise<Outcome<AccountingProbe>> {
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
    return refusal('accounting', tenant, err, (e) => ({
      // 403 is the key's alone; 401 may be the signature's.
      secret:
        e.status === 401 && tenant.service.signRequests && /signature|timestamp/i.test(e.message)
          ? 'client secret'
          : 'API key',
      why: 'it is wrong, revoked or its application inactive',
      forbidden: 'list companies',
    }));
  }
}

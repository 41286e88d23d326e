/**
 * `npm run tenants`: the tenants of this environment (TENANTS_FILE / TENANTS_DIR, or the single-key variables as
 * tenant `default`) and their health on the services: whether each key is accepted, which businesses each
 * compliance application serves, its budget against the service's limit, and how much of the service's current
 * window is in use. Read-only (identity, businesses and companies are all it asks), so it is safe against
 * production keys; with nothing configured it lists the embedded sandbox, as `npm run check` does.
 *
 * The businesses, companies and links are settled by the tenant directory, as the worker settles them at start-up.
 * The directory refuses a file as a whole; so that one refused key does not hide the others, each key is first
 * asked on its own (its identity: accepted or refused, and the window's headers), and when the file is refused the
 * entries whose keys answered are settled again without the others and without the links (links do not change
 * which application serves a business).
 */
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import type { Identity } from '../compliance/schemas.js';
import { ConfigError, loadConfig, type Env } from '../config/env.js';
import type { AccountingTenant, ComplianceTenant, TenantsConfig } from '../tenants/types.js';
import { loadTenantsConfig } from '../tenants/load.js';
import { ENVIRONMENT_ORIGIN } from '../tenants/single-key.js';
import { SINGLE_KEY_APPLICATION } from '../contracts/budget-placement.js';
import { loadWorkerConfig } from '../config/worker.js';
import { ApiError } from '../http/errors.js';
import type { RateLimitInfo } from '../http/rate-limit.js';
import { createLogger, type Logger } from '../logger.js';
import { assertReadOnlyServices, resolveServices, type ServiceEndpoints } from '../services/endpoints.js';
import {
  resolveTenantDirectory,
  TenantConfigError,
  TenantServiceError,
  type TenantDirectory,
} from '../tenants/directory.js';
import { mapBounded, type KeyEnvironment } from '../tenants/probes.js';
import { createProgram, runProgram } from './command.js';
import { BAD_INPUT_EXIT, SERVICES_ENVIRONMENT, helpSections } from './help.js';

/** What a service said of a key. `unreachable`: no answer, or a failure that says nothing of the key. */
type KeyState =
  { state: 'accepted' } | { state: 'refused'; status: number; code: string } | { state: 'unreachable'; error: string };

interface Budget {
  limit: number;
  remaining: number;
  resetSeconds: number | null;
  /** Of the service's current window, counting the identity request that read it. */
  usedPercent: number;
}

interface ComplianceRow {
  application: string;
  source: string;
  baseUrl: string;
  key: KeyState;
  /** The identity's word, else the key's prefix (known even of a refused key). */
  environment: KeyEnvironment;
  serviceApplicationId: string | null;
  /** The service's id of the key (an identifier, not the secret). */
  keyId: string | null;
  /** The businesses it serves; null when that could not be settled. */
  businesses: string[] | null;
  requestsPerMinute: { configured: number; service: number | null };
  budget: Budget | null;
}

interface AccountingRow {
  application: string;
  source: string;
  baseUrl: string;
  key: KeyState;
  /** The companies its key sees; null when not settled (companyCount may still be known). */
  companies: string[] | null;
  companyCount: number | null;
}

interface LinkRow {
  business: string;
  company: string;
  accounting: string;
  /** The compliance application serving the business; null when not settled. */
  compliance: string | null;
  source: string;
}

interface TenantsReport {
  origin: string;
  /** The tenants resolve as a whole: the worker would start with them. */
  settled: boolean;
  healthy: boolean;
  compliance: ComplianceRow[];
  accounting: AccountingRow[];
  links: LinkRow[];
  /** The directory's refusals and failures, each naming its entry. */
  problems: string[];
}

interface Options {
  json?: boolean;
  wide?: boolean;
}

/** Keys asked at once, as the directory asks them. */
const CONCURRENCY = 8;

function keyState(err: unknown): KeyState {
  if (!(err instanceof ApiError))
    return { state: 'unreachable', error: err instanceof Error ? err.message : String(err) };
  if (err.status === undefined) return { state: 'unreachable', error: err.message };
  if (err.status === 401 || err.status === 403) return { state: 'refused', status: err.status, code: err.code };
  // A window is an application's: the service knew the key to answer 429.
  if (err.status === 429) return { state: 'accepted' };
  return { state: 'unreachable', error: `answered ${err.status} ${err.code}` };
}

interface ComplianceProbe {
  key: KeyState;
  identity: Identity | undefined;
  rateLimit: RateLimitInfo | undefined;
}

/** One identity request: whether the key is accepted, and the window's headers before anything else of ours is sent. */
async function probeCompliance(tenant: ComplianceTenant): Promise<ComplianceProbe> {
  const client = new ComplianceClient({ ...tenant.service, credentialSetting: tenant.source });
  try {
    const { data, meta } = await client.getIdentity();
    return { key: { state: 'accepted' }, identity: data, rateLimit: meta.rateLimit };
  } catch (err) {
    return { key: keyState(err), identity: undefined, rateLimit: err instanceof ApiError ? err.rateLimit : undefined };
  } finally {
    await client.close();
  }
}

async function probeAccounting(tenant: AccountingTenant): Promise<{ key: KeyState; total: number | undefined }> {
  const client = new AccountingClient(tenant.service);
  try {
    const { data } = await client.listCompanies({ limit: 1 });
    return { key: { state: 'accepted' }, total: data.total };
  } catch (err) {
    return { key: keyState(err), total: undefined };
  } finally {
    await client.close();
  }
}

/** The identity's word, else the key's prefix, which the contract ties to the environment. */
function environmentOf(tenant: ComplianceTenant, identity: Identity | undefined): KeyEnvironment {
  const said = identity?.apiKey?.environment;
  if (said === 'live' || said === 'test') return said === 'live' ? 'live' : 'test';
  return tenant.service.apiKey.startsWith('cmp_sk_live_') ? 'live' : 'test';
}

function budgetOf(rateLimit: RateLimitInfo | undefined): Budget | null {
  const { limit, remaining, resetSeconds } = rateLimit ?? {};
  if (limit === undefined || remaining === undefined || limit <= 0) return null;
  return {
    limit,
    remaining,
    resetSeconds: resetSeconds ?? null,
    usedPercent: Math.round(((limit - remaining) / limit) * 100),
  };
}

interface Settlement {
  /** The tenants as a whole, or (when refused) the entries whose keys answered, without links; undefined: neither. */
  directory: TenantDirectory | undefined;
  settled: boolean;
  problems: string[];
  /** A refusal of the configuration (exit 2) rather than a failure to ask (exit 1). */
  refused: boolean;
}

async function settle(tenants: TenantsConfig, answered: TenantsConfig, logger: Logger): Promise<Settlement> {
  try {
    return {
      directory: await resolveTenantDirectory(tenants, { logger }),
      settled: true,
      problems: [],
      refused: false,
    };
  } catch (err) {
    if (!(err instanceof TenantConfigError || err instanceof TenantServiceError)) throw err;
    const problems = err instanceof TenantConfigError ? err.problems : err.failures;
    // Not logged: the same warnings were said, or would only be said of a set the worker never runs.
    const directory = await resolveTenantDirectory(answered).catch(() => undefined);
    return { directory, settled: false, problems: [...problems], refused: err instanceof TenantConfigError };
  }
}

/**
 * Without a tenants file, the embedded sandbox stands in for the services not configured (both when none is, or as
 * SANDBOX=embedded asks), as tenant `default` with its demo credentials and link, as `npm run check` uses it.
 */
function withEmbeddedSandbox(tenants: TenantsConfig, services: ServiceEndpoints, env: Env): TenantsConfig {
  const source = 'embedded sandbox';
  const { complianceRequestsPerMinute } = loadWorkerConfig({
    COMPLIANCE_REQUESTS_PER_MINUTE: env.COMPLIANCE_REQUESTS_PER_MINUTE,
  });
  const { businessId } = services.compliance;
  const embeddedCompliance: ComplianceTenant = {
    application: SINGLE_KEY_APPLICATION,
    service: services.compliance,
    requestsPerMinute: complianceRequestsPerMinute,
    businesses: businessId === undefined ? undefined : [businessId],
    source,
  };
  return {
    ...tenants,
    compliance: tenants.compliance.length > 0 ? tenants.compliance : [embeddedCompliance],
    accounting:
      tenants.accounting.length > 0
        ? tenants.accounting
        : [{ application: SINGLE_KEY_APPLICATION, service: services.accounting, source }],
    // The demo world's link only when the sandbox stands in for accounting and RECONCILE_LINKS names none (as reconcile does).
    links:
      tenants.links.length > 0
        ? tenants.links
        : services.sandboxReconciliationLinks.map((link) => ({ ...link, accounting: SINGLE_KEY_APPLICATION, source })),
  };
}

async function inspect(tenants: TenantsConfig, logger: Logger): Promise<{ report: TenantsReport; code: number }> {
  const [compliance, accounting] = await Promise.all([
    mapBounded(tenants.compliance, CONCURRENCY, probeCompliance),
    mapBounded(tenants.accounting, CONCURRENCY, probeAccounting),
  ]);
  const answered: TenantsConfig = {
    ...tenants,
    compliance: tenants.compliance.filter((_, index) => compliance[index]!.key.state === 'accepted'),
    accounting: tenants.accounting.filter((_, index) => accounting[index]!.key.state === 'accepted'),
    links: [],
  };
  const { directory, settled, problems, refused } = await settle(tenants, answered, logger);
  try {
    const applications = new Map(directory?.applications().map((a) => [a.application, a]));
    const books = new Map(directory?.accountingApplications().map((a) => [a.application, a]));
    const complianceRows = tenants.compliance.map((tenant, index): ComplianceRow => {
      const { key, identity, rateLimit } = compliance[index]!;
      const accepted = key.state === 'accepted';
      const settledApplication = applications.get(tenant.application);
      return {
        application: tenant.application,
        source: tenant.source,
        baseUrl: tenant.service.baseUrl,
        key,
        environment: environmentOf(tenant, identity),
        serviceApplicationId: identity?.application?.id ?? null,
        keyId: identity?.apiKey?.id ?? null,
        businesses: settledApplication ? [...settledApplication.businesses] : null,
        requestsPerMinute: {
          configured: tenant.requestsPerMinute,
          service: accepted ? (rateLimit?.limit ?? identity?.application?.rateLimitPerMinute ?? null) : null,
        },
        budget: accepted ? budgetOf(rateLimit) : null,
      };
    });
    const accountingRows = tenants.accounting.map((tenant, index): AccountingRow => {
      const companies = books.get(tenant.application)?.companies;
      return {
        application: tenant.application,
        source: tenant.source,
        baseUrl: tenant.service.baseUrl,
        key: accounting[index]!.key,
        companies: companies ? [...companies] : null,
        companyCount: companies?.length ?? accounting[index]!.total ?? null,
      };
    });
    const linkRows = tenants.links.map((link): LinkRow => ({
      business: link.businessId,
      company: link.companyId,
      accounting: link.accounting,
      compliance: directory?.applicationOf(link.businessId) ?? null,
      source: link.source,
    }));
    const keys = [...complianceRows, ...accountingRows].map((row) => row.key.state);
    const healthy = settled && keys.every((state) => state === 'accepted');
    return {
      report: {
        origin: tenants.origin,
        settled,
        healthy,
        compliance: complianceRows,
        accounting: accountingRows,
        links: linkRows,
        problems,
      },
      // A refusal is the configuration's and no retry mends it, so it wins over a service that could not be asked.
      code: healthy ? 0 : refused || keys.includes('refused') ? 2 : 1,
    };
  } finally {
    await directory?.close();
  }
}

// ---- The table ----

/** Columns two spaces apart, the last one unpadded. */
function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows].map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}

function keyText(key: KeyState): string {
  if (key.state === 'accepted') return 'accepted';
  return key.state === 'refused' ? `refused ${key.status} ${key.code}` : `unreachable: ${key.error}`;
}

/** `2`, or with --wide `2: biz_a, biz_b`; `-` when not settled. */
function idsText(ids: readonly string[] | null, count: number | null, wide: boolean): string {
  if (ids === null) return count === null ? '-' : String(count);
  return wide && ids.length > 0 ? `${ids.length}: ${ids.join(', ')}` : String(ids.length);
}

function budgetText(budget: Budget | null): string {
  if (!budget) return '-';
  const reset = budget.resetSeconds === null ? '' : `, resets in ${budget.resetSeconds} s`;
  return `${budget.usedPercent}% (${budget.limit - budget.remaining} of ${budget.limit}${reset})`;
}

function section(title: string, header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return rows.length === 0 ? [`${title}: none`] : [`${title}:`, ...table(header, rows)];
}

function summary({ report, code }: { report: TenantsReport; code: number }): string[] {
  const rows = [...report.compliance, ...report.accounting];
  if (code === 0) {
    return [
      `all ${report.compliance.length} compliance application(s) and ${report.accounting.length} accounting application(s) healthy`,
    ];
  }
  const refused = rows.filter((row) => row.key.state === 'refused').length;
  const unreachable = rows.filter((row) => row.key.state === 'unreachable').length;
  const parts = [
    ...(refused > 0 ? [`${refused} key(s) refused`] : []),
    ...(unreachable > 0 ? [`${unreachable} service(s) unreachable`] : []),
  ];
  if (!report.settled)
    parts.push(`the tenants are ${code === 2 ? 'refused' : 'not settled'} (every problem is on standard error)`);
  const lines = [`not healthy: ${parts.join(', ')}`];
  if (!report.settled && report.compliance.some((row) => row.businesses !== null)) {
    lines.push(
      'the businesses shown are those each entry whose key answered would serve without the others and without the links',
    );
  }
  return lines;
}

function printTable(result: { report: TenantsReport; code: number }, wide: boolean): void {
  const { report } = result;
  const lines = [
    `tenants: ${report.origin}`,
    '',
    ...section(
      'compliance applications',
      [
        'application',
        'key',
        'environment',
        'service application',
        'businesses',
        'requests/min (ours / service)',
        'budget in use',
      ],
      report.compliance.map((row) => [
        row.application,
        keyText(row.key),
        row.environment ?? '-',
        row.serviceApplicationId ?? '-',
        idsText(row.businesses, null, wide),
        `${row.requestsPerMinute.configured} / ${row.requestsPerMinute.service ?? '?'}`,
        budgetText(row.budget),
      ]),
    ),
    '',
    ...section(
      'accounting applications',
      ['application', 'key', 'companies'],
      report.accounting.map((row) => [
        row.application,
        keyText(row.key),
        idsText(row.companies, row.companyCount, wide),
      ]),
    ),
    '',
    ...section(
      'links',
      ['business', 'company', 'accounting', 'compliance'],
      report.links.map((row) => [row.business, row.company, row.accounting, row.compliance ?? '-']),
    ),
    '',
    ...summary(result),
  ];
  console.log(lines.join('\n'));
}

// ---- The program ----

async function main(options: Options): Promise<number> {
  const env: Env = process.env;
  const tenants = loadTenantsConfig(env);
  const fromFile = tenants.origin !== ENVIRONMENT_ORIGIN;
  // A tenants file names every setting per entry: only the log level and SANDBOX are read beside it.
  const config = loadConfig(fromFile ? { LOG_LEVEL: env.LOG_LEVEL, SANDBOX: env.SANDBOX } : env);
  if (fromFile && config.embeddedSandbox) {
    throw new ConfigError(
      `SANDBOX=embedded and ${tenants.origin.split(' ')[0]} are both set: the entries name the services they are on, and nothing stands in for them (unset SANDBOX)`,
    );
  }
  if (!fromFile) assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const logger = createLogger({
    level: config.logLevel === 'info' ? 'warn' : config.logLevel,
    name: 'tenants',
    stderr: true,
  });
  const services =
    !fromFile && (!config.compliance || !config.accounting) ? await resolveServices(config, logger) : undefined;
  try {
    const result = await inspect(services ? withEmbeddedSandbox(tenants, services, env) : tenants, logger);
    const { problems } = result.report;
    if (problems.length > 0) {
      console.error(
        `${result.code === 2 ? 'configuration error' : 'error'}: ${result.report.origin}: ${problems.length} problem(s):`,
      );
      for (const problem of problems) console.error(`  - ${problem}`);
    }
    if (options.json) console.log(JSON.stringify(result.report, null, 2));
    else printTable(result, options.wide === true);
    return result.code;
  } finally {
    await services?.close();
  }
}

runProgram(
  createProgram(
    'npm run tenants --',
    'Lists the tenants (TENANTS_FILE / TENANTS_DIR, or the single-key variables as tenant "default") and their health on the services: key accepted, businesses served, budget in use. Read-only: it asks identities, businesses and companies, nothing else.',
  )
    .option('--json', 'print the report as one JSON object (compliance, accounting, links, problems)')
    .option('--wide', 'name every business and company, not only their count')
    .addHelpText(
      'after',
      helpSections({
        environment: [
          [
            'TENANTS_FILE',
            'the tenants file: compliance and accounting applications, each with its key source, and the links',
          ],
          ['TENANTS_DIR', 'or a directory of them (every *.json, as a mounted secret holds them); not both'],
          [
            'COMPLIANCE_BASE_URL, ACCOUNTING_BASE_URL',
            'with a tenants file: the service of an entry that names no baseUrl',
          ],
          ...SERVICES_ENVIRONMENT,
          [
            'COMPLIANCE_BUSINESS_ID',
            'without a tenants file: the business of tenant "default" (default: every one its key can act for)',
          ],
          ['COMPLIANCE_REQUESTS_PER_MINUTE', 'without a tenants file: the budget of tenant "default" (default 120)'],
          [
            'RECONCILE_LINKS',
            'without a tenants file: the accounting company of each business (biz_a=cmp_1,biz_b=cmp_2)',
          ],
        ],
        output:
          'one row per compliance application (key accepted or refused, environment, service application, businesses served, ' +
          "requests per minute: ours / the service's limit, budget in use: the share of the service's current window used, from the " +
          'X-RateLimit headers of the identity answer, counting that request), then the accounting applications and the links, on ' +
          'standard output (--json: one JSON object); every problem on standard error, naming its entry, never a key',
        exitCodes: [
          [0, 'every key accepted and the tenants settled: a worker would start with them'],
          [1, 'a service could not be asked (unreachable or failing): its row says which; a retry may pass'],
          BAD_INPUT_EXIT,
          [2, 'a key refused, or the tenants ask what the services do not allow (this wins over 1: no retry mends it)'],
        ],
      }),
    )
    .act<Options>((_args, options) => main(options)),
);

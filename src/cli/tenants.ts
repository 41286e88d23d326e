// Read-only. The directory refuses a file as a whole, so each key is asked alone first, and the entries whose keys
// answered are settled again without the others and the links: one refused key does not hide the rest.
import { loadConfig, type Env } from '../config/env.js';
import type { TenantsConfig } from '../tenants/types.js';
import { loadTenantsConfig } from '../tenants/load.js';
import { ENVIRONMENT_ORIGIN, singleKeyTenants } from '../tenants/single-key.js';
import { loadWorkerConfig } from '../config/worker.js';
import { ApiError } from '../http/errors.js';
import type { RateLimitInfo } from '../http/rate-limit.js';
import type { Logger } from '../logger.js';
import { assertReadOnlyServices, resolveServices, type ServiceEndpoints } from '../services/endpoints.js';
import {
  DEFAULT_CONCURRENCY,
  resolveTenantDirectory,
  TenantConfigError,
  TenantServiceError,
} from '../tenants/directory.js';
import {
  errorText,
  keyEnvironment,
  mapBounded,
  probeAccounting,
  probeComplianceOnce,
  type ComplianceProbe,
  type Outcome,
} from '../tenants/probes.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { Client } from '@temporalio/client';
import { outageSalesQuery } from '../client/parked-sales.js';
import { connectClient, loadTemporalSettings } from '../temporal/connection.js';
import { SERVICES_ENVIRONMENT, createProgram, nonBlank, runProgram, table } from './command.js';
import { readOnlyLogger, sandboxBesideFile } from './read-only.js';

/** What a service said of a key. `unreachable`: no answer, or a failure that says nothing of the key. */
type KeyState =
  { state: 'accepted' } | { state: 'refused'; status: number; code: string } | { state: 'unreachable'; error: string };

type Options = { json?: boolean; wide?: boolean; outages?: boolean; taskQueue?: string };

function keyState(outcome: Outcome<unknown>): KeyState {
  if ('ok' in outcome) return { state: 'accepted' };
  const err = outcome.error;
  if (!(err instanceof ApiError)) return { state: 'unreachable', error: errorText(err) };
  // The identity answered: what the businesses say is the directory's problem, not the key's.
  if (err.operation === 'listBusinesses') return { state: 'accepted' };
  if (err.status === undefined) return { state: 'unreachable', error: err.message };
  if (err.status === 401 || err.status === 403) return { state: 'refused', status: err.status, code: err.code };
  // A window is an application's: the service knew the key to answer 429.
  if (err.status === 429) return { state: 'accepted' };
  return { state: 'unreachable', error: `answered ${err.status} ${err.code}` };
}

function budgetOf(rateLimit: RateLimitInfo | undefined) {
  const { limit, remaining, resetSeconds } = rateLimit ?? {};
  if (limit === undefined || remaining === undefined || limit <= 0) return null;
  return {
    limit,
    remaining,
    resetSeconds: resetSeconds ?? null,
    usedPercent: Math.round(((limit - remaining) / limit) * 100),
  };
}

/** All the tenants, else those whose keys answered, without links; `refused`: exit 2 (the configuration's), not 1. */
async function settle(
  tenants: TenantsConfig,
  answered: TenantsConfig,
  probes: Map<string, ComplianceProbe>,
  logger: Logger,
) {
  try {
    const directory = await resolveTenantDirectory(tenants, { logger, complianceProbes: probes });
    return { directory, settled: true, problems: [] as string[], refused: false };
  } catch (err) {
    if (!(err instanceof TenantConfigError || err instanceof TenantServiceError)) throw err;
    const problems = err instanceof TenantConfigError ? err.problems : err.failures;
    // Not logged: the same warnings were said, or would only be said of a set the worker never runs.
    const directory = await resolveTenantDirectory(answered, { complianceProbes: probes }).catch(() => undefined);
    return { directory, settled: false, problems: [...problems], refused: err instanceof TenantConfigError };
  }
}

/** The embedded sandbox for the services left unconfigured, as tenant `default` with its demo business and link. */
function withEmbeddedSandbox(tenants: TenantsConfig, services: ServiceEndpoints, env: Env): TenantsConfig {
  const { businessId } = services.compliance;
  const sandbox = singleKeyTenants(services, {
    requestsPerMinute: loadWorkerConfig({ COMPLIANCE_REQUESTS_PER_MINUTE: env.COMPLIANCE_REQUESTS_PER_MINUTE })
      .complianceRequestsPerMinute,
    businesses: businessId === undefined ? undefined : [businessId],
    links: services.sandboxReconciliationLinks,
    source: 'embedded sandbox',
  });
  return {
    ...tenants,
    compliance: tenants.compliance.length > 0 ? tenants.compliance : sandbox.compliance,
    accounting: tenants.accounting.length > 0 ? tenants.accounting : sandbox.accounting,
    links: tenants.links.length > 0 ? tenants.links : sandbox.links,
  };
}

type Inspection = Awaited<ReturnType<typeof inspect>>;

async function inspect(tenants: TenantsConfig, logger: Logger) {
  const probes = new Map<string, ComplianceProbe>();
  const [compliance, accounting] = await Promise.all([
    mapBounded(tenants.compliance, DEFAULT_CONCURRENCY, (tenant) => probeComplianceOnce(tenant, probes)),
    mapBounded(tenants.accounting, DEFAULT_CONCURRENCY, async (tenant) => {
      const outcome = await probeAccounting(tenant);
      if ('ok' in outcome) await outcome.ok.client.close();
      return outcome;
    }),
  ]);
  const complianceKeys = compliance.map(keyState);
  const accountingKeys = accounting.map(keyState);
  const answered: TenantsConfig = {
    ...tenants,
    compliance: tenants.compliance.filter((_, index) => complianceKeys[index]!.state === 'accepted'),
    accounting: tenants.accounting.filter((_, index) => accountingKeys[index]!.state === 'accepted'),
    links: [],
  };
  const { directory, settled, problems, refused } = await settle(tenants, answered, probes, logger);
  try {
    const applications = new Map(directory?.applications().map((a) => [a.application, a]));
    const books = new Map(directory?.accountingApplications().map((a) => [a.application, a]));
    const complianceRows = tenants.compliance.map((tenant, index) => {
      const outcome = compliance[index]!;
      const key = complianceKeys[index]!;
      const identity = 'ok' in outcome ? outcome.ok.identity : undefined;
      const { rateLimit } = 'ok' in outcome ? outcome.ok : outcome.error instanceof ApiError ? outcome.error : {};
      const accepted = key.state === 'accepted';
      const settledApplication = applications.get(tenant.application);
      return {
        application: tenant.application,
        source: tenant.source,
        baseUrl: tenant.service.baseUrl,
        key,
        environment: keyEnvironment(identity, tenant.service.apiKey),
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
    const accountingRows = tenants.accounting.map((tenant, index) => {
      const companies = books.get(tenant.application)?.companies;
      const outcome = accounting[index]!;
      return {
        application: tenant.application,
        source: tenant.source,
        baseUrl: tenant.service.baseUrl,
        key: accountingKeys[index]!,
        companies: companies ? [...companies] : null,
        companyCount: companies?.length ?? ('ok' in outcome ? outcome.ok.companies.length : null),
      };
    });
    const linkRows = tenants.links.map((link) => ({
      business: link.businessId,
      company: link.companyId,
      accounting: link.accounting,
      compliance: directory?.applicationOf(link.businessId) ?? null,
      source: link.source,
    }));
    const keys = [...complianceKeys, ...accountingKeys].map((key) => key.state);
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

function keyText(key: KeyState): string {
  if (key.state === 'accepted') return 'accepted';
  return key.state === 'refused' ? `refused ${key.status} ${key.code}` : `unreachable: ${key.error}`;
}

/** `2`, or with --wide `2: biz_a, biz_b`; `-` when not settled. */
function idsText(ids: readonly string[] | null, count: number | null, wide: boolean): string {
  if (ids === null) return count === null ? '-' : String(count);
  return wide && ids.length > 0 ? `${ids.length}: ${ids.join(', ')}` : String(ids.length);
}

function budgetText(budget: ReturnType<typeof budgetOf>): string {
  if (!budget) return '-';
  const reset = budget.resetSeconds === null ? '' : `, resets in ${budget.resetSeconds} s`;
  return `${budget.usedPercent}% (${budget.limit - budget.remaining} of ${budget.limit}${reset})`;
}

function section(title: string, header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  return rows.length === 0 ? [`${title}: none`] : [`${title}:`, ...table([header, ...rows])];
}

function summary({ report, code }: Inspection): string[] {
  const rows = [...report.compliance, ...report.accounting];
  if (code === 0)
    return [
      `all ${report.compliance.length} compliance application(s) and ` +
        `${report.accounting.length} accounting application(s) healthy`,
    ];
  const refused = rows.filter((row) => row.key.state === 'refused').length;
  const unreachable = rows.filter((row) => row.key.state === 'unreachable').length;
  const parts = [
    ...(refused > 0 ? [`${refused} key(s) refused`] : []),
    ...(unreachable > 0 ? [`${unreachable} service(s) unreachable`] : []),
  ];
  if (!report.settled)
    parts.push(`the tenants are ${code === 2 ? 'refused' : 'not settled'} (every problem is on standard error)`);
  const lines = [`not healthy: ${parts.join(', ')}`];
  if (!report.settled && report.compliance.some((row) => row.businesses !== null))
    lines.push(
      'the businesses shown are those each entry whose key answered would serve without the others and ' +
        'without the links',
    );
  return lines;
}

function printTable(result: Inspection, wide: boolean, outages: OutageCounts | undefined): void {
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
        ...(outages ? ['waiting out outage'] : []),
      ],
      report.compliance.map((row) => [
        row.application,
        keyText(row.key),
        row.environment ?? '-',
        row.serviceApplicationId ?? '-',
        idsText(row.businesses, null, wide),
        `${row.requestsPerMinute.configured} / ${row.requestsPerMinute.service ?? '?'}`,
        budgetText(row.budget),
        ...(outages ? [String(outages.get(row.application) ?? 'unknown')] : []),
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

/** Per application, how many of its running sales wait out an outage; null when not counted. */
type OutageCounts = Map<string, number | null>;

/** Without a tenants file the sales carry no application: the one tenant gets the whole task queue's count. */
async function countOutageWaits(
  env: Env,
  taskQueue: string,
  applications: string[],
  fromFile: boolean,
): Promise<OutageCounts> {
  const named = fromFile ? applications : [applications[0] ?? ''];
  try {
    const queries = named.map((application) => outageSalesQuery(taskQueue, fromFile ? application : undefined));
    const settings = loadTemporalSettings(env);
    const connection = await connectClient(settings);
    try {
      const client = new Client({ connection, namespace: settings.namespace });
      const counts = await Promise.all(queries.map(async (query) => (await client.workflow.count(query)).count));
      return new Map(named.map((application, index) => [application, counts[index]!]));
    } finally {
      await connection.close();
    }
  } catch (err) {
    console.error(`note: sales waiting out an outage not counted (unknown): ${errorText(err)}`);
    return new Map(named.map((application) => [application, null]));
  }
}

function withOutages(report: Inspection['report'], outages: OutageCounts | undefined) {
  if (!outages) return report;
  const compliance = report.compliance.map((row) => ({
    ...row,
    salesWaitingOutOutage: outages.get(row.application) ?? null,
  }));
  return { ...report, compliance };
}

async function main(options: Options): Promise<number> {
  const env: Env = process.env;
  const tenants = loadTenantsConfig(env);
  const fromFile = tenants.origin !== ENVIRONMENT_ORIGIN;
  // A tenants file names every setting per entry: only the log level and SANDBOX are read beside it.
  const config = loadConfig(fromFile ? { LOG_LEVEL: env.LOG_LEVEL, SANDBOX: env.SANDBOX } : env);
  if (fromFile && config.embeddedSandbox) throw sandboxBesideFile(tenants.origin);
  if (!fromFile) assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const logger = readOnlyLogger('tenants', env);
  const services =
    !fromFile && (!config.compliance || !config.accounting) ? await resolveServices(config, logger) : undefined;
  try {
    const result = await inspect(services ? withEmbeddedSandbox(tenants, services, env) : tenants, logger);
    const { problems } = result.report;
    if (problems.length > 0) {
      console.error(
        `${result.code === 2 ? 'configuration error' : 'error'}: ${result.report.origin}: ` +
          `${problems.length} problem(s):`,
      );
      for (const problem of problems) console.error(`  - ${problem}`);
    }
    const applications = result.report.compliance.map((row) => row.application);
    const outages = options.outages
      ? await countOutageWaits(env, options.taskQueue ?? WORKFLOW_TASK_QUEUE, applications, fromFile)
      : undefined;
    if (options.json) console.log(JSON.stringify(withOutages(result.report, outages), null, 2));
    else printTable(result, options.wide === true, outages);
    return result.code;
  } finally {
    await services?.close();
  }
}

runProgram(
  createProgram(
    'npm run tenants --',
    'Lists the tenants (TENANTS_FILE / TENANTS_DIR, or the single-key variables as tenant "default") and their ' +
      'health on the services: key accepted, businesses served, budget in use. Read-only: it asks identities, ' +
      'businesses and companies, nothing else (and with --outages counts sales in Temporal).',
    {
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
          'TEMPORAL_ADDRESS, TEMPORAL_*',
          '--outages only: the Temporal server and namespace, read as `npm run sales` reads them (see its help)',
        ],
        [
          'RECONCILE_LINKS',
          'without a tenants file: the accounting company of each business (biz_a=cmp_1,biz_b=cmp_2)',
        ],
      ],
      output:
        'one row per compliance application (key accepted or refused, environment, service application, ' +
        "businesses served, requests per minute: ours / the service's limit, budget in use: the share of the " +
        "service's current window used, from the X-RateLimit headers of the identity answer, counting that " +
        'request; --outages: its sales waiting out an outage, salesWaitingOutOutage in JSON, null when unknown), ' +
        'then the accounting applications and the links, on ' +
        'standard output (--json: one JSON object); every problem on standard error, naming its entry, never a key',
      done: 'every key accepted and the tenants settled: a worker would start with them',
      failed: 'a service could not be asked (unreachable or failing): its row says which; a retry may pass',
      more: [
        [2, 'a key refused, or the tenants ask what the services do not allow (this wins over 1: no retry mends it)'],
      ],
    },
  )
    .option('--json', 'print the report as one JSON object (compliance, accounting, links, problems)')
    .option('--wide', 'name every business and company, not only their count')
    .option(
      '--outages',
      "also count each application's running sales waiting out an outage by themselves, from Temporal's " +
        'visibility (a few seconds behind); unknown when Temporal cannot be reached, which is not an error',
    )
    .option(
      '--task-queue <name>',
      `with --outages: the task queue of the fleet's sale workflows (default ${WORKFLOW_TASK_QUEUE})`,
      nonBlank('--task-queue'),
    )
    .act<Options>((_args, options) => main(options)),
);

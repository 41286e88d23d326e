// Read-only: it files no document and moves no stock, so it is safe against production keys.
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { ApiError } from '../http/errors.js';
import { DEFAULT_CONCURRENCY, type TenantDirectory } from '../tenants/directory.js';
import { mapBounded } from '../tenants/probes.js';
import { SERVICES_ENVIRONMENT, createProgram, runProgram } from './command.js';
import { someIds } from '../tenants/assignment.js';
import { namesTenantsFile, openReadOnlyTenants, openSingleKeyClients, readOnlyLogger } from './read-only.js';

/** Each operation's check, in the order a person would try them. */
type Checks = Record<string, () => Promise<string>>;

type CheckRow = Awaited<ReturnType<typeof runChecks>>[number];

/** One after another: a key's first failure is the row to read. `application`: undefined for the single-key check. */
async function runChecks(service: string, application: string | undefined, checks: Checks) {
  const rows = [];
  for (const [operation, run] of Object.entries(checks)) {
    const started = performance.now();
    const row = (ok: boolean, summary: string) => {
      return { service, application, operation, ok, summary, ms: Math.round(performance.now() - started) };
    };
    try {
      rows.push(row(true, await run()));
    } catch (err) {
      if (err instanceof ApiError) rows.push(row(false, `${err.status ?? '-'} ${err.code}: ${err.message}`));
      else rows.push(row(false, err instanceof Error ? err.message : String(err)));
    }
  }
  return rows;
}

/** `served`: a tenant's businesses, whose first is asked for; without a tenant, the key's own. */
function complianceChecks(client: ComplianceClient, served?: readonly string[]): Checks {
  const business = served?.[0];
  const forBusiness = business === undefined ? {} : { businessId: business };
  const of = business === undefined ? '' : `${business}: `;
  const businessChecks: Checks =
    served && business === undefined
      ? { 'items and purchases': async () => 'not asked: it serves no business' }
      : {
          async items() {
            const { data } = await client.listItems(forBusiness);
            const registered = data.filter((i) => i.registrationStatus === 'REGISTERED').length;
            return `${of}${data.length} item(s), ${registered} registered`;
          },
          async purchases() {
            const { data } = await client.listPurchases({ pageSize: 5 }, forBusiness);
            const more = data.pagination.nextCursor ? 'yes' : 'no';
            return `${of}${data.purchases.length} on the first page; more: ${more}`;
          },
        };
  return {
    async identity() {
      const { data, meta } = await client.getIdentity();
      const application = served && data.application?.id ? `application ${data.application.id}; ` : '';
      const rate = `rate limit ${meta.rateLimit.limit ?? '?'}/min, ${meta.rateLimit.remaining ?? '?'} left`;
      return `${application}scopes ${data.apiKey?.scopes?.join(' ') ?? '?'}; ${rate}`;
    },
    async businesses() {
      const { data } = await client.listBusinesses();
      if (served) return `${data.length} its key can act for; serves ${served.length}: ${someIds(served)}`;
      return `${data.length} business(es): ${data.map((b) => b.id).join(', ')}`;
    },
    ...businessChecks,
    'code lists': async () => `${(await client.listCodeLists()).data.length} code list(s)`,
  };
}

function accountingChecks(client: AccountingClient): Checks {
  return {
    companies: async () => `${(await client.listCompanies()).data.total} compan(ies)`,
    'bill payments': async () => {
      const { data } = await client.listBillPayments({ limit: 5 });
      return `${data.total} bill payment(s) in ${data.totalPages} page(s) of 5`;
    },
  };
}

async function checkTenants(directory: TenantDirectory): Promise<number> {
  const compliance = await mapBounded(directory.applications(), DEFAULT_CONCURRENCY, async (application) => {
    const client = directory.complianceClient(application.application);
    if (!client) return [];
    return runChecks('compliance', application.application, complianceChecks(client, application.businesses));
  });
  const accounting = await mapBounded(directory.accountingApplications(), DEFAULT_CONCURRENCY, async (application) => {
    const client = directory.accountingClient(application.application);
    return client ? runChecks('accounting', application.application, accountingChecks(client)) : [];
  });
  const rows = [...compliance.flat(), ...accounting.flat()];
  console.log(`tenants: ${directory.origin}`);
  for (const { application, businesses, serviceApplicationId } of directory.applications()) {
    const service = serviceApplicationId ? ` (service application ${serviceApplicationId})` : '';
    console.log(`compliance ${application}: ${businesses.length} business(es) served${service}`);
  }
  for (const application of directory.accountingApplications())
    console.log(`accounting ${application.application}: ${application.companies.length} compan(ies) seen`);
  console.log('');
  const applications =
    `${directory.applications().length} compliance and ` +
    `${directory.accountingApplications().length} accounting application(s)`;
  return printRows(rows, true, `all checks passed (${applications})`);
}

/** The rows, then `passed` or which checks failed: `2 check(s) failed: compliance retail (items, purchases)`. */
function printRows(rows: readonly CheckRow[], withApplication: boolean, passed: string): number {
  console.table(
    rows.map((r) => ({
      service: r.service,
      ...(withApplication ? { application: r.application } : {}),
      operation: r.operation,
      result: r.ok ? 'ok' : 'FAILED',
      ms: r.ms,
      summary: r.summary,
    })),
  );
  const failed = rows.filter((r) => !r.ok);
  const byApplication = Map.groupBy(failed, (row) => `${row.service} ${row.application ?? ''}`.trim());
  const which = [...byApplication].map(([name, checks]) => `${name} (${checks.map((c) => c.operation).join(', ')})`);
  console.log(failed.length === 0 ? passed : `${failed.length} check(s) failed: ${which.join(', ')}`);
  return failed.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const logger = readOnlyLogger('check', process.env);
  if (namesTenantsFile(process.env)) {
    // A tenants file names every setting per entry: only the log level is read beside it.
    const directory = await openReadOnlyTenants(process.env, logger);
    try {
      return await checkTenants(directory);
    } finally {
      await directory.close();
    }
  }
  // One application per service is configured: its clients are what the worker would use.
  const { config, services, compliance, accounting, close } = await openSingleKeyClients(process.env, logger);
  try {
    const rows = [
      ...(await runChecks('compliance', undefined, complianceChecks(compliance))),
      ...(await runChecks('accounting', undefined, accountingChecks(accounting))),
    ];
    const where = (real: boolean, url: string) => `${url}${real ? '' : ' (embedded sandbox)'}`;
    console.log(`compliance: ${where(config.compliance !== undefined, services.compliance.baseUrl)}`);
    console.log(`accounting: ${where(config.accounting !== undefined, services.accounting.baseUrl)}\n`);
    return printRows(rows, false, 'all checks passed');
  } finally {
    await close();
  }
}

runProgram(
  createProgram(
    'npm run check --',
    'Proves the configured services answer the clients: a read-only round trip through both (it files nothing); ' +
      'with a tenants file, through every application it names.',
    {
      environment: [
        [
          'TENANTS_FILE',
          'a tenants file: every compliance and accounting application it names is checked with its own key',
        ],
        ['TENANTS_DIR', 'or a directory of them (every *.json); not both'],
        ...SERVICES_ENVIRONMENT,
      ],
      output:
        'one row per check on standard output ' +
        '(service, with a tenants file the application, operation, result, ms, summary); ' +
        'notes and errors on standard error, naming the tenant entry, never a key',
      done: 'all checks passed',
      failed:
        'a check failed: its row names the application, the operation and the answer ' +
        '(or a service could not be asked)',
      more: [
        [
          2,
          'with a tenants file: a key refused, or a business the tenants cannot settle ' +
            '(every problem named by its entry)',
        ],
      ],
    },
  ).act(main),
);

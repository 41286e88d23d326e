// Read-only: it files no document and moves no stock, so it is safe against production keys.
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { loadConfig } from '../config/env.js';
import { ApiError } from '../http/errors.js';
import { createLogger } from '../logger.js';
import { assertReadOnlyServices, openClients, resolveServices } from '../services/endpoints.js';
import type { TenantDirectory } from '../tenants/directory.js';
import { mapBounded } from '../tenants/probes.js';
import { createProgram, runProgram } from './command.js';
import { BAD_INPUT_EXIT, SERVICES_ENVIRONMENT, helpSections } from './help.js';
import { namesTenantsFile, openReadOnlyTenants, someIds } from './read-only-tenants.js';

interface CheckRow {
  service: string;
  /** The tenant entry's application name; undefined for the single-key check. */
  application: string | undefined;
  operation: string;
  ok: boolean;
  summary: string;
  ms: number;
}

type Check = [operation: string, run: () => Promise<string>];

/** Applications checked at once, as the tenant directory asks them. */
const CONCURRENCY = 8;

async function timed(service: string, application: string | undefined, [operation, run]: Check): Promise<CheckRow> {
  const started = performance.now();
  try {
    const summary = await run();
    return { service, application, operation, ok: true, summary, ms: Math.round(performance.now() - started) };
  } catch (err) {
    const summary =
      err instanceof ApiError
        ? `${err.status ?? '-'} ${err.code}: ${err.message}`
        : err instanceof Error
          ? err.message
          : String(err);
    return { service, application, operation, ok: false, summary, ms: Math.round(performance.now() - started) };
  }
}

/** One after another, as a person would try them: a key's first failure is the row to read. */
async function runChecks(
  service: string,
  application: string | undefined,
  checks: readonly Check[],
): Promise<CheckRow[]> {
  const rows: CheckRow[] = [];
  for (const check of checks) rows.push(await timed(service, application, check));
  return rows;
}

/** `tenant.business`: a tenant's first served business; without a tenant, the key's own. */
function complianceChecks(
  client: ComplianceClient,
  tenant?: { business: string | undefined; served: readonly string[] },
): Check[] {
  const forBusiness = tenant?.business === undefined ? {} : { businessId: tenant.business };
  const of = tenant?.business === undefined ? '' : `${tenant.business}: `;
  const businessChecks: Check[] =
    tenant !== undefined && tenant.business === undefined
      ? [['items and purchases', async () => 'not asked: it serves no business']]
      : [
          [
            'items',
            async () => {
              const { data } = await client.listItems(forBusiness);
              const registered = data.filter((i) => i.registrationStatus === 'REGISTERED').length;
              return `${of}${data.length} item(s), ${registered} registered`;
            },
          ],
          [
            'purchases',
            async () => {
              const { data } = await client.listPurchases({ pageSize: 5 }, forBusiness);
              const more = data.pagination.nextCursor ? 'yes' : 'no';
              return `${of}${data.purchases.length} on the first page; more: ${more}`;
            },
          ],
        ];
  return [
    [
      'identity',
      async () => {
        const { data, meta } = await client.getIdentity();
        const application = tenant && data.application?.id ? `application ${data.application.id}; ` : '';
        const rate = `rate limit ${meta.rateLimit.limit ?? '?'}/min, ${meta.rateLimit.remaining ?? '?'} left`;
        return `${application}scopes ${data.apiKey?.scopes?.join(' ') ?? '?'}; ${rate}`;
      },
    ],
    [
      'businesses',
      async () => {
        const { data } = await client.listBusinesses();
        if (tenant)
          return `${data.length} its key can act for; serves ${tenant.served.length}: ${someIds(tenant.served)}`;
        return `${data.length} business(es): ${data.map((b) => b.id).join(', ')}`;
      },
    ],
    ...businessChecks,
    [
      'code lists',
      async () => {
        const { data } = await client.listCodeLists();
        return `${data.length} code list(s)`;
      },
    ],
  ];
}

function accountingChecks(client: AccountingClient): Check[] {
  return [
    [
      'companies',
      async () => {
        const { data } = await client.listCompanies();
        return `${data.total} compan(ies)`;
      },
    ],
    [
      'bill payments',
      async () => {
        const { data } = await client.listBillPayments({ limit: 5 });
        return `${data.total} bill payment(s) in ${data.totalPages} page(s) of 5`;
      },
    ],
  ];
}

/** Every application of the tenants, each with its own client, in the file's order. */
async function checkTenants(directory: TenantDirectory): Promise<CheckRow[]> {
  const compliance = await mapBounded(directory.applications(), CONCURRENCY, async (application) => {
    const client = directory.complianceClient(application.application);
    if (!client) return [];
    const tenant = { business: application.businesses[0], served: application.businesses };
    return runChecks('compliance', application.application, complianceChecks(client, tenant));
  });
  const accounting = await mapBounded(directory.accountingApplications(), CONCURRENCY, async (application) => {
    const client = directory.accountingClient(application.application);
    return client ? runChecks('accounting', application.application, accountingChecks(client)) : [];
  });
  return [...compliance.flat(), ...accounting.flat()];
}

function printRows(rows: readonly CheckRow[], withApplication: boolean): void {
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
}

/** `2 check(s) failed: retail (items, purchases), books (companies)`: which application, which operations. */
function failedLine(rows: readonly CheckRow[]): string {
  const failed = rows.filter((r) => !r.ok);
  const byApplication = new Map<string, string[]>();
  for (const row of failed) {
    const name = `${row.service} ${row.application ?? ''}`.trim();
    byApplication.set(name, [...(byApplication.get(name) ?? []), row.operation]);
  }
  const which = [...byApplication].map(([name, operations]) => `${name} (${operations.join(', ')})`);
  return `${failed.length} check(s) failed: ${which.join(', ')}`;
}

async function mainWithTenants(): Promise<number> {
  // A tenants file names every setting per entry: only the log level is read beside it.
  const { logLevel } = loadConfig({ LOG_LEVEL: process.env.LOG_LEVEL });
  const directory = await openReadOnlyTenants(
    process.env,
    createLogger({ level: logLevel === 'info' ? 'warn' : logLevel, name: 'check', stderr: true }),
  );
  try {
    const rows = await checkTenants(directory);
    console.log(`tenants: ${directory.origin}`);
    for (const application of directory.applications()) {
      const service = application.serviceApplicationId
        ? ` (service application ${application.serviceApplicationId})`
        : '';
      console.log(
        `compliance ${application.application}: ${application.businesses.length} business(es) served${service}`,
      );
    }
    for (const application of directory.accountingApplications()) {
      console.log(`accounting ${application.application}: ${application.companies.length} compan(ies) seen`);
    }
    console.log('');
    printRows(rows, true);
    const applications =
      `${directory.applications().length} compliance and ` +
      `${directory.accountingApplications().length} accounting application(s)`;
    const ok = rows.every((r) => r.ok);
    console.log(ok ? `all checks passed (${applications})` : failedLine(rows));
    return ok ? 0 : 1;
  } finally {
    await directory.close();
  }
}

async function main(): Promise<number> {
  if (namesTenantsFile(process.env)) return mainWithTenants();
  const config = loadConfig(process.env);
  assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const logger = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel, name: 'check' });
  const services = await resolveServices(config, logger);
  // One application per service is configured: its clients are what the worker would use.
  const access = openClients(services);
  const { compliance, accounting } = access;
  try {
    const rows = [
      ...(await runChecks('compliance', undefined, complianceChecks(compliance))),
      ...(await runChecks('accounting', undefined, accountingChecks(accounting))),
    ];
    const where = (real: boolean, url: string) => `${url}${real ? '' : ' (embedded sandbox)'}`;
    console.log(`compliance: ${where(config.compliance !== undefined, services.compliance.baseUrl)}`);
    console.log(`accounting: ${where(config.accounting !== undefined, services.accounting.baseUrl)}\n`);
    printRows(rows, false);
    const failed = rows.filter((r) => !r.ok).length;
    console.log(failed === 0 ? 'all checks passed' : `${failed} check(s) failed`);
    return failed === 0 ? 0 : 1;
  } finally {
    await access.close();
    await services.close();
  }
}

runProgram(
  createProgram(
    'npm run check --',
    'Proves the configured services answer the clients: a read-only round trip through both (it files nothing); ' +
      'with a tenants file, through every application it names.',
  )
    .addHelpText(
      'after',
      helpSections({
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
        exitCodes: [
          [0, 'all checks passed'],
          [
            1,
            'a check failed: its row names the application, the operation and the answer ' +
              '(or a service could not be asked)',
          ],
          BAD_INPUT_EXIT,
          [
            2,
            'with a tenants file: a key refused, or a business the tenants cannot settle ' +
              '(every problem named by its entry)',
          ],
        ],
      }),
    )
    .act(main),
);

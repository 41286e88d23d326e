// Read-only; no Temporal needed. Logs go to stderr, so stdout holds exactly the JSON or the CSV asked for.
import { writeFile } from 'node:fs/promises';
import { loadReconciliationData } from '../reconciliation/load.js';
import { formatTable, reportRows, toCsv } from '../reconciliation/report.js';
import {
  DEFAULT_RECONCILE_OPTIONS,
  calendarDay,
  dayNumber,
  isPeriodDays,
  reconcile,
  reconciliationPeriod,
} from '../reconciliation/rules.js';
import { MAX_PERIOD_DAYS, type ReconcileOptions } from '../contracts/reconciliation.js';
import { SERVICES_ENVIRONMENT, createProgram, runProgram, valueParser } from './command.js';
import { namesTenantsFile, openReadOnlyTenants, openSingleKeyClients, readOnlyLogger, withEntry } from './read-only.js';
import type { AccountingClient } from '../accounting/client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { ConfigError, type Env } from '../config/env.js';
import { parseReconcilePeriodDays, parseReconciliationLinks } from '../config/reconciliation.js';
import type { Logger } from '../logger.js';
import type { TenantDirectory } from '../tenants/directory.js';
import { someIds } from '../tenants/assignment.js';

interface ReconcileArgs {
  company?: string;
  json?: boolean;
  csv?: string;
  asOf?: string;
  tolerance?: number;
  windowDays?: number;
  periodDays?: number;
}

/** `--csv -`: the CSV on standard output. */
const STDOUT = '-';

const nonNegative = (flag: string) =>
  valueParser(flag, 'must be a number of at least 0', (text) => {
    const value = Number(text);
    return text.trim() === '' || !Number.isFinite(value) || value < 0 ? undefined : value;
  });

const periodDays = valueParser(
  '--period-days',
  `must be a whole number of days from 1 to ${MAX_PERIOD_DAYS}`,
  (text) => {
    const value = /^\d{1,6}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
    return isPeriodDays(value) ? value : undefined;
  },
);

const day = valueParser('--as-of', 'must be a date YYYY-MM-DD', (text) =>
  /^\d{4}-\d{2}-\d{2}$/.test(text) && dayNumber(text) !== undefined ? text : undefined,
);

/** The two clients a reconciliation reads with; `applications`: with a tenants file, the ones read through. */
interface ReconciliationClients {
  compliance: ComplianceClient;
  accounting: AccountingClient;
  companyId: string;
  applications: { compliance: string; accounting: string } | undefined;
  /** A failed call, said with the tenant entry that made it. */
  wrapError(err: unknown): unknown;
  close(): Promise<void>;
}

/** Through the tenants file, else the single-key variables (or the embedded sandbox). */
async function openReconciliation(
  env: Env,
  businessId: string,
  company: string | undefined,
  logger: Logger,
): Promise<ReconciliationClients> {
  if (namesTenantsFile(env)) return openTenantReconciliation(env, businessId, company, logger);
  const links = parseReconciliationLinks(env.RECONCILE_LINKS);
  const clients = await openSingleKeyClients(env, logger);
  const companyId =
    company ??
    [...links, ...clients.services.sandboxReconciliationLinks].find((l) => l.businessId === businessId)?.companyId;
  if (companyId === undefined) {
    await clients.close();
    throw new ConfigError(
      `no accounting company is linked to business ${businessId}: pass --company or set RECONCILE_LINKS ` +
        `(businessId=companyId,...)`,
    );
  }
  return { ...clients, companyId, applications: undefined, wrapError: (err) => err };
}

/** Served by no application: says which serve what, so the missing entry or listing is plain. */
function notServed(directory: TenantDirectory, businessId: string): ConfigError {
  const serving = directory
    .applications()
    .map((application) => `${application.application} (${someIds(application.businesses, 5)})`);
  return new ConfigError(
    `business ${businessId} is served by no compliance application of ${directory.origin}; they serve: ` +
      `${serving.join('; ') || 'nothing'}`,
  );
}

/** The accounting application a company is read through: its link's, else the only one whose key sees it. */
function accountingApplicationFor(directory: TenantDirectory, businessId: string, companyId: string): string {
  const linked = directory.accountingApplicationOf(companyId);
  if (linked !== undefined) return linked;
  const seeing = directory.accountingApplications().filter((application) => application.companies.includes(companyId));
  if (seeing.length === 1) return seeing[0]!.application;
  if (seeing.length === 0)
    throw new ConfigError(
      `company ${companyId} (for business ${businessId}) is seen by no accounting application of ${directory.origin}`,
    );
  throw new ConfigError(
    `company ${companyId} is seen by accounting applications ` +
      `${seeing.map((a) => a.application).join(' and ')} of ${directory.origin}, and no link says which: ` +
      `add a link for business ${businessId}`,
  );
}

/** The clients of the applications serving the business and its company; closes the tenants on a refusal. */
async function openTenantReconciliation(
  env: Env,
  businessId: string,
  company: string | undefined,
  logger: Logger,
): Promise<ReconciliationClients> {
  const directory = await openReadOnlyTenants(env, logger);
  try {
    const complianceName = directory.applicationOf(businessId);
    if (complianceName === undefined) throw notServed(directory, businessId);
    const link = directory.links().find((l) => l.businessId === businessId);
    const companyId = company ?? link?.companyId;
    if (companyId === undefined)
      throw new ConfigError(
        `no accounting company is linked to business ${businessId} in ${directory.origin}: ` +
          'pass --company or add a link',
      );
    const accountingName =
      link && link.companyId === companyId
        ? link.accounting
        : accountingApplicationFor(directory, businessId, companyId);
    const sources = {
      compliance: directory.applications().find((a) => a.application === complianceName)?.source,
      accounting: directory.accountingApplications().find((a) => a.application === accountingName)?.source,
    };
    return {
      // The directory holds a client for every application it resolved (it refuses a file with a key refused).
      compliance: directory.complianceClient(complianceName)!,
      accounting: directory.accountingClient(accountingName)!,
      companyId,
      applications: { compliance: complianceName, accounting: accountingName },
      wrapError: (err) => withEntry(err, sources),
      close: () => directory.close(),
    };
  } catch (err) {
    await directory.close();
    throw err;
  }
}

async function main(businessId: string, args: ReconcileArgs): Promise<number> {
  // The schedule's period unless the command line says otherwise, so both report the same invoices.
  const period = args.periodDays ?? parseReconcilePeriodDays(process.env.RECONCILE_PERIOD_DAYS);
  const options: Partial<ReconcileOptions> = {
    ...(args.tolerance === undefined ? {} : { amountTolerance: args.tolerance }),
    ...(args.windowDays === undefined ? {} : { dateWindowDays: args.windowDays }),
    ...(period === undefined ? {} : { periodDays: period }),
  };
  const asOf = args.asOf ?? calendarDay(Date.now());
  const logger = readOnlyLogger('reconcile', process.env);
  const clients = await openReconciliation(process.env, businessId, args.company?.trim() || undefined, logger);
  try {
    const { companyId, applications } = clients;
    const data = await loadReconciliationData(clients, {
      businessId,
      companyId,
      period: reconciliationPeriod(asOf, options),
      checkAccess: applications === undefined,
    }).catch((err: unknown) => {
      throw clients.wrapError(err);
    });
    const result = reconcile(data.purchases, data.billPayments, asOf, options);
    const report = { businessId, companyId, result, purchases: data.purchases, billPayments: data.billPayments };
    if (args.csv === STDOUT) {
      process.stdout.write(toCsv(report));
      return 0;
    }
    if (args.csv !== undefined) {
      await writeFile(args.csv, toCsv(report));
      console.error(`wrote ${reportRows(report).length} rows to ${args.csv}`);
    }
    if (args.json) {
      // JSON leaves out the applications when undefined (the single-key variables).
      console.log(JSON.stringify({ businessId, companyId, applications, ...result }));
    } else {
      process.stdout.write(formatTable(report));
      if (applications)
        console.log(
          `through compliance application ${applications.compliance} and accounting application ` +
            `${applications.accounting}`,
        );
    }
    return 0;
  } finally {
    await clients.close();
  }
}

runProgram(
  createProgram(
    'npm run reconcile --',
    "The business's supplier invoices against its accounting company's bill payments, on the configured " +
      'services (or the embedded sandbox, as npm run check resolves them). Read-only; no Temporal needed.',
    {
      environment: [
        [
          'TENANTS_FILE',
          'a tenants file: the business is read through the application serving it, the company through ' +
            "its link's accounting application",
        ],
        ['TENANTS_DIR', 'or a directory of them (every *.json); not both'],
        ...SERVICES_ENVIRONMENT,
        ['RECONCILE_LINKS', 'without a tenants file: the accounting company of each business: biz_a=cmp_1,biz_b=cmp_2'],
        [
          'RECONCILE_PERIOD_DAYS',
          `the period's days when --period-days is not given (default ${DEFAULT_RECONCILE_OPTIONS.periodDays})`,
        ],
      ],
      output:
        'the table (--json: one JSON object, with a tenants file also the applications used; --csv -: ' +
        'the CSV) on standard output; ' +
        'logs and errors on standard error, naming the tenant entry, never a key',
      done: 'done',
      failed: 'a service refused or failed (with a tenants file, its entry is named)',
      more: [
        [
          2,
          'with a tenants file: a key refused, a business no application serves, a company no ' +
            'accounting application sees',
        ],
      ],
    },
  )
    .argument('<businessId>')
    .option(
      '--company <companyId>',
      'accounting company of the business (default: its link in the tenants file, or RECONCILE_LINKS, ' +
        "e.g. biz_a=cmp_1,biz_b=cmp_2; with the embedded sandbox, the demo world's link)",
    )
    .option(
      '--json',
      'print one JSON object (matched, suggested, amountMismatches, unpaidPurchases, unmatchedPayments, ...)',
    )
    .option(
      '--csv <file>',
      'also write one row per invoice and payment, with its category, to <file>; "-": the CSV alone on ' +
        'standard output, instead of the table',
    )
    .option(
      '--as-of <YYYY-MM-DD>',
      "last day of the period, and the day unpaid invoices' ages are counted to (default: today in Nairobi)",
      day,
    )
    .option(
      '--period-days <days>',
      `reconcile the invoices dated in this many days ending at --as-of (default RECONCILE_PERIOD_DAYS, else ` +
        `${DEFAULT_RECONCILE_OPTIONS.periodDays})`,
      periodDays,
    )
    .option(
      '--tolerance <amount>',
      `largest difference that still counts as the same amount (default ${DEFAULT_RECONCILE_OPTIONS.amountTolerance})`,
      nonNegative('--tolerance'),
    )
    .option(
      '--window-days <days>',
      `payment date within this many days of the invoice date for a suggestion (default ` +
        `${DEFAULT_RECONCILE_OPTIONS.dateWindowDays})`,
      nonNegative('--window-days'),
    )
    .act<ReconcileArgs>(([businessId], args, command) => {
      if (!businessId?.trim()) return command.error('error: businessId must not be empty');
      if (args.csv === STDOUT && args.json)
        return command.error('error: --csv - and --json both write to standard output: choose one');
      return main(businessId.trim(), args);
    }),
);

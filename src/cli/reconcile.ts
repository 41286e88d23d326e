// Read-only; no Temporal needed. Logs go to stderr, so stdout holds exactly the JSON or the CSV asked for.
import { writeFile } from 'node:fs/promises';
import { ConfigError, loadConfig } from '../config/env.js';
import { createLogger, type Logger } from '../logger.js';
import { parseReconciliationLinks } from '../config/reconciliation.js';
import { loadReconciliationData } from '../reconciliation/load.js';
import { formatTable, reportRows, toCsv } from '../reconciliation/report.js';
import { DEFAULT_RECONCILE_OPTIONS, calendarDay, dayNumber, reconcile } from '../reconciliation/rules.js';
import { type ReconcileOptions } from '../contracts/reconciliation.js';
import { assertReadOnlyServices, openClients, resolveServices } from '../services/endpoints.js';
import { createProgram, runProgram, valueParser } from './command.js';
import { BAD_INPUT_EXIT, SERVICES_ENVIRONMENT, helpSections } from './help.js';
import { namesTenantsFile } from './read-only-tenants.js';
import { openTenantReconciliation } from './reconcile-tenants.js';
import type { ReconciliationClients } from './reconcile-tenants.js';

interface ReconcileArgs {
  company?: string;
  json?: boolean;
  csv?: string;
  asOf?: string;
  tolerance?: number;
  windowDays?: number;
}

/** `--csv -`: the CSV on standard output. */
const STDOUT = '-';

const nonNegative = (flag: string) =>
  valueParser(flag, 'must be a number of at least 0', (text) => {
    const value = Number(text);
    return text.trim() === '' || !Number.isFinite(value) || value < 0 ? undefined : value;
  });

const day = valueParser('--as-of', 'must be a date YYYY-MM-DD', (text) =>
  /^\d{4}-\d{2}-\d{2}$/.test(text) && dayNumber(text) !== undefined ? text : undefined,
);

/** The clients of the single-key variables (or the embedded sandbox), and the company the business is linked to. */
async function openEnvironmentReconciliation(
  businessId: string,
  company: string | undefined,
  logger: Logger,
): Promise<ReconciliationClients> {
  const config = loadConfig(process.env);
  assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const links = parseReconciliationLinks(process.env.RECONCILE_LINKS);
  const services = await resolveServices(config, logger);
  const access = openClients(services);
  const close = async () => {
    await access.close();
    await services.close();
  };
  // The embedded sandbox's own links, when it is the accounting service.
  const companyId =
    company ??
    links.find((l) => l.businessId === businessId)?.companyId ??
    services.sandboxReconciliationLinks.find((l) => l.businessId === businessId)?.companyId;
  if (companyId === undefined) {
    await close();
    throw new ConfigError(
      `no accounting company is linked to business ${businessId}: pass --company or set RECONCILE_LINKS ` +
        `(businessId=companyId,...)`,
    );
  }
  return {
    compliance: access.compliance,
    accounting: access.accounting,
    companyId,
    applications: undefined,
    checkAccess: true,
    wrapError: (err) => err,
    close,
  };
}

async function main(businessId: string, args: ReconcileArgs): Promise<number> {
  const options: Partial<ReconcileOptions> = {
    ...(args.tolerance === undefined ? {} : { amountTolerance: args.tolerance }),
    ...(args.windowDays === undefined ? {} : { dateWindowDays: args.windowDays }),
  };
  const fromFile = namesTenantsFile(process.env);
  // With a tenants file only the log level is read beside it: every other setting is the entries'.
  const { logLevel } = loadConfig(fromFile ? { LOG_LEVEL: process.env.LOG_LEVEL } : process.env);
  // stderr: with --json, stdout is the answer and nothing else.
  const logger = createLogger({ name: 'reconcile', level: logLevel === 'info' ? 'warn' : logLevel, stderr: true });
  const company = args.company?.trim() || undefined;
  const clients = fromFile
    ? await openTenantReconciliation(process.env, businessId, company, logger)
    : await openEnvironmentReconciliation(businessId, company, logger);
  try {
    const { companyId, applications } = clients;
    let data;
    try {
      data = await loadReconciliationData(
        { compliance: clients.compliance, accounting: clients.accounting },
        { businessId, companyId, checkAccess: clients.checkAccess },
      );
    } catch (err) {
      throw clients.wrapError(err);
    }
    const asOf = args.asOf ?? calendarDay(Date.now());
    const result = reconcile(data.purchases, data.billPayments, asOf, options);
    const report = { businessId, companyId, result, purchases: data.purchases, billPayments: data.billPayments };
    // `-` is standard output, as for every other tool of a shell pipe: the CSV alone, the table left out.
    if (args.csv === STDOUT) {
      process.stdout.write(toCsv(report));
      return 0;
    }
    if (args.csv !== undefined) {
      await writeFile(args.csv, toCsv(report));
      console.error(`wrote ${reportRows(report).length} rows to ${args.csv}`);
    }
    if (args.json) {
      console.log(
        JSON.stringify({
          businessId,
          companyId,
          ...(applications ? { applications } : {}),
          ...result,
        }),
      );
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
    .option('--as-of <YYYY-MM-DD>', "day unpaid invoices' ages are counted to (default: today in Nairobi)", day)
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
    .addHelpText(
      'after',
      helpSections({
        environment: [
          [
            'TENANTS_FILE',
            'a tenants file: the business is read through the application serving it, the company through ' +
              "its link's accounting application",
          ],
          ['TENANTS_DIR', 'or a directory of them (every *.json); not both'],
          ...SERVICES_ENVIRONMENT,
          [
            'RECONCILE_LINKS',
            'without a tenants file: the accounting company of each business: biz_a=cmp_1,biz_b=cmp_2',
          ],
        ],
        output:
          'the table (--json: one JSON object, with a tenants file also the applications used; --csv -: ' +
          'the CSV) on standard output; ' +
          'logs and errors on standard error, naming the tenant entry, never a key',
        exitCodes: [
          [0, 'done'],
          [1, 'a service refused or failed (with a tenants file, its entry is named)'],
          BAD_INPUT_EXIT,
          [
            2,
            'with a tenants file: a key refused, a business no application serves, a company no ' +
              'accounting application sees',
          ],
        ],
      }),
    )
    .act<ReconcileArgs>(([businessId], args, command) => {
      if (!businessId?.trim()) return command.error('error: businessId must not be empty');
      if (args.csv === STDOUT && args.json)
        return command.error('error: --csv - and --json both write to standard output: choose one');
      return main(businessId.trim(), args);
    }),
);

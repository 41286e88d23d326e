/**
 * `npm run reconcile -- <businessId> [--company <companyId>] [--json] [--csv file]`: the business's supplier
 * invoices against its accounting company's bill payments, against the configured services (or, with
 * SANDBOX=embedded or none configured, the embedded sandbox), as `npm run check` resolves them. Read-only; no Temporal needed.
 * Logs go to stderr, so with --json stdout holds exactly one JSON object.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { AccountingClient } from '../accounting/client.js';
import { ComplianceClient } from '../compliance/client.js';
import { ConfigError, loadConfig } from '../config/env.js';
import { createLogger } from '../logger.js';
import { parseReconciliationLinks } from '../reconciliation/links.js';
import { loadReconciliationData } from '../reconciliation/load.js';
import { formatTable, reportRows, toCsv } from '../reconciliation/report.js';
import { DEFAULT_RECONCILE_OPTIONS, calendarDay, dayNumber, reconcile } from '../reconciliation/rules.js';
import { type ReconcileOptions } from '../contracts/reconciliation.js';
import { assertReadOnlyServices, resolveServices } from '../services/endpoints.js';
import { runMain } from './run-main.js';

const USAGE = `usage: npm run reconcile -- <businessId> [--company <companyId>] [--json] [--csv <file>]
                              [--as-of YYYY-MM-DD] [--tolerance <amount>] [--window-days <days>]

  --company       accounting company of the business (default: RECONCILE_LINKS, e.g. biz_a=cmp_1,biz_b=cmp_2;
                  with the embedded sandbox, the demo world's link)
  --json          print one JSON object (matched, suggested, amountMismatches, unpaidPurchases, unmatchedPayments, ...)
  --csv           also write one row per invoice and payment, with its category, to <file>
  --as-of         day unpaid invoices' ages are counted to (default: today in Nairobi)
  --tolerance     largest difference that still counts as the same amount (default ${DEFAULT_RECONCILE_OPTIONS.amountTolerance})
  --window-days   payment date within this many days of the invoice date for a suggestion (default ${DEFAULT_RECONCILE_OPTIONS.dateWindowDays})`;

class UsageError extends Error {}

function nonNegative(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) throw new UsageError(`${flag} must be a number of at least 0, not ${JSON.stringify(text)}`);
  return value;
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      company: { type: 'string' },
      json: { type: 'boolean', default: false },
      csv: { type: 'string' },
      'as-of': { type: 'string' },
      tolerance: { type: 'string' },
      'window-days': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  if (positionals.length !== 1 || !positionals[0]?.trim()) throw new UsageError('exactly one businessId is required');
  const asOf = values['as-of'];
  if (asOf !== undefined && (!/^\d{4}-\d{2}-\d{2}$/.test(asOf) || dayNumber(asOf) === undefined)) throw new UsageError(`--as-of must be a date YYYY-MM-DD, not ${JSON.stringify(asOf)}`);
  const tolerance = nonNegative('--tolerance', values.tolerance);
  const windowDays = nonNegative('--window-days', values['window-days']);
  const options: Partial<ReconcileOptions> = {
    ...(tolerance === undefined ? {} : { amountTolerance: tolerance }),
    ...(windowDays === undefined ? {} : { dateWindowDays: windowDays }),
  };
  return { businessId: positionals[0].trim(), company: values.company?.trim(), json: values.json, csv: values.csv, asOf, options };
}

async function main(): Promise<number> {
  let args;
  try {
    args = parse(process.argv.slice(2));
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (args === undefined) {
    console.log(USAGE);
    return 0;
  }
  const config = loadConfig();
  assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const links = parseReconciliationLinks(process.env.RECONCILE_LINKS);
  // stderr: with --json, stdout is the answer and nothing else.
  const logger = createLogger({ name: 'reconcile', level: config.logLevel === 'info' ? 'warn' : config.logLevel, stderr: true });
  const services = await resolveServices(config, logger);
  const compliance = new ComplianceClient(services.compliance);
  const accounting = new AccountingClient(services.accounting);
  try {
    let companyId = args.company ?? links.find((l) => l.businessId === args.businessId)?.companyId;
    if (companyId === undefined && config.accounting === undefined) {
      // Development dependency, loaded only when the embedded sandbox is the accounting service.
      const { DEMO_RECONCILIATION_LINK } = await import('../../sandbox/accounting/default-fixture.js');
      if (DEMO_RECONCILIATION_LINK.businessId === args.businessId) companyId = DEMO_RECONCILIATION_LINK.companyId;
    }
    if (companyId === undefined) {
      throw new ConfigError(`no accounting company is linked to business ${args.businessId}: pass --company or set RECONCILE_LINKS (businessId=companyId,...)`);
    }
    const data = await loadReconciliationData({ compliance, accounting }, { businessId: args.businessId, companyId });
    const asOf = args.asOf ?? calendarDay(Date.now());
    const result = reconcile(data.purchases, data.billPayments, asOf, args.options);
    const report = { businessId: args.businessId, companyId, result, purchases: data.purchases, billPayments: data.billPayments };
    if (args.csv !== undefined) {
      await writeFile(args.csv, toCsv(report));
      console.error(`wrote ${reportRows(report).length} rows to ${args.csv}`);
    }
    if (args.json) {
      console.log(JSON.stringify({ businessId: args.businessId, companyId, ...result, calls: data.calls }));
    } else {
      process.stdout.write(formatTable(report));
      console.log(`\n${data.calls.total} API calls (compliance ${data.calls.compliance.listBusinesses + data.calls.compliance.listPurchases}, accounting ${data.calls.accounting.listCompanies + data.calls.accounting.listBillPayments})`);
    }
    return 0;
  } finally {
    await compliance.close();
    await accounting.close();
    await services.close();
  }
}

runMain(main);

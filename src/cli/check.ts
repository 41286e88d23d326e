/**
 * `npm run check`: proves the configured services answer the clients (or the embedded sandbox, with
 * SANDBOX=embedded or when no service is configured at all). Read-only: it files no document and moves no stock, so it is safe against production keys.
 */
import { loadConfig } from '../config/env.js';
import { ApiError } from '../http/errors.js';
import { createLogger } from '../logger.js';
import { openServiceAccess } from '../services/access.js';
import { assertReadOnlyServices, resolveServices } from '../services/endpoints.js';
import { createProgram, runProgram } from './command.js';
import { BAD_INPUT_EXIT, SERVICES_ENVIRONMENT, helpSections } from './help.js';

interface CheckRow {
  service: string;
  operation: string;
  ok: boolean;
  summary: string;
  ms: number;
}

async function timed(service: string, operation: string, run: () => Promise<string>): Promise<CheckRow> {
  const started = performance.now();
  try {
    const summary = await run();
    return { service, operation, ok: true, summary, ms: Math.round(performance.now() - started) };
  } catch (err) {
    const summary =
      err instanceof ApiError ? `${err.status ?? '-'} ${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    return { service, operation, ok: false, summary, ms: Math.round(performance.now() - started) };
  }
}

async function main(): Promise<number> {
  const config = loadConfig(process.env);
  assertReadOnlyServices(config, (message) => console.error(`note: ${message}`));
  const logger = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel, name: 'check' });
  const services = await resolveServices(config, logger);
  // One application per service is configured: its clients are what the worker would use.
  const access = openServiceAccess(services);
  const [compliance] = access.complianceApplications();
  const [accounting] = access.accountingApplications();
  try {
    if (!compliance || !accounting) throw new Error('no service is configured');
    const rows = [
      await timed('compliance', 'identity', async () => {
        const { data, meta } = await compliance.getIdentity();
        return `scopes ${data.apiKey?.scopes?.join(' ') ?? '?'}; rate limit ${meta.rateLimit.limit ?? '?'}/min, ${meta.rateLimit.remaining ?? '?'} left`;
      }),
      await timed('compliance', 'businesses', async () => {
        const { data } = await compliance.listBusinesses();
        return `${data.length} business(es): ${data.map((b) => b.id).join(', ')}`;
      }),
      await timed('compliance', 'items', async () => {
        const { data } = await compliance.listItems();
        return `${data.length} item(s), ${data.filter((i) => i.registrationStatus === 'REGISTERED').length} registered`;
      }),
      await timed('compliance', 'purchases', async () => {
        const { data } = await compliance.listPurchases({ pageSize: 5 });
        return `${data.purchases.length} on the first page; more: ${data.pagination.nextCursor ? 'yes' : 'no'}`;
      }),
      await timed('compliance', 'code lists', async () => {
        const { data } = await compliance.listCodeLists();
        return `${data.length} code list(s)`;
      }),
      await timed('accounting', 'companies', async () => {
        const { data } = await accounting.listCompanies();
        return `${data.total} compan(ies)`;
      }),
      await timed('accounting', 'bill payments', async () => {
        const { data } = await accounting.listBillPayments({ limit: 5 });
        return `${data.total} bill payment(s) in ${data.totalPages} page(s) of 5`;
      }),
    ];
    const where = (real: boolean, url: string) => `${url}${real ? '' : ' (embedded sandbox)'}`;
    console.log(`compliance: ${where(config.compliance !== undefined, services.compliance.baseUrl)}`);
    console.log(`accounting: ${where(config.accounting !== undefined, services.accounting.baseUrl)}\n`);
    console.table(rows.map((r) => ({ service: r.service, operation: r.operation, result: r.ok ? 'ok' : 'FAILED', ms: r.ms, summary: r.summary })));
    const failed = rows.filter((r) => !r.ok).length;
    console.log(failed === 0 ? 'all checks passed' : `${failed} check(s) failed`);
    return failed === 0 ? 0 : 1;
  } finally {
    await access.close();
    await services.close();
  }
}

runProgram(
  createProgram('npm run check --', 'Proves the configured services answer the clients: a read-only round trip through both (it files nothing).')
    .addHelpText(
      'after',
      helpSections({
        environment: SERVICES_ENVIRONMENT,
        output: 'one row per check on standard output (service, operation, result, ms, summary); notes on standard error',
        exitCodes: [
          [0, 'all checks passed'],
          [1, 'a check failed: its row names the operation and the answer'],
          BAD_INPUT_EXIT,
        ],
      }),
    )
    .act(main),
);

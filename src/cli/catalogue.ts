// `check` only reads; `import` creates and registers a merchant's items through the worker.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { checkCodes, readServiceCodes } from '../catalogue/codes.js';
import { reportCsv } from '../catalogue/report.js';
import { formatOf, readCatalogue, type CatalogueProblem } from '../catalogue/rows.js';
import {
  CatalogueSizeError,
  catalogueImportProgress,
  catalogueImportReport,
  retryCatalogueImport,
  startCatalogueImport,
  waitForCatalogueImport,
} from '../client/catalogue.js';
import type { CatalogueImportProgress } from '../contracts/catalogue-import.js';
import { connectSalesClient } from '../client/sales-client.js';
import type { ComplianceClient } from '../compliance/client.js';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { SERVICES_ENVIRONMENT, createProgram } from './command.js';
import { TEMPORAL_ENVIRONMENT, UsageError, runClientProgram } from './client-command.js';
import { namesTenantsFile, openReadOnlyTenants, openSingleKeyClients, readOnlyLogger } from './read-only.js';

/** Problems printed before the count of the rest: a file with a wrong column has one per row. */
const PROBLEMS_SHOWN = 200;
/** Ten thousand rows of long names are a few megabytes: a file far larger is not a catalogue, and is not read. */
const FILE_BYTES_MAX = 64 * 1024 * 1024;

function said(problem: CatalogueProblem, json: boolean): string {
  if (problem.column === '(file)') return `the file ${problem.reason}`;
  return `${json ? 'item' : 'line'} ${problem.line}: ${problem.column} ${problem.reason}`;
}

async function withComplianceClient<T>(businessId: string, use: (client: ComplianceClient) => Promise<T>) {
  const logger = readOnlyLogger('catalogue', process.env);
  if (namesTenantsFile(process.env)) {
    const directory = await openReadOnlyTenants(process.env, logger);
    try {
      const serving = directory.applications().find((a) => a.businesses.includes(businessId));
      const client = serving && directory.complianceClient(serving.application);
      if (!client) throw new Error(`no application of ${directory.origin} serves business ${businessId}`);
      return await use(client);
    } finally {
      await directory.close();
    }
  }
  const { compliance, close } = await openSingleKeyClients(process.env, logger);
  try {
    return await use(compliance);
  } finally {
    await close();
  }
}

/** The file read and checked, its problems printed; `rows` only when it can be imported. */
async function checkedFile(businessId: string, file: string) {
  const format = formatOf(file);
  refuseBlank({ businessId });
  if (format === undefined) throw new UsageError('the file must be .csv or .json');
  const unreadable = (err: unknown): never => {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  };
  const { size } = await stat(file).catch(unreadable);
  const megabytes = (count: number) => `${Math.round(count / 1024 / 1024)} MB`;
  if (size > FILE_BYTES_MAX)
    throw new UsageError(`${file} is ${megabytes(size)}: a catalogue file is at most ${megabytes(FILE_BYTES_MAX)}`);
  const bytes = await readFile(file).catch(unreadable);
  const read = readCatalogue(bytes, format);
  const codes = read.records.length > 0 ? await withComplianceClient(businessId, readServiceCodes) : undefined;
  const problems = [...read.problems, ...(codes ? checkCodes(read.records, codes) : [])].sort(
    (a, b) => a.line - b.line,
  );
  for (const problem of problems.slice(0, PROBLEMS_SHOWN)) console.log(said(problem, format === 'json'));
  if (problems.length > PROBLEMS_SHOWN) console.log(`… and ${problems.length - PROBLEMS_SHOWN} more problem(s)`);
  const badLines = new Set(problems.map((p) => p.line)).size;
  console.log(
    problems.length === 0
      ? `${read.rows.length} item(s) ready: nothing wrong found against the service's code lists`
      : `${problems.length} problem(s) on ${badLines} ${format === 'json' ? 'item(s)' : 'line(s)'}: nothing was sent`,
  );
  return problems.length === 0 ? { code: 0, rows: read.rows } : { code: 1 };
}

function progressLine(p: CatalogueImportProgress): string {
  const width = 30;
  const filled = p.items === 0 ? width : Math.round((p.done / p.items) * width);
  const left = p.state === 'done' || p.secondsLeft === null ? '' : `, about ${Math.ceil(p.secondsLeft / 60)} min left`;
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  return `${bar} ${p.done}/${p.items} done, ${p.failed} not registered, ${p.requests} requests${left}`;
}

/** Before anything is read or asked: a blank id names nothing. */
function refuseBlank(ids: Record<string, string | undefined>): void {
  for (const [name, id] of Object.entries(ids)) if (!id?.trim()) throw new UsageError(`${name} must not be empty`);
}

/** What a person can act on is said in one line: a file too large, an import not there, or one not ended. */
async function withTemporal(use: (client: Client) => Promise<number>): Promise<number> {
  const connected = await connectSalesClient();
  try {
    return await use(connected.client);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new UsageError(`no such catalogue import (${err.workflowId})`);
    throw err instanceof CatalogueSizeError ? new UsageError(err.message) : err;
  } finally {
    await connected.close();
  }
}

async function writeReport(client: Client, businessId: string, importId: string, prefix: string) {
  const rows = await catalogueImportReport(client, businessId, importId);
  await writeFile(`${prefix}.json`, `${JSON.stringify(rows, null, 2)}\n`);
  await writeFile(`${prefix}.csv`, reportCsv(rows));
  console.log(`report: ${prefix}.csv, ${prefix}.json (${rows.length} rows)`);
}

async function importFile(
  [businessId, file]: string[],
  options: { dryRun?: boolean; wait?: boolean; report?: string; taskQueue?: string },
): Promise<number> {
  const checked = await checkedFile(businessId!, file!);
  if (!checked.rows || options.dryRun) return checked.code;
  return withTemporal(async (client) => {
    const started = await startCatalogueImport(client, businessId!, checked.rows, options.taskQueue);
    const sent = `${started.chunksSent} of ${started.chunks} chunk(s) sent now`;
    console.log(`import ${started.importId} (workflow ${started.workflowId}): ${sent}`);
    if (!options.wait) return 0;
    const final = await waitForCatalogueImport(client, businessId!, started.importId, (p) =>
      process.stderr.write(`\r${progressLine(p)}`),
    );
    process.stderr.write(`\r${progressLine(final)}\n`);
    console.log(JSON.stringify(final.outcomes));
    await writeReport(client, businessId!, started.importId, options.report ?? `catalogue-${started.importId}`);
    return final.failed === 0 ? 0 : 1;
  });
}

async function status([businessId, importId]: string[]): Promise<number> {
  refuseBlank({ businessId, importId });
  return withTemporal(async (client) => {
    const progress = await catalogueImportProgress(client, businessId!, importId!);
    console.log(progressLine(progress));
    console.log(JSON.stringify(progress, null, 2));
    return 0;
  });
}

async function retry([businessId, importId]: string[]): Promise<number> {
  refuseBlank({ businessId, importId });
  return withTemporal(async (client) => {
    const now = await retryCatalogueImport(client, businessId!, importId!);
    for (const row of now) console.log(`line ${row.line}  ${row.externalId}: now ${row.outcome}`);
    const registered = now.filter((row) => row.outcome === 'registered').length;
    console.log(`${now.length} item(s) sent again, ${registered} registered now`);
    return registered === now.length ? 0 : 1;
  });
}

async function report([businessId, importId]: string[], options: { out?: string }): Promise<number> {
  refuseBlank({ businessId, importId });
  return withTemporal(async (client) => {
    await writeReport(client, businessId!, importId!, options.out ?? `catalogue-${importId}`);
    return 0;
  });
}

const program = createProgram(
  'npm run catalogue --',
  "Imports a merchant's catalogue (CSV with a header row, or JSON) in the background: every row checked first (its " +
    "fields, and its codes against the service's code lists and item classifications), then each item created and " +
    'registered by the worker, at the lowest priority of its application budget.',
  {
    environment: [
      ['TENANTS_FILE', "a tenants file: the codes are read with the key of the business's application"],
      ['TENANTS_DIR', 'or a directory of them (every *.json); not both'],
      ...SERVICES_ENVIRONMENT,
      ...TEMPORAL_ENVIRONMENT,
    ],
    output:
      "one line per problem (`line 4: unitCode is not a code of the service's quantityUnit list`), then a count; " +
      'import: the import id; --wait: a progress bar on standard error, then the outcomes and the report files',
    done: 'nothing wrong found (import: the import started, or with --wait every item registered)',
    failed:
      'problems found (each named; nothing was sent); import --wait or retry: some items not registered (see the ' +
      'report)',
  },
);

program
  .command('check')
  .description('name every problem of the file by line (CSV) or item (JSON) and column, all at once')
  .argument('<businessId>')
  .argument('<file>', 'a .csv or .json file')
  .act(async ([businessId, file]) => (await checkedFile(businessId!, file!)).code);

program
  .command('import')
  .description('check the file, then import it; the same file again is the same import')
  .argument('<businessId>')
  .argument('<file>', 'a .csv or .json file')
  .option('--dry-run', 'check the file only, as `check` does')
  .option('--wait', 'follow the import to its end, then write the report')
  .option(
    '--report <prefix>',
    'with --wait: the report files <prefix>.csv and <prefix>.json (default catalogue-<importId>)',
  )
  .option('--task-queue <name>', `task queue of the workers (default ${WORKFLOW_TASK_QUEUE})`)
  .act(importFile);

program
  .command('status')
  .description("an import's progress: items done and to do, not registered, requests spent, time left")
  .argument('<businessId>')
  .argument('<importId>')
  .act(status);

program
  .command('retry')
  .description("send again the items that needed a fix, now fixed in the dashboard; each one's outcome now")
  .argument('<businessId>')
  .argument('<importId>')
  .act(retry);

program
  .command('report')
  .description("an ended import's report: one row per line of the file, with its outcome")
  .argument('<businessId>')
  .argument('<importId>')
  .option('--out <prefix>', 'the report files <prefix>.csv and <prefix>.json (default catalogue-<importId>)')
  .act(report);

runClientProgram(program);

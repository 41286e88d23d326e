// Read-only: it creates and registers nothing, so it is safe against production keys.
import { readFile } from 'node:fs/promises';
import { checkCodes, readServiceCodes } from '../catalogue/codes.js';
import { formatOf, readCatalogue, type CatalogueProblem } from '../catalogue/rows.js';
import type { ComplianceClient } from '../compliance/client.js';
import { createProgram, EXIT_USAGE, runProgram } from './command.js';
import { BAD_INPUT_EXIT, SERVICES_ENVIRONMENT, helpSections } from './help.js';
import { namesTenantsFile, openReadOnlyTenants, openSingleKeyClients, readOnlyLogger } from './read-only.js';

/** Problems printed before the count of the rest: a file with a wrong column has one per row. */
const PROBLEMS_SHOWN = 200;

function said(problem: CatalogueProblem, json: boolean): string {
  if (problem.column === '(file)') return `the file ${problem.reason}`;
  return `${json ? 'item' : 'line'} ${problem.line}: ${problem.column} ${problem.reason}`;
}

/** A compliance client for the business: the single key's, or the tenants entry's that serves it. */
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

async function check([businessId, file]: string[]): Promise<number> {
  const format = formatOf(file!);
  if (businessId!.trim() === '' || format === undefined) {
    console.error(
      businessId!.trim() === '' ? 'error: businessId must not be empty' : 'error: the file must be .csv or .json',
    );
    return EXIT_USAGE;
  }
  let text: string;
  try {
    text = await readFile(file!, 'utf8');
  } catch (err) {
    console.error(`error: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return EXIT_USAGE;
  }
  const read = readCatalogue(text, format);
  const codes = read.records.length > 0 ? await withComplianceClient(businessId!, readServiceCodes) : undefined;
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
  return problems.length === 0 ? 0 : 1;
}

const program = createProgram(
  'npm run catalogue --',
  "Checks a merchant's catalogue file (CSV with a header row, or JSON) before it is imported: every row's fields, " +
    "and its codes against the service's own code lists and item classifications (two read requests).",
).addHelpText(
  'after',
  helpSections({
    environment: [
      ['TENANTS_FILE', "a tenants file: the codes are read with the key of the business's application"],
      ['TENANTS_DIR', 'or a directory of them (every *.json); not both'],
      ...SERVICES_ENVIRONMENT,
    ],
    output: "one line per problem (`line 4: unitCode is not a code of the service's quantityUnit list`), then a count",
    exitCodes: [[0, 'nothing wrong found'], [1, 'problems found (each named); nothing was sent'], BAD_INPUT_EXIT],
  }),
);

program
  .command('check')
  .description('name every problem of the file by line (CSV) or item (JSON) and column, all at once')
  .argument('<businessId>')
  .argument('<file>', 'a .csv or .json file')
  .act(check);

runProgram(program);

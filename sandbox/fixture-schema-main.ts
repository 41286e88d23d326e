/**
 * Writes docs/sandbox-fixture.schema.json, the JSON Schema of a sandbox fixture file, from the zod schema
 * and its `.describe()` texts. Run `npx tsx sandbox/fixture-schema-main.ts` after changing the fixture schema;
 * `--check` fails when the committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createProgram, parseAndRun } from '../src/cli/command.js';
import { FIXTURE_JSON_SCHEMA_PATH as target, renderFixtureJsonSchema } from './fixture-json-schema.js';

async function main({ check }: { check?: boolean }): Promise<number> {
  const text = renderFixtureJsonSchema();
  if (!check) {
    await writeFile(target, text);
    console.log(`wrote ${target}`);
    return 0;
  }
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== text) {
    console.error(`${target} is stale; run npx tsx sandbox/fixture-schema-main.ts`);
    return 1;
  }
  console.log(`${target} is up to date`);
  return 0;
}

const program = createProgram(
  'npm run fixture:schema --',
  'Writes docs/sandbox-fixture.schema.json, the JSON Schema of a sandbox fixture file, from the zod schema.',
)
  .option('--check', 'write nothing; exit 1 when the committed file is stale')
  .act((_args, options) => main(options));

process.exitCode = await parseAndRun(program);

/**
 * Writes docs/sandbox-fixture.schema.json, the JSON Schema of a sandbox fixture file, from the zod schema
 * and its `.describe()` texts. Run `npx tsx sandbox/fixture-schema-main.ts` after changing the fixture schema;
 * `--check` fails when the committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createProgram, parseAndRun } from '../src/cli/command.js';
import { SandboxFixtureSchema } from './fixture.js';

const target = fileURLToPath(new URL('../docs/sandbox-fixture.schema.json', import.meta.url));

// The file describes what a user writes: the input side, where fields with defaults are optional.
const schema = z.toJSONSchema(SandboxFixtureSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
// The two parts default to the whole demo world; their descriptions say so, the file need not embed it.
const parts = (schema as { properties?: Record<string, { default?: unknown }> }).properties ?? {};
for (const part of ['compliance', 'accounting']) delete parts[part]?.default;
const text = `${JSON.stringify({ $id: 'https://example.invalid/etims-sandbox/fixture.schema.json', title: 'eTIMS sandbox fixture', ...schema }, null, 2)}\n`;

async function main({ check }: { check?: boolean }): Promise<number> {
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

/**
 * Writes docs/sandbox-fixture.schema.json, the JSON Schema of a sandbox fixture file, from the zod schema
 * and its `.describe()` texts. Run `npx tsx sandbox/fixture-schema-main.ts` after changing the fixture schema;
 * `--check` fails when the committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SandboxFixtureSchema } from './fixture.js';

const target = fileURLToPath(new URL('../docs/sandbox-fixture.schema.json', import.meta.url));

// The file describes what a user writes: the input side, where fields with defaults are optional.
const schema = z.toJSONSchema(SandboxFixtureSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
// The two parts default to the whole demo world; their descriptions say so, the file need not embed it.
const parts = (schema as { properties?: Record<string, { default?: unknown }> }).properties ?? {};
for (const part of ['compliance', 'accounting']) delete parts[part]?.default;
const text = `${JSON.stringify({ $id: 'https://example.invalid/etims-sandbox/fixture.schema.json', title: 'eTIMS sandbox fixture', ...schema }, null, 2)}\n`;

if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== text) {
    console.error(`${target} is stale; run npx tsx sandbox/fixture-schema-main.ts`);
    process.exit(1);
  }
  console.log(`${target} is up to date`);
} else {
  await writeFile(target, text);
  console.log(`wrote ${target}`);
}

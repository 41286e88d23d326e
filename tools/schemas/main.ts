/**
 * Writes docs/schemas/*.schema.json, the JSON Schema of every input a sale and a refund accept, from the zod schemas in
 * src/contracts/sale-input.ts. Run it after changing those schemas; `--check` fails when a checked-in file is stale
 * (test/contracts/json-schemas.test.ts checks the same on every test run).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createProgram, parseAndRun } from '../../src/cli/command.js';
import { renderSchemas } from './schemas.js';

export const SCHEMAS_DIR = fileURLToPath(new URL('../../docs/schemas/', import.meta.url));

async function main({ check }: { check?: boolean }): Promise<number> {
  const stale: string[] = [];
  if (!check) await mkdir(SCHEMAS_DIR, { recursive: true });
  for (const { file, text } of renderSchemas()) {
    const target = `${SCHEMAS_DIR}${file}`;
    if (check) {
      if ((await readFile(target, 'utf8').catch(() => '')) !== text) stale.push(target);
      continue;
    }
    await writeFile(target, text);
    console.log(`wrote ${target}`);
  }
  if (stale.length > 0) {
    console.error(`stale (run npm run schemas): ${stale.join(', ')}`);
    return 1;
  }
  if (check) console.log(`${SCHEMAS_DIR} is up to date`);
  return 0;
}

const program = createProgram(
  'npm run schemas --',
  'Writes docs/schemas/, the JSON Schema of every input a sale and a refund accept, from its zod schemas.',
)
  .option('--check', 'write nothing; exit 1 when a checked-in file is stale')
  .act((_args, options) => main(options));

process.exitCode = await parseAndRun(program);

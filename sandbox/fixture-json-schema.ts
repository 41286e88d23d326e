/** The JSON Schema of a sandbox fixture file, rendered from the zod schema and its `.describe()` texts. */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SandboxFixtureSchema } from './fixture.js';

export const FIXTURE_JSON_SCHEMA_PATH = fileURLToPath(new URL('../docs/sandbox-fixture.schema.json', import.meta.url));

export function renderFixtureJsonSchema(): string {
  // The file describes what a user writes: the input side, where fields with defaults are optional.
  const schema = z.toJSONSchema(SandboxFixtureSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
  // The two parts default to the whole demo world; their descriptions say so, the file need not embed it.
  const parts = (schema as { properties?: Record<string, { default?: unknown }> }).properties ?? {};
  for (const part of ['compliance', 'accounting']) delete parts[part]?.default;
  const published = {
    $id: 'https://example.invalid/etims-sandbox/fixture.schema.json',
    title: 'eTIMS sandbox fixture',
  };
  return `${JSON.stringify({ ...published, ...schema }, null, 2)}\n`;
}

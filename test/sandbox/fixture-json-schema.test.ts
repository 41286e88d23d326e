/**
 * docs/sandbox-fixture.schema.json is what the generator renders from the fixture's zod schema now: a fixture field
 * that is not published fails here (run `npm run fixture:schema`).
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FIXTURE_JSON_SCHEMA_PATH, renderFixtureJsonSchema } from '../../sandbox/fixture-json-schema.js';

describe('the published JSON Schema of a sandbox fixture', () => {
  it('is what the generator writes now', async () => {
    expect(await readFile(FIXTURE_JSON_SCHEMA_PATH, 'utf8')).toBe(renderFixtureJsonSchema());
  });
});

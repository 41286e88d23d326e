import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { defaultAccountingFixture } from './accounting/default-fixture.js';
import { AccountingFixtureSchema } from './accounting/fixture.js';
import { ComplianceFixtureSchema } from './compliance/fixture-schema.js';
import { fieldPath } from './compliance/requests.js';
import { defaultComplianceFixture } from './default-fixture.js';
import { FaultRuleSchema } from './shared/faults.js';
import { OutageListSchema } from './shared/outage-schema.js';

/**
 * Everything a sandbox starts from: the compliance world, the accounting world, and the fault rules and
 * outages active from the start. Each part defaults to the demo world, so a fixture file can hold only the
 * parts it changes.
 */
export const SandboxFixtureSchema = z
  .object({
    compliance: ComplianceFixtureSchema.default(defaultComplianceFixture).describe(
      'The compliance service: applications, keys, businesses, the simulated tax authority, callbacks (default: the demo world)',
    ),
    accounting: AccountingFixtureSchema.default(defaultAccountingFixture).describe(
      'The accounting service: applications, companies, bill payments, sync batches (default: the demo world)',
    ),
    faults: z
      .array(FaultRuleSchema)
      .default([])
      .describe('Fault rules active from the start; more can be added at run time through /__sandbox/faults'),
    outages: OutageListSchema.describe(
      'Outages of a service or of the tax authority, armed at start and again at every reset (relative times count ' +
        'from then); more can be added at run time through /__sandbox/outages',
    ),
  })
  .describe('A sandbox fixture');

export type SandboxFixture = z.output<typeof SandboxFixtureSchema>;
export type SandboxFixtureInput = z.input<typeof SandboxFixtureSchema>;

/** A fixture that is not valid; the message names the source and the first wrong field, never a key's value. */
export class FixtureError extends Error {
  override readonly name = 'FixtureError';

  constructor(
    readonly source: string,
    /** Path of the first wrong field, e.g. `compliance.businesses[0].branches[1].authorityBhfId`. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${source}: ${field}: ${reason}`);
  }
}

/** Validates a fixture given as data; throws FixtureError naming the first wrong field. */
export function parseFixture(input: unknown, source = 'sandbox fixture'): SandboxFixture {
  const parsed = SandboxFixtureSchema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new FixtureError(source, issue ? fieldPath(issue.path, '(root)') : '(root)', issue?.message ?? 'is invalid');
}

/** Reads and validates a JSON fixture file; throws FixtureError naming the file and the first wrong field. */
export async function loadFixture(path: string): Promise<SandboxFixture> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'read error';
    throw new FixtureError(`fixture ${path}`, '(file)', `cannot be read (${code})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FixtureError(
      `fixture ${path}`,
      '(file)',
      `is not valid JSON (${err instanceof Error ? err.message : 'parse error'})`,
    );
  }
  return parseFixture(json, `fixture ${path}`);
}

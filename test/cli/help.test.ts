import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

/**
 * The operator CLIs, by npm script; `temporal`: it talks to Temporal (and so reads payload keys); `services`: it
 * calls the compliance and accounting services.
 */
const CLIS = [
  { script: 'sales', temporal: true, services: false },
  { script: 'purchases', temporal: true, services: false },
  { script: 'sync-batch', temporal: true, services: false },
  { script: 'reconcile', temporal: false, services: true },
  { script: 'check', temporal: false, services: true },
  { script: 'catalogue', temporal: true, services: true },
  { script: 'tenants', temporal: false, services: true },
] as const;

const helps = new Map<string, string>();

beforeAll(async () => {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  for (const { script } of CLIS) {
    const { stdout } = await run(tsx, [`src/cli/${script}.ts`, '--help'], { cwd: root, env, timeout: 60_000 });
    helps.set(script, stdout);
  }
}, 120_000);

/** The lines of a section, from its heading to the next blank line. */
function section(help: string, heading: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${heading}:`);
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

describe('the operator CLIs speak one help style', () => {
  it.each(CLIS)(
    'npm run $script -- --help: usage by npm script, then Environment, Output and Exit codes',
    ({ script, temporal, services }) => {
      const help = helps.get(script)!;
      expect(help.startsWith(`Usage: npm run ${script} -- `)).toBe(true);
      expect(help).not.toContain('npx tsx');
      const headings = help.split('\n').filter((line) => /^[A-Z][a-z ]+:$/.test(line));
      expect(headings.slice(-3)).toEqual(['Environment:', 'Output:', 'Exit codes:']);

      const environment = section(help, 'Environment');
      for (const line of environment) expect(line).toMatch(/^ {2}[A-Z][A-Z0-9_*, ]+ {2,}\S/);
      const names = environment.map((line) => line.trim().split(/ {2,}/)[0]);
      if (temporal) {
        expect(names).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'PAYLOAD_KEYS, PAYLOAD_KEYS_FILE']));
      } else {
        expect(names.join()).not.toContain('PAYLOAD_KEYS');
      }
      if (services)
        expect(names).toEqual(expect.arrayContaining(['COMPLIANCE_BASE_URL, COMPLIANCE_API_KEY', 'SANDBOX']));

      const codes = section(help, 'Exit codes');
      for (const line of codes) expect(line).toMatch(/^ {2}\d {2}\S/);
      expect(codes.map((line) => line.trim()[0])).toEqual(expect.arrayContaining(['0', '1', '2']));
    },
  );

  it('says the same about what they share: bad input, and the Temporal settings', () => {
    const badInput = CLIS.map(({ script }) =>
      section(helps.get(script)!, 'Exit codes').find((line) => line.startsWith('  2 ')),
    );
    expect(badInput[0]).toBeDefined();
    expect(new Set(badInput).size).toBe(1);
    const temporal = CLIS.filter((c) => c.temporal).map(({ script }) =>
      section(helps.get(script)!, 'Environment')
        .filter((line) => /^ {2}(TEMPORAL_|PAYLOAD_)/.test(line))
        // The name column is as wide as the section's widest name.
        .map((line) => line.trim().replace(/ {2,}/, '  '))
        .join('\n'),
    );
    expect(new Set(temporal).size).toBe(1);
  });
});

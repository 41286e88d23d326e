import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../../src/cli/reconcile.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

// The command runs in a directory of its own, so a file it should not write would show there.
let cwd: string;

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'reconcile-csv-'));
});

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

async function reconcile(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SANDBOX: 'embedded' };
  try {
    const { stdout, stderr } = await run(tsx, [script, ...args], { cwd, env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm run reconcile -- --csv -', () => {
  it('writes the CSV alone to standard output, and no file named "-"', async () => {
    const result = await reconcile([
      DEMO.businesses.nairobi,
      '--as-of',
      '2025-07-31',
      '--period-days',
      '365',
      '--csv',
      '-',
    ]);

    expect(result.code).toBe(0);
    const rows = result.stdout.trimEnd().split('\r\n');
    expect(rows[0]).toBe(
      'kind,id,category,counterpart_ids,reference,supplier,date,amount,currency,paid,difference,age_days,review',
    );
    // A year to 2025-07-31 holds every invoice and payment of the demo world.
    expect(rows).toHaveLength(1 + 45 + 25);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('refuses --csv - with --json, which would share standard output: exit 2', async () => {
    const result = await reconcile([DEMO.businesses.nairobi, '--json', '--csv', '-']);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--csv - and --json both write to standard output');
    expect(result.stdout).toBe('');
  });
});

import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTING_API_KEY } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { runCli } from '../helpers/run-cli.js';

// The sandbox started here plays the real service: the codes are the ones its lookups answer.
let services: Sandbox;
let dir: string;

beforeAll(async () => {
  services = await startSandbox();
  dir = await mkdtemp(join(tmpdir(), 'catalogue-'));
});

afterAll(async () => {
  await services.close();
  await rm(dir, { recursive: true, force: true });
});

function catalogue(...args: string[]) {
  return runCli('catalogue', args, {
    env: {
      LOG_LEVEL: 'silent',
      COMPLIANCE_BASE_URL: services.complianceUrl,
      COMPLIANCE_API_KEY: DEMO.keys.nairobi,
      // The worker's environment names both services; this command asks only the compliance one.
      ACCOUNTING_BASE_URL: services.accountingUrl,
      ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
    },
  });
}

async function file(name: string, text: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('npm run catalogue -- check', () => {
  it("passes a good file with the service's codes, reading two lookups and creating nothing", async () => {
    const path = await file(
      'good.csv',
      'externalId,name,taxTypeCode,unitPrice,unitCode,productTypeCode,classificationCode\n' +
        'SKU-1,Sugar 2kg,B,250,U,2,5016150100\nSKU-2,Tea leaves 500g,B,320,U,,\n',
    );
    const before = services.stats.snapshot().total;
    const result = await catalogue('check', DEMO.businesses.nairobi, path);
    expect(result.stdout).toContain("2 item(s) ready: nothing wrong found against the service's code lists");
    expect(result.code).toBe(0);
    expect(services.stats.snapshot().total - before).toBe(2);
  });

  it('names every problem by line and column and exits 1, sending nothing that writes', async () => {
    const path = await file(
      'bad.csv',
      'externalId,name,taxTypeCode,unitPrice,unitCode\nSKU-1,Sugar,B,250,U\nSKU-2,,B,-3,XX\nSKU-1,Salt,Z,10,U\n',
    );
    const result = await catalogue('check', DEMO.businesses.nairobi, path);
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual([
      'line 3: name is required',
      'line 3: unitPrice must be 0 or more',
      "line 3: unitCode is not a code of the service's quantityUnit list",
      'line 4: externalId is already on line 2',
      "line 4: taxTypeCode is not a code of the service's taxType list",
      '5 problem(s) on 2 line(s): nothing was sent',
    ]);
    const items = await services.inspector.itemRecords(DEMO.businesses.nairobi);
    expect(items.some((item) => item.externalId === 'SKU-2')).toBe(false);
  });

  it('refuses a name longer than the service takes, by line and column, and sends no creation', async () => {
    const path = await file(
      'long-name.csv',
      `externalId,name,taxTypeCode,unitPrice\nSKU-LONG-1,Sugar,B,250\nSKU-LONG-2,${'n'.repeat(299)},B,10\n`,
    );
    const result = await catalogue('check', DEMO.businesses.nairobi, path);
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual([
      'line 3: name must be at most 200 characters (it has 299)',
      '1 problem(s) on 1 line(s): nothing was sent',
    ]);
    const items = await services.inspector.itemRecords(DEMO.businesses.nairobi);
    expect(items.some((item) => item.externalId.startsWith('SKU-LONG-'))).toBe(false);
  });

  it('names the lines of a file saved in a legacy code page instead of sending their names garbled', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('externalId,name,taxTypeCode,unitPrice\nSKU-1,Sugar,B,250\nSKU-2,Caf'),
      Buffer.from([0xe9]),
      Buffer.from(' au lait,B,90\nSKU-3,Chai,B,80,extra\n'),
    ]);
    const result = await catalogue('check', DEMO.businesses.nairobi, await file('latin1.csv', latin1));
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split('\n')).toEqual([
      'line 3: (row) is not UTF-8: save the file as UTF-8 (in Excel: "CSV UTF-8")',
      'line 4: (row) has 5 cells where the header has 4: a cell holding a comma needs quotes',
      '2 problem(s) on 2 line(s): nothing was sent',
    ]);
  });

  it('refuses a file it cannot read, of another kind or far too large, with exit 2', async () => {
    const missing = await catalogue('check', DEMO.businesses.nairobi, join(dir, 'missing.csv'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
    const other = await catalogue('check', DEMO.businesses.nairobi, await file('items.xlsx', 'x'));
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('must be .csv or .json');
    // Sparse: the size is what is refused, before a byte is read.
    const huge = await file('huge.csv', 'externalId\n');
    await truncate(huge, 65 * 1024 * 1024);
    const tooLarge = await catalogue('check', DEMO.businesses.nairobi, huge);
    expect(tooLarge.code).toBe(2);
    expect(tooLarge.stderr).toContain('is 65 MB: a catalogue file is at most 64 MB');
  });

  it('refuses a blank business or import id, exit 2, before asking anything', async () => {
    for (const [args, said] of [
      [['status', '', 'imp-1'], 'businessId must not be empty'],
      [['retry', DEMO.businesses.nairobi, ' '], 'importId must not be empty'],
      [['report', DEMO.businesses.nairobi, ''], 'importId must not be empty'],
    ] as const) {
      const result = await catalogue(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(said);
    }
  });

  it('says so, exit 2, for an import that is not there', async () => {
    const result = await catalogue('status', DEMO.businesses.nairobi, 'no-such-import');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `no such catalogue import (catalogue-import:${DEMO.businesses.nairobi}:no-such-import)`,
    );
  });
});

/**
 * A tenants file's `stockIn` list: which businesses take their supplier invoices in as stock, and from when. Refusals
 * name the file and the entry, and never repeat what could be a key.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { loadTenantsConfig } from '../../src/tenants/load.js';

const root = mkdtempSync(join(tmpdir(), 'tenants-stock-in-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
function directory(files: Record<string, unknown>): string {
  const dir = join(root, `d${++dirs}`);
  mkdirSync(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(content));
  return dir;
}

const inlineKey = 'cmp_sk_test_' + 'InlineMerchantA0001';
const env = { COMPLIANCE_BASE_URL: 'https://compliance.example.com' };
const merchant = { application: 'merchant-a', apiKey: { value: inlineKey }, businesses: ['biz_a1', 'biz_a2'] };

function load(content: unknown) {
  return loadTenantsConfig({ ...env, TENANTS_FILE: join(directory({ 'tenants.json': content }), 'tenants.json') });
}

function refusalOf(content: unknown): string {
  try {
    load(content);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain(inlineKey.slice(-12));
    return message;
  }
  throw new Error('expected a ConfigError');
}

describe("a tenants file's stockIn list", () => {
  it('reads each business, its start date and all-or-nothing (default false)', () => {
    const config = load({
      compliance: [merchant],
      stockIn: [
        { business: 'biz_a1', from: '2025-01-01' },
        { business: 'biz_a2', from: '2024-02-29', allOrNothing: true },
      ],
    });
    expect(config.stockIn).toEqual([
      {
        businessId: 'biz_a1',
        settings: { from: '2025-01-01', allOrNothing: false },
        source: 'tenants.json: stockIn[0] (biz_a1)',
      },
      {
        businessId: 'biz_a2',
        settings: { from: '2024-02-29', allOrNothing: true },
        source: 'tenants.json: stockIn[1] (biz_a2)',
      },
    ]);
  });

  it('is optional: without it (or null) no business is named', () => {
    expect(load({ compliance: [merchant] }).stockIn).toEqual([]);
    expect(load({ compliance: [merchant], stockIn: null }).stockIn).toEqual([]);
  });

  it('joins the lists of a directory’s files, and refuses a business named twice, naming both entries', () => {
    const joined = loadTenantsConfig({
      ...env,
      TENANTS_DIR: directory({
        'a.json': { compliance: [merchant], stockIn: [{ business: 'biz_a1', from: '2025-01-01' }] },
        'b.json': { stockIn: [{ business: 'biz_b', from: '2025-02-01' }] },
      }),
    });
    expect(joined.stockIn?.map((entry) => entry.source)).toEqual([
      'a.json: stockIn[0] (biz_a1)',
      'b.json: stockIn[0] (biz_b)',
    ]);
    const twice = directory({
      'a.json': { compliance: [merchant], stockIn: [{ business: 'biz_a1', from: '2025-01-01' }] },
      'b.json': { stockIn: [{ business: 'biz_a1', from: '2025-02-01' }] },
    });
    expect(() => loadTenantsConfig({ ...env, TENANTS_DIR: twice })).toThrow(
      'b.json: stockIn[0] (biz_a1): business biz_a1 is already named by a.json: stockIn[0] (biz_a1)',
    );
  });

  it('refuses an entry it cannot use, naming the entry and the field', () => {
    const entry = (fields: Record<string, unknown>) => ({ compliance: [merchant], stockIn: [fields] });
    expect(refusalOf({ stockIn: {} })).toBe('tenants.json: stockIn: must be a list');
    expect(refusalOf({ stockIn: ['biz_a1'] })).toBe('tenants.json: stockIn[0]: must be an object, one entry');
    expect(refusalOf(entry({ from: '2025-01-01' }))).toBe('tenants.json: stockIn[0]: business: is required');
    expect(refusalOf(entry({ business: 'biz_a1' }))).toBe('tenants.json: stockIn[0] (biz_a1): from: is required');
    expect(refusalOf(entry({ business: 'biz_a1', from: '1 Jan 2025' }))).toBe(
      'tenants.json: stockIn[0] (biz_a1): from: must be a date in the form YYYY-MM-DD',
    );
    expect(refusalOf(entry({ business: 'biz_a1', from: '2025-02-29' }))).toBe(
      'tenants.json: stockIn[0] (biz_a1): from: must be a date the calendar has',
    );
    expect(refusalOf(entry({ business: 'biz_a1', from: '2025-01-01', allOrNothing: 'yes' }))).toBe(
      'tenants.json: stockIn[0] (biz_a1): allOrNothing: must be true or false',
    );
    expect(refusalOf(entry({ business: 'biz_a1', from: '2025-01-01', allOrNothig: true }))).toBe(
      'tenants.json: stockIn[0] (biz_a1): unknown field "allOrNothig"',
    );
    // A key pasted as the business is neither shown as the entry's label nor repeated.
    expect(refusalOf(entry({ business: inlineKey, from: '2025-01-01' }))).toBe(
      'tenants.json: stockIn[0]: business: must be a business id (letters, digits, _ . : -), not a key',
    );
  });
});

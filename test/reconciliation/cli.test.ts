import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  OTHER_COMPANY_ID,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

// Plays the "real" services: the command must use exactly what the environment says.
let services: Sandbox;
let dir: string;

beforeAll(async () => {
  services = await startSandbox();
  dir = await mkdtemp(join(tmpdir(), 'reconcile-'));
});

afterAll(async () => {
  await services.close();
  await rm(dir, { recursive: true, force: true });
});

async function reconcile(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
  try {
    const { stdout, stderr } = await run(tsx, ['src/cli/reconcile.ts', ...args], {
      cwd: root,
      env: { ...base, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const configured = () => ({
  COMPLIANCE_BASE_URL: services.complianceUrl,
  COMPLIANCE_API_KEY: DEMO.keys.orgWide,
  ACCOUNTING_BASE_URL: services.accountingUrl,
  ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
  ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
  LOG_LEVEL: 'debug',
});

describe('npm run reconcile', () => {
  it('prints exactly one JSON object with the categories, and writes the CSV, on the embedded sandbox', async () => {
    const csv = join(dir, 'demo.csv');
    const result = await reconcile([DEMO.businesses.nairobi, '--json', '--as-of', '2025-07-31', '--csv', csv], {
      SANDBOX: 'embedded',
      LOG_LEVEL: 'debug',
    });
    expect(result.code).toBe(0);
    // The logs went somewhere, and not to stdout (JSON.parse below takes nothing but the one object).
    expect(result.stderr).toContain('embedded sandbox started');
    const json = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(
      expect.arrayContaining(['matched', 'suggested', 'amountMismatches', 'unpaidPurchases', 'unmatchedPayments']),
    );
    // The default period: 90 days to --as-of; every list in full, unlike the workflow's result.
    expect(json).toMatchObject({
      businessId: DEMO.businesses.nairobi,
      companyId: 'cmp_demo_nairobi',
      asOf: '2025-07-31',
      period: { from: '2025-05-03', to: '2025-07-31', days: 90 },
      outsidePeriod: { purchases: 0, billPayments: 13 },
      counts: {
        purchases: 40,
        billPayments: 12,
        matched: 3,
        suggested: 1,
        amountMismatches: 1,
        unpaidPurchases: 29,
        unmatchedPayments: 6,
        rejectedPurchases: 6,
        ties: 1,
      },
    });
    expect(json).not.toHaveProperty('truncated');
    expect(json.unpaidPurchases).toHaveLength(29);
    expect((json.matched as unknown[])[0]).toMatchObject({
      purchaseId: 'pur_nbo_001',
      billPaymentIds: ['bp_nbo_rec_01'],
    });
    const rows = (await readFile(csv, 'utf8')).trimEnd().split('\r\n');
    expect(rows[0]).toBe(
      'kind,id,category,counterpart_ids,reference,supplier,date,amount,currency,paid,difference,age_days,review',
    );
    // One row per invoice and payment of the result: not the 13 payments read but outside the period.
    expect(rows).toHaveLength(1 + 40 + 12);
    expect(rows).toContain(
      'purchase,pur_nbo_006,matched,bp_nbo_rec_03 bp_nbo_rec_04,INV-2405,Kibo Wholesalers Ltd,2025-06-24,34360,,34360,0,,',
    );
  });

  it('uses the configured services and RECONCILE_LINKS, logging only to stderr and never a secret', async () => {
    const before = services.stats.snapshot().total;
    const result = await reconcile([DEMO.businesses.nairobi, '--json', '--as-of', '2025-07-31'], {
      ...configured(),
      RECONCILE_LINKS: `${DEMO.businesses.mombasa}=cmp_demo_mombasa, ${DEMO.businesses.nairobi}=cmp_demo_nairobi`,
      // The schedule's period, unless --period-days says otherwise: 120 days reach every demo invoice.
      RECONCILE_PERIOD_DAYS: '120',
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      companyId: 'cmp_demo_nairobi',
      period: { from: '2025-04-03', days: 120 },
      counts: { purchases: 45, matched: 3 },
    });
    expect(services.stats.snapshot().total - before).toBe(4);
    expect(result.stdout + result.stderr).not.toContain(DEMO_ACCOUNTING_CLIENT_SECRET);
    expect(result.stdout + result.stderr).not.toContain(DEMO.keys.orgWide);
  });

  it('prints a table by category', async () => {
    const result = await reconcile(
      [DEMO.businesses.nairobi, '--company', 'cmp_demo_nairobi', '--as-of', '2025-07-31'],
      configured(),
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '40 invoices, 12 bill payments: 3 matched, 1 suggested, 1 amount mismatch, 29 unpaid, 6 rejected, ' +
        '6 payments without an invoice, 1 tie to review',
    );
    expect(result.stdout).toContain(
      'Invoices dated 2025-05-03 to 2025-07-31 (90 days); bill payments dated from 2025-04-03; read but outside it: ' +
        '0 invoices, 13 bill payments',
    );
    expect(result.stdout).toMatch(
      /Amount mismatches.*\(1\)\n.*\n.*\n {2}pur_nbo_007 +INV-2406 +Rift Valley Millers +2025-06-21 +16200\.00 +16020\.00 +-180\.00/,
    );
  });

  it.each([
    [
      'an unknown business',
      ['biz_does_not_exist', '--company', 'cmp_demo_nairobi'],
      1,
      'business biz_does_not_exist is not one the compliance API key may act for',
    ],
    [
      'a company the key cannot see',
      [DEMO.businesses.nairobi, '--company', OTHER_COMPANY_ID],
      1,
      `accounting company ${OTHER_COMPANY_ID} is not visible to the accounting API key`,
    ],
    [
      'a business without a company',
      [DEMO.businesses.mombasa],
      2,
      `no accounting company is linked to business ${DEMO.businesses.mombasa}`,
    ],
    ['a bad option', [DEMO.businesses.nairobi, '--tolerance=-1'], 2, '--tolerance must be a number of at least 0'],
    [
      'a period of no days',
      [DEMO.businesses.nairobi, '--period-days', '0'],
      2,
      '--period-days must be a whole number of days from 1 to 3660',
    ],
  ])('fails clearly for %s', async (_name, args, code, message) => {
    const result = await reconcile(args, configured());
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});

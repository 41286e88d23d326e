/**
 * `npm run reconcile` over a tenants file, as a process against the sandbox over real HTTP: the business is read
 * through the compliance application serving it and the company through its link's accounting application (or the
 * one that sees it), the output says which, and a business or company the tenants cannot place is refused naming
 * what the file says, never a key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_RECONCILIATION_LINK, OTHER_COMPANY_ID } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { runReadOnlyCli, sandboxSecrets, tenantsFiles, twoMerchants } from './tenants-files.js';

let sandbox: Sandbox;
const files = tenantsFiles(() => sandbox);
let path: string;
const reconcile = (args: string[], env: Record<string, string> = { TENANTS_FILE: path }) =>
  runReadOnlyCli('reconcile', args, env, sandboxSecrets(sandbox));

beforeAll(async () => {
  sandbox = await startSandbox();
  path = files.write(twoMerchants(sandbox));
});

afterAll(async () => {
  await sandbox?.close();
  files.remove();
});

interface Report {
  businessId: string;
  companyId: string;
  applications?: { compliance: string; accounting: string };
  matched: unknown[];
}

describe('npm run reconcile with a tenants file', () => {
  it("reads the business through the application serving it and its company through its link's books", async () => {
    const result = await reconcile([DEMO.businesses.nairobi, '--as-of', '2025-07-31', '--json']);

    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).toMatchObject({
      businessId: DEMO.businesses.nairobi,
      companyId: DEMO_RECONCILIATION_LINK.companyId,
      applications: { compliance: 'retail', accounting: 'books' },
    });
    expect(report.matched.length).toBeGreaterThan(0);

    const table = await reconcile([DEMO.businesses.nairobi, '--as-of', '2025-07-31']);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('through compliance application retail and accounting application books');
  });

  it('gives the same CSV as the single-key run of the same business', async () => {
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
    // A year to 2025-07-31 holds every invoice and payment of the demo world.
    expect(result.stdout.trimEnd().split('\r\n')).toHaveLength(1 + 45 + 25);
  });

  it('reads an unlinked business with --company through the one accounting application that sees it', async () => {
    const result = await reconcile([DEMO.businesses.kisumu, '--company', OTHER_COMPANY_ID, '--json']);

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      businessId: DEMO.businesses.kisumu,
      companyId: OTHER_COMPANY_ID,
      applications: { compliance: 'other', accounting: 'other-books' },
    });
  });

  it('refuses what the tenants cannot place, saying what they serve: exit 2', async () => {
    const unlinked = await reconcile([DEMO.businesses.kisumu]);
    expect(unlinked.code).toBe(2);
    expect(unlinked.stderr).toContain(
      `no accounting company is linked to business ${DEMO.businesses.kisumu} in TENANTS_FILE ${path}: pass --company or add a link`,
    );

    const unserved = await reconcile(['biz_nobody']);
    expect(unserved.code).toBe(2);
    expect(unserved.stderr).toContain('business biz_nobody is served by no compliance application of TENANTS_FILE');
    expect(unserved.stderr).toContain(
      `retail (${DEMO.businesses.nairobi}, ${DEMO.businesses.mombasa}); other (${DEMO.businesses.kisumu})`,
    );

    const unseen = await reconcile([DEMO.businesses.mombasa, '--company', 'cmp_nobody']);
    expect(unseen.code).toBe(2);
    expect(unseen.stderr).toContain(
      `company cmp_nobody (for business ${DEMO.businesses.mombasa}) is seen by no accounting application of TENANTS_FILE`,
    );
  });
});

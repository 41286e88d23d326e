/**
 * `npm run check` over a tenants file, as a process against the sandbox over real HTTP: every application is
 * checked with its own key (a row per application and operation), a failing check names its application, a refused
 * key stops the check naming its tenant entry, and no key or secret is printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { runReadOnlyCli, sandboxSecrets, tenantsFiles, twoMerchants } from './tenants-files.js';

let sandbox: Sandbox;
const files = tenantsFiles(() => sandbox);
const check = (env: Record<string, string>) => runReadOnlyCli('check', [], env, sandboxSecrets(sandbox));

beforeAll(async () => {
  sandbox = await startSandbox();
});

afterAll(async () => {
  await sandbox?.close();
  files.remove();
});

/** The table's row of one application and operation. */
function row(stdout: string, application: string, operation: string): string | undefined {
  return stdout.split('\n').find((line) => new RegExp(`│ '${application}'\\s+│ '${operation}'`).test(line));
}

describe('npm run check with a tenants file', () => {
  it('checks every application with its own key, one row per application and operation', async () => {
    const before = sandbox.stats.snapshot();
    const path = files.write(twoMerchants(sandbox));
    const result = await check({ TENANTS_FILE: path });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`tenants: TENANTS_FILE ${path}\n`);
    expect(result.stdout).toContain('compliance retail: 2 business(es) served (service application app_demo_retail)');
    expect(result.stdout).toContain('compliance other: 1 business(es) served (service application app_demo_other)');
    expect(result.stdout).toContain('all checks passed (2 compliance and 2 accounting application(s))');
    // Each merchant's items and purchases are asked with its own key, for a business it serves.
    expect(row(result.stdout, 'retail', 'items')).toContain(`${DEMO.businesses.nairobi}: `);
    expect(row(result.stdout, 'other', 'items')).toContain(`${DEMO.businesses.kisumu}: 1 item(s), 1 registered`);
    expect(row(result.stdout, 'other', 'identity')).toContain('application app_demo_other');
    expect(row(result.stdout, 'other-books', 'companies')).toContain('1 compan(ies)');
    for (const application of ['retail', 'other']) {
      for (const operation of ['identity', 'businesses', 'items', 'purchases', 'code lists'])
        expect(row(result.stdout, application, operation), `${application} ${operation}`).toMatch(/'ok'/);
    }
    // Both applications' windows were drawn on: each key made its own requests.
    const after = sandbox.stats.snapshot();
    expect(after.total).toBeGreaterThan(before.total);
  });

  it('names the application and operations that failed: exit 1', async () => {
    // A key with sales:read only, serving Nairobi (the organisation-wide key is kept to Mombasa).
    const path = files.write((urls) => ({
      compliance: [
        {
          application: 'retail',
          apiKey: { value: DEMO.keys.orgWide },
          baseUrl: urls.compliance,
          businesses: [DEMO.businesses.mombasa],
        },
        { application: 'till', apiKey: { value: DEMO.keys.readOnly }, baseUrl: urls.compliance },
      ],
    }));
    const result = await check({ TENANTS_FILE: path });

    expect(result.code).toBe(1);
    expect(row(result.stdout, 'till', 'items')).toMatch(/'FAILED'.*403 forbidden/);
    expect(row(result.stdout, 'retail', 'items')).toMatch(/'ok'/);
    expect(result.stdout).toMatch(/check\(s\) failed: compliance till \(items, purchases/);
  });

  it('stops on a refused key, naming its tenant entry and not the key: exit 2', async () => {
    const path = files.write((urls) => ({
      compliance: [
        { application: 'retail', apiKey: { value: DEMO.keys.orgWide }, baseUrl: urls.compliance },
        {
          application: 'gone',
          apiKey: { value: DEMO.keys.revoked },
          baseUrl: urls.compliance,
          businesses: [DEMO.businesses.kisumu],
        },
      ],
    }));
    const result = await check({ TENANTS_FILE: path });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('configuration error: ');
    expect(result.stderr).toContain('compliance[1] (gone)');
    expect(result.stdout).toBe('');
  });

  it('refuses SANDBOX=embedded beside a tenants file: exit 2', async () => {
    const result = await check({ TENANTS_FILE: files.write(twoMerchants(sandbox)), SANDBOX: 'embedded' });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SANDBOX=embedded and TENANTS_FILE are both set');
  });
});

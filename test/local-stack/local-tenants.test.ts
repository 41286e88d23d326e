/**
 * The local stack's two merchants as its tenants file names them: resolved against the sandbox as a worker resolves
 * a tenants file, each is its own compliance application serving its own businesses, with its own books, whose
 * webhook secrets differ; the Nairobi business alone takes stock in; the file is readable by its owner only.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTenantsConfig } from '../../src/tenants/load.js';
import { resolveTenantDirectory, type TenantDirectory } from '../../src/tenants/directory.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { LOCAL_MERCHANTS, localSandboxFixture, writeLocalTenantsFile } from '../../tools/local-stack/local-tenants.js';

let sandbox: Sandbox;
let dir: string;
let path: string;
let directory: TenantDirectory;

beforeAll(async () => {
  sandbox = await startSandbox({ fixture: localSandboxFixture() });
  dir = mkdtempSync(join(tmpdir(), 'local-tenants-'));
  path = writeLocalTenantsFile(sandbox, dir);
  directory = await resolveTenantDirectory(loadTenantsConfig({ TENANTS_FILE: path }));
});

afterAll(async () => {
  await directory?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the local merchants', () => {
  it('are two compliance applications on two keys, each serving its own businesses', () => {
    const applications = directory.applications().map((a) => ({
      application: a.application,
      service: a.serviceApplicationId,
      businesses: a.businesses,
      rate: a.requestsPerMinute,
    }));
    expect(applications).toEqual([
      {
        application: 'demo-retail',
        service: DEMO.applications.retail,
        businesses: [DEMO.businesses.nairobi, DEMO.businesses.mombasa],
        rate: 120,
      },
      {
        application: 'other-integrator',
        service: DEMO.applications.other,
        businesses: [DEMO.businesses.kisumu],
        rate: 60,
      },
    ]);
    expect(directory.applicationOf(DEMO.businesses.kisumu)).toBe(LOCAL_MERCHANTS.other.application);
  });

  it('each have their own books, linked to their business, signing webhooks with a secret of their own', () => {
    expect(directory.links().map((l) => [l.businessId, l.companyId, l.accounting, l.compliance])).toEqual([
      [DEMO.businesses.nairobi, 'cmp_demo_nairobi', 'demo-books', 'demo-retail'],
      [DEMO.businesses.kisumu, 'cmp_other_kisumu', 'other-books', 'other-integrator'],
    ]);
    const tenants = loadTenantsConfig({ TENANTS_FILE: path });
    const secrets = tenants.accounting.map((t) => t.service.webhookSecret);
    expect(secrets.every((s) => s?.startsWith('whsec_'))).toBe(true);
    expect(new Set(secrets).size).toBe(2);
  });

  it('switch stock-in on for the Nairobi business alone', () => {
    const tenants = loadTenantsConfig({ TENANTS_FILE: path });
    expect(tenants.stockIn?.map((s) => [s.businessId, s.settings])).toEqual([
      [DEMO.businesses.nairobi, { from: '2025-01-01', allOrNothing: false }],
    ]);
  });

  it('are written where only their owner can read them, and only once', () => {
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(() => writeLocalTenantsFile(sandbox, dir)).toThrow(/EEXIST/);
  });
});

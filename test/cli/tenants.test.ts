/**
 * `npm run tenants` as a process against the sandbox over real HTTP: the tenants of a file and their health (key
 * accepted, businesses served, budget in use), a refused key or an unreachable service reported in its row without
 * stopping the others, the exit codes, and no key or secret anywhere in what it prints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComplianceClient } from '../../src/compliance/client.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_ID,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  DEMO_COMPANY_IDS,
  DEMO_RECONCILIATION_LINK,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { runReadOnlyCli, tenantsFiles, type TenantsFiles } from './tenants-files.js';

const K = DEMO.keys;
const B = DEMO.businesses;
/** A well-formed key of a service that is not there. */
const unreachableKey = 'cmp_sk_test_' + 'NobodyListensHere0001';

const files = tenantsFiles(() => sandbox);
let sandbox: Sandbox;
/** Every secret of both demo worlds: none may appear in anything the CLI prints. */
let secrets: string[];

beforeAll(async () => {
  sandbox = await startSandbox();
  secrets = [
    ...Object.values(K),
    ...sandbox.fixture.accounting.applications.flatMap((app) => [...app.apiKeys, ...app.clientSecrets]),
    DEMO_ACCOUNTING_WEBHOOK_SECRET,
    unreachableKey,
  ];
});

afterAll(async () => {
  await sandbox?.close();
  files.remove();
});

/** `npm run tenants -- <args>` with nothing of this process's environment but PATH and HOME; checks that no secret is printed. */
const tenants = (args: string[], env: Record<string, string>) => runReadOnlyCli('tenants', args, env, secrets);
const tenantsFile = (content: Parameters<TenantsFiles['write']>[0], on?: Sandbox) => files.write(content, on);

/** Two compliance applications of the demo world (keys inline, by environment variable and by file), its books, one link. */
const twoMerchants =
  (extra: unknown[] = []) =>
  (urls: { compliance: string; accounting: string }) => ({
    compliance: [
      {
        application: 'retail',
        apiKey: { env: 'RETAIL_KEY' },
        baseUrl: urls.compliance,
        businesses: [B.nairobi, B.mombasa],
      },
      { application: 'other', apiKey: { file: 'keys/other' }, baseUrl: urls.compliance },
      ...extra,
    ],
    accounting: [
      {
        application: 'books',
        apiKey: { value: DEMO_ACCOUNTING_API_KEY },
        clientSecret: { value: DEMO_ACCOUNTING_CLIENT_SECRET },
        clientId: { value: DEMO_ACCOUNTING_CLIENT_ID },
        webhookSecret: { value: DEMO_ACCOUNTING_WEBHOOK_SECRET },
        baseUrl: urls.accounting,
      },
    ],
    links: [
      {
        business: DEMO_RECONCILIATION_LINK.businessId,
        company: DEMO_RECONCILIATION_LINK.companyId,
        accounting: 'books',
      },
    ],
  });

const fileEnv = (path: string) => ({ TENANTS_FILE: path, RETAIL_KEY: K.orgWide });

/** The report's row of one compliance application. */
interface ComplianceRow {
  application: string;
  key: { state: string; status?: number; code?: string; error?: string };
  environment: string;
  serviceApplicationId: string | null;
  businesses: string[] | null;
  requestsPerMinute: { configured: number; service: number | null };
  budget: { limit: number; remaining: number; usedPercent: number } | null;
}

interface Report {
  origin: string;
  settled: boolean;
  healthy: boolean;
  compliance: ComplianceRow[];
  accounting: Array<{ application: string; key: { state: string }; companies: string[] | null }>;
  links: Array<{ business: string; company: string; accounting: string; compliance: string | null }>;
  problems: string[];
}

/** The line of the table naming `application` first. */
function row(stdout: string, application: string): string {
  const line = stdout.split('\n').find((l) => l.startsWith(`${application} `));
  expect(line, `a row for ${application} in:\n${stdout}`).toBeDefined();
  return line!;
}

describe('npm run tenants', () => {
  it('lists every application of a tenants file, healthy, with its businesses, its budget and the links; it only reads', async () => {
    const path = tenantsFile(twoMerchants());
    const before = sandbox.stats.snapshot();
    const result = await tenants([], fileEnv(path));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`TENANTS_FILE ${path}`);

    const retail = row(result.stdout, 'retail');
    expect(retail).toMatch(/ accepted +test +app_demo_retail +2 +120 \/ 120 +\d+% \(\d+ of 120, resets in \d+ s\)/);
    const other = row(result.stdout, 'other');
    // The file's 120 a minute against the service's 60 for that application.
    expect(other).toMatch(/ accepted +test +app_demo_other +1 +120 \/ 60 +\d+% \(\d+ of 60, resets in \d+ s\)/);
    // Ids only with --wide.
    expect(result.stdout).not.toContain(B.kisumu);
    expect(row(result.stdout, 'books')).toMatch(/ accepted +2$/);
    expect(row(result.stdout, DEMO_RECONCILIATION_LINK.businessId)).toMatch(
      new RegExp(`${DEMO_RECONCILIATION_LINK.companyId} +books +retail$`),
    );
    expect(result.stdout).toMatch(/all 2 compliance application\(s\) and 1 accounting application\(s\) healthy/);

    const after = sandbox.stats.snapshot();
    const writes = after.routes.filter(
      (r) =>
        r.method !== 'GET' &&
        r.count > (before.routes.find((b) => b.method === r.method && b.route === r.route)?.count ?? 0),
    );
    expect(writes).toEqual([]);

    const wide = await tenants(['--wide'], fileEnv(path));
    expect(wide.code).toBe(0);
    expect(row(wide.stdout, 'retail')).toContain(`2: ${B.nairobi}, ${B.mombasa}`);
    expect(row(wide.stdout, 'other')).toContain(`1: ${B.kisumu}`);
    expect(row(wide.stdout, 'books')).toContain(`2: ${DEMO_COMPANY_IDS.join(', ')}`);
  });

  it('--json prints the same as JSON: both applications with their businesses, the service limit and the budget', async () => {
    const result = await tenants(['--json'], fileEnv(tenantsFile(twoMerchants())));
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).toMatchObject({ settled: true, healthy: true, problems: [] });
    expect(report.compliance).toMatchObject([
      {
        application: 'retail',
        key: { state: 'accepted' },
        environment: 'test',
        serviceApplicationId: DEMO.applications.retail,
        businesses: [B.nairobi, B.mombasa],
        requestsPerMinute: { configured: 120, service: 120 },
        budget: { limit: 120 },
      },
      {
        application: 'other',
        key: { state: 'accepted' },
        environment: 'test',
        serviceApplicationId: DEMO.applications.other,
        businesses: [B.kisumu],
        requestsPerMinute: { configured: 120, service: 60 },
        budget: { limit: 60 },
      },
    ]);
    for (const { budget } of report.compliance) {
      expect(budget!.usedPercent).toBe(Math.round(((budget!.limit - budget!.remaining) / budget!.limit) * 100));
    }
    expect(report.accounting).toEqual([
      expect.objectContaining({ application: 'books', key: { state: 'accepted' }, companies: [...DEMO_COMPANY_IDS] }),
    ]);
    expect(report.links).toEqual([
      expect.objectContaining({
        business: DEMO_RECONCILIATION_LINK.businessId,
        company: DEMO_RECONCILIATION_LINK.companyId,
        accounting: 'books',
        compliance: 'retail',
      }),
    ]);
  });

  it("reads the budget in use from the service's own headers: what others spent of the window shows", async () => {
    // A sandbox of its own: its windows open with this test.
    const own = await startSandbox();
    try {
      const client = new ComplianceClient({ baseUrl: own.complianceUrl, apiKey: K.otherApplication });
      try {
        for (let i = 0; i < 30; i++) await client.getIdentity();
      } finally {
        await client.close();
      }
      const result = await tenants(['--json'], fileEnv(tenantsFile(twoMerchants(), own)));
      expect(result.code).toBe(0);
      const other = (JSON.parse(result.stdout) as Report).compliance.find((r) => r.application === 'other')!;
      // 30 of the fleet's, then the CLI's identity request, the first it sends: 31 of 60.
      expect(other.budget).toMatchObject({ limit: 60, remaining: 29, usedPercent: 52 });
    } finally {
      await own.close();
    }
  });

  it('reports a refused key in its row, lists the others, names the entry on stderr and exits 2', async () => {
    const revoked = { application: 'gone', apiKey: { value: K.revoked } };
    const suspended = { application: 'paused', apiKey: { value: K.suspended } };
    const path = tenantsFile((urls) => ({ ...(twoMerchants([revoked, suspended])(urls) as object) }));
    const result = await tenants([], { ...fileEnv(path), COMPLIANCE_BASE_URL: sandbox.complianceUrl });
    expect(result.code).toBe(2);
    expect(row(result.stdout, 'gone')).toMatch(/ refused 401 invalid_api_key +test /);
    expect(row(result.stdout, 'paused')).toMatch(/ refused 401 invalid_api_key +test /);
    // The others still listed, with what they would serve.
    expect(row(result.stdout, 'retail')).toMatch(/ accepted +test +app_demo_retail +2 /);
    expect(row(result.stdout, 'other')).toMatch(/ accepted +test +app_demo_other +1 /);
    expect(result.stderr).toContain('tenants.json: compliance[2] (gone)');
    expect(result.stderr).toContain('tenants.json: compliance[3] (paused)');
    expect(result.stdout).toMatch(/2 key\(s\) refused/);

    const json = await tenants(['--json'], { ...fileEnv(path), COMPLIANCE_BASE_URL: sandbox.complianceUrl });
    expect(json.code).toBe(2);
    const report = JSON.parse(json.stdout) as Report;
    expect(report).toMatchObject({ settled: false, healthy: false });
    expect(report.compliance.map((r) => [r.application, r.key])).toEqual([
      ['retail', { state: 'accepted' }],
      ['other', { state: 'accepted' }],
      ['gone', { state: 'refused', status: 401, code: 'invalid_api_key' }],
      ['paused', { state: 'refused', status: 401, code: 'invalid_api_key' }],
    ]);
    expect(report.compliance.find((r) => r.application === 'gone')).toMatchObject({
      businesses: null,
      budget: null,
      serviceApplicationId: null,
    });
    expect(report.compliance.find((r) => r.application === 'retail')?.businesses).toEqual([B.nairobi, B.mombasa]);
    expect(report.problems.some((p) => p.startsWith('tenants.json: compliance[2] (gone): '))).toBe(true);
  });

  it('exits 2 with every problem of the directory when the keys are accepted but the file asks what they cannot do', async () => {
    const path = tenantsFile((urls) => {
      const file = twoMerchants()(urls) as { compliance: Array<Record<string, unknown>> };
      file.compliance[0]!.businesses = [B.nairobi, B.kisumu];
      return file;
    });
    const result = await tenants([], fileEnv(path));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/tenants\.json: compliance\[0\] \(retail\): unknown business biz_other_kisumu/);
    expect(row(result.stdout, 'retail')).toMatch(/ accepted +test +app_demo_retail /);
  });

  it('reports an unreachable service in its row, lists the others and exits 1 (2 with a refused key beside it)', async () => {
    const gone = { application: 'elsewhere', apiKey: { value: unreachableKey }, baseUrl: 'http://127.0.0.1:9' };
    const result = await tenants([], fileEnv(tenantsFile(twoMerchants([gone]))));
    expect(result.code).toBe(1);
    expect(row(result.stdout, 'elsewhere')).toMatch(/ unreachable: /);
    expect(row(result.stdout, 'retail')).toMatch(/ accepted +test +app_demo_retail +2 /);
    expect(result.stderr).toContain(
      'tenants.json: compliance[2] (elsewhere): the compliance service at http://127.0.0.1:9 cannot be reached',
    );

    // A refused key beside it: 2, since no retry mends the file.
    const revoked = { application: 'gone', apiKey: { value: K.revoked }, baseUrl: sandbox.complianceUrl };
    const both = await tenants([], fileEnv(tenantsFile(twoMerchants([gone, revoked]))));
    expect(both.code).toBe(2);
    expect(row(both.stdout, 'elsewhere')).toMatch(/ unreachable: /);
    expect(row(both.stdout, 'gone')).toMatch(/ refused 401 invalid_api_key /);
    expect(both.stdout).toContain('1 key(s) refused, 1 service(s) unreachable');
  });

  it('refuses a tenants file it cannot read before contacting anything (exit 2)', async () => {
    const missing = files.missing('missing.json');
    const result = await tenants([], { TENANTS_FILE: missing });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`TENANTS_FILE: cannot read ${missing} (ENOENT)`);
    expect(result.stdout).toBe('');
  });

  it('refuses SANDBOX=embedded beside a tenants file: the entries name their services (exit 2)', async () => {
    const result = await tenants([], { ...fileEnv(tenantsFile(twoMerchants())), SANDBOX: 'embedded' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('configuration error: SANDBOX=embedded and TENANTS_FILE are both set');
    expect(result.stdout).toBe('');
  });

  it('without a tenants file, lists the single-key variables as tenant "default"', async () => {
    const result = await tenants(['--wide'], {
      COMPLIANCE_BASE_URL: sandbox.complianceUrl,
      COMPLIANCE_API_KEY: K.mombasa,
      ACCOUNTING_BASE_URL: sandbox.accountingUrl,
      ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
      ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('tenants: environment');
    expect(row(result.stdout, 'default')).toMatch(new RegExp(` accepted +test +app_demo_retail +1: ${B.mombasa} `));
  });

  it('with no service configured, lists the embedded sandbox and says so on stderr', async () => {
    const result = await tenants([], {});
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'no service is configured (COMPLIANCE_* / ACCOUNTING_*): using the embedded sandbox',
    );
    expect(row(result.stdout, 'default')).toMatch(/ accepted +test +app_demo_retail +1 /);
  });

  it('--help follows the help style', async () => {
    const result = await tenants(['--help'], {});
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith('Usage: npm run tenants -- ')).toBe(true);
    const headings = result.stdout.split('\n').filter((line) => /^[A-Z][a-z ]+:$/.test(line));
    expect(headings.slice(-3)).toEqual(['Environment:', 'Output:', 'Exit codes:']);
    expect(result.stdout).toMatch(/^ {2}TENANTS_FILE {2,}\S/m);
    expect(result.stdout).toMatch(/^ {2}--json {2,}\S/m);
    expect(result.stdout).toMatch(/^ {2}--wide {2,}\S/m);
  });
});

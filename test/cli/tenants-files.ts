/**
 * For the tests of the read-only CLIs over a tenants file (tenants, check, reconcile): the sandbox's two merchants as a
 * tenants file, and a CLI run as a process with nothing of this process's environment but PATH and HOME, whose
 * output is checked to hold no key or secret of the sandbox.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_ID,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_ACCOUNTING_WEBHOOK_SECRET,
  DEMO_RECONCILIATION_LINK,
  OTHER_ACCOUNTING_CLIENT_SECRET,
} from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import type { Sandbox } from '../../sandbox/server.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Every secret of the sandbox's demo worlds: none may appear in anything a CLI prints. */
export function sandboxSecrets(sandbox: Sandbox): string[] {
  return [
    ...Object.values(DEMO.keys),
    ...sandbox.fixture.accounting.applications.flatMap((app) => [
      ...app.apiKeys,
      ...app.clientSecrets,
      ...(app.webhookSecret ? [app.webhookSecret] : []),
    ]),
    DEMO_ACCOUNTING_WEBHOOK_SECRET,
  ];
}

/** `src/cli/<name>.ts` as a process; fails the test if a secret is in its output. */
export async function runReadOnlyCli(
  name: string,
  args: string[],
  env: Record<string, string>,
  secrets: readonly string[],
): Promise<CliRun> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent' };
  let result: CliRun;
  try {
    const { stdout, stderr } = await run(tsx, [`src/cli/${name}.ts`, ...args], {
      cwd: root,
      env: { ...base, ...env },
      timeout: 60_000,
    });
    result = { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    result = { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
  for (const secret of secrets) {
    expect(result.stdout + result.stderr).not.toContain(secret);
    expect(result.stdout + result.stderr).not.toContain(secret.slice(-12));
  }
  return result;
}

export interface TenantsFiles {
  /** A tenants file in its own directory (the other merchant's key in a key file beside it), on `on` (default the
   * tests' sandbox); its path. */
  write(content: (urls: { compliance: string; accounting: string }) => unknown, on?: Sandbox): string;
  /** A path in the files' directory that nothing is written to. */
  missing(name: string): string;
  remove(): void;
}

export function tenantsFiles(sandbox: () => Sandbox): TenantsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'read-only-cli-'));
  let files = 0;
  return {
    write(content, on = sandbox()) {
      const at = join(dir, `t${++files}`);
      mkdirSync(join(at, 'keys'), { recursive: true });
      writeFileSync(join(at, 'keys', 'other'), `${DEMO.keys.otherApplication}\n`, { mode: 0o600 });
      const path = join(at, 'tenants.json');
      const urls = { compliance: on.complianceUrl, accounting: on.accountingUrl };
      writeFileSync(path, JSON.stringify(content(urls), null, 2), { mode: 0o600 });
      return path;
    },
    missing: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The sandbox's two merchants, each on its own compliance key and its own books: `retail` (organisation-wide key,
 * Nairobi and Mombasa) and `other` (Kisumu, key in a file); Nairobi linked to its company through `books`. The other
 * books' key is the fixture's.
 */
export function twoMerchants(sandbox: Sandbox, options: { otherLinked?: boolean } = {}) {
  const otherBooksKey = sandbox.fixture.accounting.applications.find((app) => app.id === 'app_other')!.apiKeys[0]!;
  return (urls: { compliance: string; accounting: string }) => ({
    compliance: [
      { application: 'retail', apiKey: { value: DEMO.keys.orgWide }, baseUrl: urls.compliance },
      { application: 'other', apiKey: { file: 'keys/other' }, baseUrl: urls.compliance, requestsPerMinute: 60 },
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
      {
        application: 'other-books',
        apiKey: { value: otherBooksKey },
        clientSecret: { value: OTHER_ACCOUNTING_CLIENT_SECRET },
        baseUrl: urls.accounting,
      },
    ],
    links: [
      {
        business: DEMO_RECONCILIATION_LINK.businessId,
        company: DEMO_RECONCILIATION_LINK.companyId,
        accounting: 'books',
      },
      ...(options.otherLinked
        ? [{ business: DEMO.businesses.kisumu, company: 'cmp_other_kisumu', accounting: 'other-books' }]
        : []),
    ],
  });
}

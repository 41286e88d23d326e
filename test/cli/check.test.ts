import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET } from '../../sandbox/accounting/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

// The sandbox started here plays the "real" services: the check must use exactly what the environment says.
let services: Sandbox;

beforeAll(async () => {
  services = await startSandbox();
});

afterAll(async () => {
  await services.close();
});

async function check(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent' };
  try {
    const { stdout, stderr } = await run(tsx, ['src/cli/check.ts'], {
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

describe('npm run check', () => {
  it('talks to the configured services, signing accounting requests', async () => {
    const before = services.stats.snapshot().total;
    const result = await check({
      COMPLIANCE_BASE_URL: services.complianceUrl,
      COMPLIANCE_API_KEY: DEMO.keys.nairobi,
      ACCOUNTING_BASE_URL: services.accountingUrl,
      ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
      ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
    });
    expect(result.stdout).toContain('all checks passed');
    expect(result.stdout).toContain(`compliance: ${services.complianceUrl}\n`);
    expect(result.code).toBe(0);
    expect(services.stats.snapshot().total - before).toBe(7);
    expect(result.stdout + result.stderr).not.toContain(DEMO_ACCOUNTING_CLIENT_SECRET);
  });

  it('fails with the failing operation named when a key lacks a scope', async () => {
    const result = await check({
      COMPLIANCE_BASE_URL: services.complianceUrl,
      COMPLIANCE_API_KEY: DEMO.keys.readOnly,
      ACCOUNTING_BASE_URL: services.accountingUrl,
      ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/items.*FAILED.*403 forbidden/);
  });

  it('uses the embedded sandbox when asked for explicitly', async () => {
    const result = await check({ SANDBOX: 'embedded' });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/compliance: http:\/\/127\.0\.0\.1:\d+ \(embedded sandbox\)/);
  });

  it('with no service configured, checks the embedded sandbox and says so on stderr (it files nothing)', async () => {
    const result = await check({});
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'no service is configured (COMPLIANCE_* / ACCOUNTING_*): using the embedded sandbox',
    );
    expect(result.stdout).toMatch(/compliance: http:\/\/127\.0\.0\.1:\d+ \(embedded sandbox\)/);
  });

  it('refuses half a configuration with the variable named, without printing the key', async () => {
    const result = await check({ COMPLIANCE_API_KEY: DEMO.keys.nairobi });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('COMPLIANCE_BASE_URL is not set');
    expect(result.stderr).not.toContain(DEMO.keys.nairobi);
  });
});

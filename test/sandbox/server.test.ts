import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTING_API_KEY } from '../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { FixtureError } from '../../sandbox/fixture.js';
import { startSandbox } from '../../sandbox/server.js';

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const res = await request(url, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

describe('startSandbox', () => {
  it('serves both services on their own ports, sharing faults and request counters', async () => {
    const sandbox = await startSandbox();
    try {
      expect(sandbox.complianceUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sandbox.accountingUrl).not.toBe(sandbox.complianceUrl);
      expect((await get(`${sandbox.complianceUrl}/v1/identity`, { 'x-api-key': DEMO.keys.nairobi })).status).toBe(200);
      expect((await get(`${sandbox.accountingUrl}/companies`, { 'x-api-key': DEMO_ACCOUNTING_API_KEY })).status).toBe(
        200,
      );

      await sandbox.inspector.addFault({ service: 'accounting', kind: 'error', status: 502, times: 1 });
      expect((await get(`${sandbox.accountingUrl}/companies`, { 'x-api-key': DEMO_ACCOUNTING_API_KEY })).status).toBe(
        502,
      );
      expect((await get(`${sandbox.complianceUrl}/v1/identity`, { 'x-api-key': DEMO.keys.nairobi })).status).toBe(200);
      const summary = await sandbox.inspector.requests();
      expect(summary.routes.map((r) => r.service).sort()).toEqual(['accounting', 'compliance']);
      await sandbox.inspector.reset();
    } finally {
      await sandbox.close();
    }
  });

  it('stops its timers and both servers on close', async () => {
    const sandbox = await startSandbox();
    const res = await request(`${sandbox.complianceUrl}/v1/sales`, {
      method: 'POST',
      headers: { 'x-api-key': DEMO.keys.nairobi, 'content-type': 'application/json' },
      body: JSON.stringify({
        traderInvoiceNumber: 'ASYNC-close-1',
        saleDate: '2025-06-01',
        lines: [{ itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 }],
        callbackUrl: 'http://127.0.0.1:9/never',
      }),
    });
    expect(res.statusCode).toBe(202);
    await res.body.dump();
    await sandbox.close();
    await expect(request(`${sandbox.complianceUrl}/__sandbox/health`)).rejects.toThrow();
    await expect(request(`${sandbox.accountingUrl}/__sandbox/sync-batches`)).rejects.toThrow();
  });

  it('refuses an invalid fixture with a FixtureError naming the field', async () => {
    await expect(startSandbox({ fixture: { compliance: { applications: [] } } })).rejects.toBeInstanceOf(FixtureError);
    await expect(startSandbox({ fixture: { compliance: { applications: [] } } })).rejects.toThrow(
      'compliance.applications: ',
    );
  });
});

function runCli(
  args: string[],
  untilOutput?: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/main.ts', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (untilOutput?.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run sandbox (main.ts)', () => {
  it('prints both URLs and the demo keys, and exits cleanly on SIGTERM', async () => {
    const { code, stdout } = await runCli(['--compliance-port', '0', '--accounting-port', '0'], /Press Ctrl\+C/);
    expect(code).toBe(0);
    expect(stdout).toMatch(/compliance\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/accounting\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toContain(DEMO.keys.orgWide);
  });

  it('exits 2 with a clear message for a bad fixture', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-cli-'));
    const path = join(dir, 'bad.json');
    await writeFile(
      path,
      JSON.stringify({ compliance: { applications: [{ id: 'a', name: 'A', requestsPerMinute: -1 }] } }),
    );
    const { code, stderr } = await runCli(['--fixture', path]).finally(() => rm(dir, { recursive: true, force: true }));
    expect(code).toBe(2);
    expect(stderr).toContain(
      `Invalid sandbox fixture: fixture ${path}: compliance.applications[0].requestsPerMinute: `,
    );
  });

  it('exits 2 for an unknown option or a bad port', async () => {
    expect((await runCli(['--nope'])).code).toBe(2);
    const badPort = await runCli(['--compliance-port', 'abc']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('--compliance-port must be a port number');
  });
});

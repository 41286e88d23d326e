/**
 * `npm run worker` (src/cli/worker.ts) as an operator meets it: every way a start-up can go wrong ends with one
 * named error, a non-zero exit, nothing started half-way and no secret printed.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO } from '../../sandbox/default-fixture.js';
import { DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET } from '../../sandbox/accounting/default-fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { startDevServer } from '../../tools/temporal-cli/dev-server.js';
import { projectSearchAttributes } from '../../src/contracts/search-attributes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

const WRONG_COMPLIANCE_KEY = 'cmp_sk_test_wrong_key_never_print_0001';
const WRONG_ACCOUNTING_KEY = 'sk_development_wrong_key_never_print_0001';
const TEMPORAL_API_KEY = 'tmprl_api_key_never_print_0123456789abcdef';

interface RunResult {
  code: number | null;
  output: string;
}

/** Runs the worker until it exits, or until `until` appears in its output (then SIGTERM, and the exit). */
function worker(env: Record<string, string>, until?: string, timeoutMs = 90_000): Promise<RunResult> {
  const base = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    LOG_LEVEL: 'warn',
    PAYLOAD_KEYS: 'test-1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, ['src/cli/worker.ts'], { cwd: root, env: { ...base, ...env } });
    let output = '';
    let signalled = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (until && !signalled && output.includes(until)) {
        signalled = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = await mkdtemp(path.join(os.tmpdir(), 'worker-startup-'));
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function temporalEnv(): Record<string, string> {
  return { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace') };
}

function servicesEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    COMPLIANCE_BASE_URL: sandbox.complianceUrl,
    COMPLIANCE_API_KEY: DEMO.keys.nairobi,
    ACCOUNTING_BASE_URL: sandbox.accountingUrl,
    ACCOUNTING_API_KEY: DEMO_ACCOUNTING_API_KEY,
    ACCOUNTING_CLIENT_SECRET: DEMO_ACCOUNTING_CLIENT_SECRET,
    ...overrides,
  };
}

describe('npm run worker refuses to start half-way', () => {
  it('refuses to write customer data in plain text: no payload key, or a key of the wrong length, is named', async () => {
    const missing = await worker({ ...temporalEnv(), ...servicesEnv(), PAYLOAD_KEYS: '' });
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/configuration error: .*PAYLOAD_KEYS/);
    expect(missing.output).not.toContain('worker running');

    const shortKey = Buffer.alloc(24, 9).toString('base64');
    const wrong = await worker({ ...temporalEnv(), ...servicesEnv(), PAYLOAD_KEYS: `prod-1:${shortKey}` });
    expect(wrong.code).toBe(2);
    expect(wrong.output).toMatch(/configuration error: PAYLOAD_KEYS .*"prod-1".*32/);
    expect(wrong.output).not.toContain(shortKey);
  });

  it('refuses services that are not configured instead of starting the sandbox in their place', async () => {
    const result = await worker(temporalEnv());
    expect(result.code).toBe(2);
    expect(result.output).toContain(
      'configuration error: COMPLIANCE_BASE_URL and COMPLIANCE_API_KEY, ACCOUNTING_BASE_URL and ACCOUNTING_API_KEY are not set',
    );
    expect(result.output).toContain('SANDBOX=embedded');
    expect(result.output).not.toContain('embedded sandbox started');
  });

  it('refuses one missing service too, and an unknown SANDBOX value', async () => {
    const {
      ACCOUNTING_BASE_URL: _u,
      ACCOUNTING_API_KEY: _k,
      ACCOUNTING_CLIENT_SECRET: _s,
      ...complianceOnly
    } = servicesEnv();
    const one = await worker({ ...temporalEnv(), ...complianceOnly });
    expect(one.code).toBe(2);
    expect(one.output).toContain('configuration error: ACCOUNTING_BASE_URL and ACCOUNTING_API_KEY are not set');
    const bogus = await worker({ ...temporalEnv(), SANDBOX: 'yes' });
    expect(bogus.code).toBe(2);
    expect(bogus.output).toContain('configuration error: SANDBOX: must be "embedded" or "off"');
  });

  it('names an unreachable Temporal', async () => {
    const result = await worker({ ...servicesEnv(), TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(result.code).toBe(1);
    expect(result.output).toContain(
      'error: cannot connect to Temporal at 127.0.0.1:1 (namespace "default"): connection refused',
    );
  });

  it('names an unreadable TLS file, and never prints the API key', async () => {
    const keyFile = path.join(dir, 'client.key');
    await writeFile(keyFile, 'not a key');
    const result = await worker({
      ...servicesEnv(),
      ...temporalEnv(),
      TEMPORAL_API_KEY,
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'absent.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: keyFile,
    });
    expect(result.code).toBe(2);
    expect(result.output).toContain(
      `configuration error: TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read ${path.join(dir, 'absent.pem')} (ENOENT)`,
    );
    expect(result.output).not.toContain(TEMPORAL_API_KEY);
  });

  it('names a wrong Temporal API key or TLS mismatch without printing the key', async () => {
    const result = await worker({
      ...servicesEnv(),
      ...temporalEnv(),
      TEMPORAL_API_KEY,
      TEMPORAL_CONNECT_TIMEOUT_MS: '3000',
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/error: cannot connect to Temporal at .*TLS/);
    expect(result.output).not.toContain(TEMPORAL_API_KEY);
  });

  it('names a namespace that does not exist', async () => {
    const result = await worker({ ...servicesEnv(), ...temporalEnv(), TEMPORAL_NAMESPACE: 'no-such-namespace' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('has no namespace "no-such-namespace": check TEMPORAL_NAMESPACE');
  });

  it('checks the compliance key once at start-up: a refused key is named, never printed', async () => {
    const result = await worker({ ...temporalEnv(), ...servicesEnv({ COMPLIANCE_API_KEY: WRONG_COMPLIANCE_KEY }) });
    expect(result.code).toBe(1);
    expect(result.output).toContain(
      `error: COMPLIANCE_API_KEY was refused by the compliance service at ${sandbox.complianceUrl} (401 invalid_api_key)`,
    );
    expect(result.output).not.toContain(WRONG_COMPLIANCE_KEY);
    expect(result.output).not.toContain('sale workers ready');
  });

  it('checks the accounting key once at start-up: a refused key is named, never printed', async () => {
    const result = await worker({ ...temporalEnv(), ...servicesEnv({ ACCOUNTING_API_KEY: WRONG_ACCOUNTING_KEY }) });
    expect(result.code).toBe(1);
    expect(result.output).toContain(
      `error: ACCOUNTING_API_KEY was refused by the accounting service at ${sandbox.accountingUrl} (401`,
    );
    expect(result.output).not.toContain(WRONG_ACCOUNTING_KEY);
    expect(result.output).not.toContain(DEMO_ACCOUNTING_CLIENT_SECRET);
  });

  it('starts while a service cannot be reached (an outage for a running fleet), naming it in a warning', async () => {
    const result = await worker(
      { ...temporalEnv(), ...servicesEnv({ COMPLIANCE_BASE_URL: 'http://127.0.0.1:1' }), LOG_LEVEL: 'info' },
      'worker running',
    );
    expect(result.code).toBe(0);
    expect(result.output).toContain('the compliance service is unavailable: starting without this key');
    expect(result.output).toContain(
      'COMPLIANCE_BASE_URL: the compliance service at http://127.0.0.1:1 cannot be reached',
    );
    expect(result.output).not.toContain(DEMO.keys.nairobi);
  });
});

describe('npm run worker on a server without the search attributes', () => {
  it('registers them before it polls, then runs and drains on SIGTERM', async () => {
    const server = await startDevServer({ headless: true, searchAttributes: [] });
    try {
      const result = await worker(
        { ...servicesEnv(), TEMPORAL_ADDRESS: server.address, LOG_LEVEL: 'info' },
        'worker running',
        120_000,
      );
      expect(result.output).toContain('"searchAttributes":"registered"');
      expect(result.code).toBe(0);
      const connection = await Connection.connect({ address: server.address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({
          namespace: server.namespace,
        });
        for (const key of projectSearchAttributes) expect(customAttributes?.[key.name]).toBeDefined();
      } finally {
        await connection.close();
      }
    } finally {
      await server.stop();
    }
  }, 150_000);
});

/**
 * Every secret can come from a file (`<NAME>_FILE`, as Docker and Kubernetes secrets mount them): read once, at
 * start-up, by each loader a worker, the codec server or a CLI uses; both forms at once, or an unreadable file,
 * is a configuration error naming the variable and the path, never the content.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codecServerOptionsFromEnv } from '../../src/codec/server.js';
import { ConfigError, loadConfig, resolveSecretFiles, SECRET_VARIABLES } from '../../src/config/env.js';
import { loadPurchasesConfig } from '../../src/config/purchases.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'secret-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A secret file as a mount leaves it: the value and a trailing newline. */
function secretFile(name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return path;
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

const complianceKey = 'cmp_sk_test_' + 'fromafile0123456789';
const accountingKey = 'sk_development_' + 'fromafile0123456789';
const clientSecret = 'cs_' + 'fromafileS3cr3tS3cr3t';
const webhookSecret = 'whsec_' + 'ZnJvbWFmaWxlc2VjcmV0MDEyMw==';
const callbackSecret = 'callback-secret-from-a-file-0123456789abcdef';
const codecToken = 'codec-token-from-a-file-0123456789abcdef';
const temporalApiKey = 'temporal-api-key-from-a-file';

describe('resolveSecretFiles', () => {
  it('covers every secret the processes read', () => {
    expect([...SECRET_VARIABLES].sort()).toEqual(
      [
        'ACCOUNTING_API_KEY',
        'ACCOUNTING_CLIENT_SECRET',
        'ACCOUNTING_WEBHOOK_SECRET',
        'CALLBACK_SECRET',
        'CODEC_AUTH_TOKEN',
        'COMPLIANCE_API_KEY',
        'PURCHASES_WEBHOOK_SECRET',
        'TEMPORAL_API_KEY',
      ].sort(),
    );
  });

  it('reads the file into the variable, without its trailing newline, and drops the _FILE entry', () => {
    const env = { CALLBACK_SECRET_FILE: secretFile('callback', callbackSecret), OTHER: 'kept' };
    const resolved = resolveSecretFiles(env);
    expect(resolved).toEqual({ CALLBACK_SECRET: callbackSecret, OTHER: 'kept' });
    // Resolving again reads nothing: the result has no _FILE left.
    expect(resolveSecretFiles(resolved)).toBe(resolved);
    expect(env).toEqual({ CALLBACK_SECRET_FILE: join(dir, 'callback'), OTHER: 'kept' }); // the input is not changed
  });

  it('an empty file counts as unset, like an empty variable', () => {
    expect(
      resolveSecretFiles({ ACCOUNTING_CLIENT_SECRET_FILE: secretFile('empty', '') }).ACCOUNTING_CLIENT_SECRET,
    ).toBe('');
  });

  it('both forms set is an error naming both, never the value', () => {
    const message = messageOf(() =>
      resolveSecretFiles({ CODEC_AUTH_TOKEN: codecToken, CODEC_AUTH_TOKEN_FILE: secretFile('codec', codecToken) }),
    );
    expect(message).toBe('CODEC_AUTH_TOKEN and CODEC_AUTH_TOKEN_FILE are both set: set one of them');
    // An empty variable beside the file is not "set" (compose writes `NAME: ""` for an unset default).
    expect(
      resolveSecretFiles({ CODEC_AUTH_TOKEN: '', CODEC_AUTH_TOKEN_FILE: join(dir, 'codec') }).CODEC_AUTH_TOKEN,
    ).toBe(codecToken);
  });

  it('an unreadable or oversized file is an error naming the variable and the path', () => {
    const missing = join(dir, 'missing');
    expect(messageOf(() => resolveSecretFiles({ COMPLIANCE_API_KEY_FILE: missing }))).toBe(
      `COMPLIANCE_API_KEY_FILE: cannot read ${missing} (ENOENT)`,
    );
    expect(messageOf(() => resolveSecretFiles({ COMPLIANCE_API_KEY_FILE: dir }))).toBe(
      `COMPLIANCE_API_KEY_FILE: cannot read ${dir} (EISDIR)`,
    );
    const big = join(dir, 'big');
    writeFileSync(big, 'x'.repeat(70_000));
    expect(messageOf(() => resolveSecretFiles({ TEMPORAL_API_KEY_FILE: big }))).toMatch(
      /^TEMPORAL_API_KEY_FILE: .*big is 70000 bytes/,
    );
    if (process.getuid?.() !== 0) {
      const locked = secretFile('locked', 'x');
      chmodSync(locked, 0o000);
      expect(messageOf(() => resolveSecretFiles({ CALLBACK_SECRET_FILE: locked }))).toBe(
        `CALLBACK_SECRET_FILE: cannot read ${locked} (EACCES)`,
      );
    }
  });

  it('a malformed secret from a file is refused without showing it, like the variable', () => {
    const message = messageOf(() =>
      loadConfig({
        COMPLIANCE_BASE_URL: 'https://compliance.example.com',
        COMPLIANCE_API_KEY_FILE: secretFile('bad-key', 'not-a-key-at-all-secret'),
      }),
    );
    expect(message).toContain('COMPLIANCE_API_KEY');
    expect(message).not.toContain('not-a-key-at-all-secret');
  });
});

describe('each loader reads its secrets from files', () => {
  const services = {
    COMPLIANCE_BASE_URL: 'https://compliance.example.com',
    COMPLIANCE_API_KEY_FILE: secretFile('compliance', complianceKey),
    ACCOUNTING_BASE_URL: 'https://accounting.example.com',
    ACCOUNTING_API_KEY_FILE: secretFile('accounting', accountingKey),
    ACCOUNTING_CLIENT_SECRET_FILE: secretFile('client-secret', clientSecret),
    ACCOUNTING_WEBHOOK_SECRET_FILE: secretFile('webhook', webhookSecret),
  };

  it('loadConfig: the service credentials (npm run check, reconcile, the worker)', () => {
    const config = loadConfig(services);
    expect(config.compliance?.apiKey).toBe(complianceKey);
    expect(config.accounting).toMatchObject({ apiKey: accountingKey, clientSecret, webhookSecret, signRequests: true });
  });

  it('loadWorkerConfig: CALLBACK_SECRET', () => {
    const config = loadWorkerConfig({
      CALLBACK_PUBLIC_BASE_URL: 'https://callbacks.example.com',
      CALLBACK_SECRET_FILE: secretFile('callback', callbackSecret),
    });
    expect(config.callbackSecret).toBe(callbackSecret);
  });

  it('loadPurchasesConfig: PURCHASES_WEBHOOK_SECRET', () => {
    const config = loadPurchasesConfig({
      PURCHASES_SINK: 'https://hooks.example.com/purchases',
      PURCHASES_WEBHOOK_SECRET_FILE: secretFile('purchases', webhookSecret),
    });
    expect(config.sink).toEqual({ kind: 'webhook', url: 'https://hooks.example.com/purchases', webhookSecret });
  });

  it('the codec server: CODEC_AUTH_TOKEN', () => {
    const options = codecServerOptionsFromEnv({
      CODEC_HOST: '0.0.0.0',
      CODEC_AUTH_TOKEN_FILE: secretFile('codec', codecToken),
    });
    expect(options.authToken).toBe(codecToken);
  });

  it('loadWorkerSettings: all of them at once, TEMPORAL_API_KEY included', () => {
    const settings = loadWorkerSettings({
      ...services,
      CALLBACK_PUBLIC_BASE_URL: 'https://callbacks.example.com',
      CALLBACK_SECRET_FILE: secretFile('callback', callbackSecret),
      TEMPORAL_ADDRESS: 'temporal.example.com:7233',
      TEMPORAL_API_KEY_FILE: secretFile('temporal', temporalApiKey),
      TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
      PAYLOAD_ENCRYPTION: 'off',
    });
    expect(settings.services.compliance?.apiKey).toBe(complianceKey);
    expect(settings.worker.callbackSecret).toBe(callbackSecret);
    expect(settings.temporal.apiKey).toBe(temporalApiKey);
    expect(settings.temporal.secrets).toContain(temporalApiKey);
  });
});

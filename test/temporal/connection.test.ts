import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import {
  clientConnectionOptions,
  connectClient,
  loadTemporalSettings,
  nativeConnectionOptions,
  TemporalConnectionError,
} from '../../src/temporal/connection.js';

const API_KEY = 'tmprl_secret_api_key_do_not_print_0123456789';
let dir: string;
let certPath: string;
let keyPath: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'temporal-connection-'));
  certPath = path.join(dir, 'client.pem');
  keyPath = path.join(dir, 'client.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '1',
      '-subj',
      '/CN=test-client',
    ],
    { stdio: 'ignore' },
  );
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadTemporalSettings', () => {
  it('defaults to no address (the local stack starts a server) and namespace "default"', () => {
    const settings = loadTemporalSettings({});
    expect(settings.address).toBeUndefined();
    expect(settings.namespace).toBe('default');
    expect(nativeConnectionOptions(settings)).toEqual({ address: '127.0.0.1:7233' });
    expect(clientConnectionOptions(settings)).toEqual({ address: '127.0.0.1:7233', connectTimeout: 10_000 });
  });

  it('reads TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY; an API key turns TLS on; empty variables count as unset', () => {
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233',
      TEMPORAL_NAMESPACE: 'sales.a1b2c',
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_TLS_SERVER_NAME: '',
    });
    expect(nativeConnectionOptions(settings)).toEqual({
      address: 'eu-west-1.aws.api.temporal.io:7233',
      apiKey: API_KEY,
      tls: true,
    });
    expect(clientConnectionOptions(settings)).toMatchObject({
      address: 'eu-west-1.aws.api.temporal.io:7233',
      apiKey: API_KEY,
      tls: true,
    });
    expect(settings.namespace).toBe('sales.a1b2c');
    expect(settings.secrets).toContain(API_KEY);
  });

  it('reads a temporal.toml profile, the environment winning over it', async () => {
    const file = path.join(dir, 'temporal.toml');
    await writeFile(
      file,
      [
        '[profile.default]',
        'address = "127.0.0.1:7233"',
        '[profile.cloud]',
        'address = "sales.a1b2c.tmprl.cloud:7233"',
        'namespace = "sales.a1b2c"',
        '[profile.cloud.tls]',
        `client_cert_path = "${certPath}"`,
        `client_key_path = "${keyPath}"`,
        '',
      ].join('\n'),
    );
    const cloud = loadTemporalSettings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' });
    expect(cloud.address).toBe('sales.a1b2c.tmprl.cloud:7233');
    expect(cloud.namespace).toBe('sales.a1b2c');
    expect(cloud.tls).toMatchObject({ clientCertPair: { crt: expect.any(Uint8Array), key: expect.any(Uint8Array) } });
    expect(cloud.profile).toBe('cloud');
    const overridden = loadTemporalSettings({
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'cloud',
      TEMPORAL_NAMESPACE: 'other.a1b2c',
    });
    expect(overridden.namespace).toBe('other.a1b2c');
    expect(loadTemporalSettings({ TEMPORAL_CONFIG_FILE: file }).address).toBe('127.0.0.1:7233');
    expect(
      configError(() => loadTemporalSettings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' })).message,
    ).toMatch(/^TEMPORAL_PROFILE: Profile 'nope' not found/);
  });

  it('names a TLS file that cannot be read', () => {
    const err = configError(() =>
      loadTemporalSettings({
        TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'missing.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: keyPath,
      }),
    );
    expect(err.message).toBe(`TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read ${path.join(dir, 'missing.pem')} (ENOENT)`);
  });

  it('names a TLS file that is not what it should be, without its content', async () => {
    const wrong = path.join(dir, 'wrong.key');
    await writeFile(wrong, 'this-is-not-a-key-but-a-secret-looking-string');
    const err = configError(() =>
      loadTemporalSettings({ TEMPORAL_TLS_CLIENT_CERT_PATH: certPath, TEMPORAL_TLS_CLIENT_KEY_PATH: wrong }),
    );
    expect(err.message).toContain(`TEMPORAL_TLS_CLIENT_KEY_PATH (${wrong}): not a PEM private key`);
    expect(err.message).not.toContain('secret-looking');
    // The certificate given as the key, the key as the certificate.
    const swapped = configError(() =>
      loadTemporalSettings({ TEMPORAL_TLS_CLIENT_CERT_PATH: keyPath, TEMPORAL_TLS_CLIENT_KEY_PATH: keyPath }),
    );
    expect(swapped.message).toContain('TEMPORAL_TLS_CLIENT_CERT_PATH');
    expect(swapped.message).toContain('not a PEM certificate');
    const inline = configError(() =>
      loadTemporalSettings({
        TEMPORAL_TLS_CLIENT_CERT_PATH: certPath,
        TEMPORAL_TLS_CLIENT_KEY_DATA: 'inline-secret-material',
      }),
    );
    expect(inline.message).toMatch(/^TEMPORAL_TLS_CLIENT_KEY_DATA: not a PEM private key/);
    expect(inline.message).not.toContain('inline-secret-material');
  });

  it('refuses half an mTLS pair instead of silently connecting without a client certificate', () => {
    const err = configError(() => loadTemporalSettings({ TEMPORAL_TLS_CLIENT_CERT_PATH: certPath }));
    expect(err.message).toMatch(/^TEMPORAL_TLS_CLIENT_KEY_PATH .*is not set but a client certificate is/);
  });

  it('refuses a connect timeout that is not a number of milliseconds', () => {
    expect(configError(() => loadTemporalSettings({ TEMPORAL_CONNECT_TIMEOUT_MS: 'soon' })).message).toMatch(
      /^TEMPORAL_CONNECT_TIMEOUT_MS:/,
    );
  });
});

describe('connectClient', () => {
  async function failure(env: Record<string, string>): Promise<TemporalConnectionError> {
    try {
      const connection = await connectClient(loadTemporalSettings(env));
      await connection.close();
    } catch (err) {
      expect(err).toBeInstanceOf(TemporalConnectionError);
      return err as TemporalConnectionError;
    }
    throw new Error('expected a TemporalConnectionError');
  }

  it('connects and checks the namespace', async () => {
    const connection = await connectClient(
      loadTemporalSettings({
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      }),
    );
    await connection.close();
  });

  it('says when nothing listens at the address', async () => {
    const err = await failure({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(err.message).toBe(
      'cannot connect to Temporal at 127.0.0.1:1 (namespace "default"): connection refused: nothing listens there (ECONNREFUSED): check TEMPORAL_ADDRESS and that the server is running',
    );
  });

  it('says when the namespace does not exist', async () => {
    const err = await failure({ TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: 'no-such-namespace' });
    expect(err.message).toContain('has no namespace "no-such-namespace": check TEMPORAL_NAMESPACE');
  });

  it('fails a TLS connection to a plaintext server with the TLS settings named, and never prints the API key', async () => {
    const err = await failure({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_CONNECT_TIMEOUT_MS: '3000',
    });
    expect(err.message).toMatch(/^cannot connect to Temporal at .*speaks TLS/);
    expect(err.message).not.toContain(API_KEY);
  });
});

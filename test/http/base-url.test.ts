import { describe, expect, it } from 'vitest';
import { AccountingClient } from '../../src/accounting/client.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { assertSecureBaseUrl, isLoopbackHost } from '../../src/http/base-url.js';

const COMPLIANCE_KEY = 'cmp_sk_test_baseUrlRuleKey000000000';
const ACCOUNTING_KEY = 'sk_development_baseUrlRuleKey000000';

const clients = (baseUrl: string, insecureHttpHosts?: string[]) => [
  () => new ComplianceClient({ baseUrl, apiKey: COMPLIANCE_KEY, insecureHttpHosts }),
  () => new AccountingClient({ baseUrl, apiKey: ACCOUNTING_KEY, insecureHttpHosts }),
];

function refusal(make: () => unknown): Error {
  try {
    make();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a refusal');
}

describe('a service base URL', () => {
  it.each(['http://sandbox:4010', 'http://compliance.example.com/api', 'http://10.0.0.5:8080', 'http://[fd00::1]'])(
    'is refused as plain http beyond loopback: %s',
    (baseUrl) => {
      for (const [make, service] of clients(baseUrl).map((m, i) => [m, ['compliance', 'accounting'][i]] as const)) {
        const err = refusal(make);
        expect(err).toBeInstanceOf(ConfigError);
        expect(err.message).toBe(
          `the ${service} base URL is plain http to ${new URL(baseUrl).host}, which is not loopback: its key would ` +
            `travel in clear. Use https, or add ${new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1')} to ` +
            'ALLOW_INSECURE_HTTP (comma-separated hosts) if the network in between is private',
        );
        expect(err.message).not.toContain('baseUrlRuleKey');
      }
    },
  );

  it('never shows credentials written into the URL', () => {
    const err = refusal(() => assertSecureBaseUrl('compliance', 'http://user:hunter2@books.example.com/v1'));
    expect(err.message).toMatch(/plain http to books\.example\.com,/);
    expect(err.message).not.toContain('hunter2');
  });

  it.each([
    'https://compliance.example.com',
    'https://sandbox:4010',
    'http://127.0.0.1:4010',
    'http://127.8.9.10',
    'http://localhost:4010',
    'http://api.localhost',
    'http://[::1]:4010',
  ])('is accepted when https or loopback: %s', async (baseUrl) => {
    for (const make of clients(baseUrl)) await (make() as { close(): Promise<void> }).close();
  });

  it('is accepted as plain http to a host the opt-in names, and to no other', async () => {
    for (const make of clients('http://sandbox:4010', ['books.internal', 'Sandbox'])) {
      await (make() as { close(): Promise<void> }).close();
    }
    for (const make of clients('http://sandbox.example.com:4010', ['sandbox'])) {
      expect(refusal(make).message).toMatch(/add sandbox\.example\.com to ALLOW_INSECURE_HTTP/);
    }
  });

  it('refuses a scheme other than http(s), even to a host the opt-in names', () => {
    expect(
      refusal(() => assertSecureBaseUrl('accounting', 'ftp://books.example.com', ['books.example.com'])).message,
    ).toBe('the accounting base URL must be http(s), got ftp');
  });

  it('ALLOW_INSECURE_HTTP reaches both services from the environment', async () => {
    const env = {
      COMPLIANCE_BASE_URL: 'http://sandbox:4010',
      COMPLIANCE_API_KEY: COMPLIANCE_KEY,
      ACCOUNTING_BASE_URL: 'http://sandbox:4020',
      ACCOUNTING_API_KEY: ACCOUNTING_KEY,
    };
    const strict = loadConfig(env);
    expect(() => new ComplianceClient(strict.compliance!)).toThrow(/add sandbox to ALLOW_INSECURE_HTTP/);
    expect(() => new AccountingClient(strict.accounting!)).toThrow(/add sandbox to ALLOW_INSECURE_HTTP/);

    const open = loadConfig({ ...env, ALLOW_INSECURE_HTTP: ' sandbox, books.internal ' });
    expect(open.compliance?.insecureHttpHosts).toEqual(['sandbox', 'books.internal']);
    await new ComplianceClient(open.compliance!).close();
    await new AccountingClient(open.accounting!).close();
    expect(() => loadConfig({ ...env, ALLOW_INSECURE_HTTP: '1' })).toThrow(
      'ALLOW_INSECURE_HTTP: must name the hosts plain http may reach (e.g. sandbox), not a switch',
    );
  });
});

describe('isLoopbackHost', () => {
  it('knows the loopback addresses in every spelling, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.255.255.254', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['localhost', 'LOCALHOST.', 'app.localhost']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '128.0.0.1', '10.0.0.1', 'localhost.example.com', 'sandbox']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

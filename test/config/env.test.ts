import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { CredentialFormatError, assertCredential } from '../../src/config/credentials.js';

const complianceKey = 'cmp_sk_test_' + 'a1b2c3d4e5f6g7h8i9j0';
const accountingKey = 'sk_development_' + 'k1l2m3n4o5p6q7r8';
const clientSecret = 'cs_' + 'S3cr3tS3cr3tS3cr3tXYZ';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

describe('loadConfig', () => {
  it('leaves both services unconfigured, the embedded sandbox not asked for, when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      compliance: undefined,
      accounting: undefined,
      logLevel: 'info',
      embeddedSandbox: false,
    });
  });

  it('asks for the embedded sandbox only with SANDBOX=embedded', () => {
    expect(loadConfig({ SANDBOX: 'embedded' }).embeddedSandbox).toBe(true);
    expect(loadConfig({ SANDBOX: 'off' }).embeddedSandbox).toBe(false);
    expect(messageOf(() => loadConfig({ SANDBOX: 'true' }))).toBe('SANDBOX: must be "embedded" or "off"');
  });

  it('reads a full real-service configuration', () => {
    const config = loadConfig({
      COMPLIANCE_BASE_URL: 'https://compliance.example.com',
      COMPLIANCE_API_KEY: complianceKey,
      COMPLIANCE_BUSINESS_ID: 'biz_1',
      ACCOUNTING_BASE_URL: 'https://accounting.example.com',
      ACCOUNTING_API_KEY: accountingKey,
      ACCOUNTING_CLIENT_SECRET: clientSecret,
      LOG_LEVEL: 'debug',
    });
    expect(config.compliance).toMatchObject({
      baseUrl: 'https://compliance.example.com',
      businessId: 'biz_1',
      timeoutMs: 30000,
      allowLoopbackCallbacks: false,
    });
    expect(config.accounting).toMatchObject({ signRequests: true, signQuery: false, clientSecret });
    expect(config.logLevel).toBe('debug');
  });

  it('refuses half a configuration instead of silently using the sandbox', () => {
    expect(messageOf(() => loadConfig({ COMPLIANCE_BASE_URL: 'https://x.example' }))).toMatch(
      /COMPLIANCE_API_KEY is not set/,
    );
    expect(messageOf(() => loadConfig({ ACCOUNTING_API_KEY: accountingKey }))).toMatch(
      /ACCOUNTING_BASE_URL is not set/,
    );
  });

  it('names the variable of a malformed key and never prints it', () => {
    const secret = 'cmp_sk_prod_' + 'verysecretvalue123456';
    const message = messageOf(() =>
      loadConfig({ COMPLIANCE_BASE_URL: 'https://x.example', COMPLIANCE_API_KEY: secret }),
    );
    expect(message).toContain('COMPLIANCE_API_KEY');
    expect(message).not.toContain('verysecretvalue');
  });

  it('rejects bad URLs, timeouts and flags with the variable name', () => {
    const base = { COMPLIANCE_API_KEY: complianceKey };
    expect(messageOf(() => loadConfig({ ...base, COMPLIANCE_BASE_URL: 'ftp://x' }))).toMatch(/^COMPLIANCE_BASE_URL/);
    expect(
      messageOf(() => loadConfig({ ...base, COMPLIANCE_BASE_URL: 'https://x', COMPLIANCE_TIMEOUT_MS: 'soon' })),
    ).toMatch(/^COMPLIANCE_TIMEOUT_MS/);
    expect(messageOf(() => loadConfig({ LOG_LEVEL: 'loud' }))).toMatch(/^LOG_LEVEL/);
  });

  it('requires a client secret when signing is asked for', () => {
    expect(() =>
      loadConfig({
        ACCOUNTING_BASE_URL: 'https://a.example',
        ACCOUNTING_API_KEY: accountingKey,
        ACCOUNTING_SIGN_REQUESTS: 'true',
      }),
    ).toThrow(ConfigError);
  });

  it('keeps signing on whenever a client secret is configured', () => {
    const accounting = {
      ACCOUNTING_BASE_URL: 'https://a.example',
      ACCOUNTING_API_KEY: accountingKey,
      ACCOUNTING_CLIENT_SECRET: clientSecret,
    };
    expect(loadConfig(accounting).accounting?.signRequests).toBe(true);
    const refused = messageOf(() => loadConfig({ ...accounting, ACCOUNTING_SIGN_REQUESTS: 'false' }));
    expect(refused).toMatch(/^ACCOUNTING_SIGN_REQUESTS is false but ACCOUNTING_CLIENT_SECRET is set/);
    expect(refused).not.toContain(clientSecret);
  });
});

describe('credentials', () => {
  it('accepts each documented form', () => {
    expect(assertCredential('complianceApiKey', 'K', complianceKey)).toBe(complianceKey);
    expect(assertCredential('complianceApiKey', 'K', 'cmp_sk_live_' + 'x'.repeat(16))).toBeTruthy();
    expect(assertCredential('accountingApiKey', 'K', 'sk_' + 'production_' + 'y'.repeat(16))).toBeTruthy();
    expect(assertCredential('accountingClientSecret', 'K', clientSecret)).toBeTruthy();
    expect(assertCredential('accountingClientId', 'K', 'client_abcd')).toBeTruthy();
    expect(assertCredential('accountingWebhookSecret', 'K', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBeTruthy();
    expect(
      assertCredential('accountingWebhookSecret', 'K', 'whsec_development_' + 'QUJDREVGR0hJSktMTU5PUA=='),
    ).toBeTruthy();
  });

  it('refuses wrong prefixes and short tails without echoing them', () => {
    for (const [kind, value] of [
      ['complianceApiKey', 'sk_development_' + 'z'.repeat(20)],
      ['accountingApiKey', 'cmp_sk_test_' + 'z'.repeat(20)],
      ['accountingClientSecret', 'cs_short'],
      ['accountingWebhookSecret', 'whsec_not base64!'],
    ] as const) {
      const err = (() => {
        try {
          assertCredential(kind, 'SETTING', value);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(CredentialFormatError);
      expect((err as Error).message).toContain('SETTING');
      expect((err as Error).message).not.toContain(value);
    }
  });
});

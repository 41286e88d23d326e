import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { PayloadKeyConfigError } from '../../src/codec/keys.js';
import { loadWorkerSettings } from '../../src/worker/settings.js';

const key = `k1:${randomBytes(32).toString('base64')}`;
const services = {
  COMPLIANCE_BASE_URL: 'https://compliance.example',
  COMPLIANCE_API_KEY: 'cmp_sk_test_settings_fixture_not_a_key',
  ACCOUNTING_BASE_URL: 'https://accounting.example',
  ACCOUNTING_API_KEY: 'sk_development_settings_fixture_not_a_key',
};

describe('loadWorkerSettings', () => {
  it('reads every section of a worker process from one environment', () => {
    const settings = loadWorkerSettings({
      ...services,
      PAYLOAD_KEYS: key,
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_NAMESPACE: 'etims',
      COMPLIANCE_REQUESTS_PER_MINUTE: '60',
      ACCOUNTING_ACTIVITIES_PER_SECOND: '0.5',
      PURCHASES_SINK: 'file:/tmp/purchases.ndjson',
      RECONCILE_LINKS: 'biz_a=comp_1',
      RECONCILE_EVERY: '12h',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
      LOG_LEVEL: 'warn',
    });
    expect(settings.services.compliance?.baseUrl).toBe('https://compliance.example');
    expect(settings.services.logLevel).toBe('warn');
    expect(settings.temporal).toMatchObject({ address: 'temporal.internal:7233', namespace: 'etims' });
    expect(settings.activitiesPerSecond).toEqual({ accounting: 0.5 });
    expect(settings.tenants.compliance[0]?.requestsPerMinute).toBe(60);
    expect(settings.purchases.sink).toEqual({ kind: 'file', path: '/tmp/purchases.ndjson' });
    expect(settings.reconciliation).toEqual({ links: [{ businessId: 'biz_a', companyId: 'comp_1' }], every: '12h' });
    expect(settings.encryption.encrypted).toBe(true);
    expect(settings.tracing?.url).toBe('http://otel:4318/v1/traces');
  });

  it('defaults what is unset: the sync and reconciliation off, no tracing, the service budget', () => {
    const settings = loadWorkerSettings({ ...services, PAYLOAD_ENCRYPTION: 'off' });
    expect(settings.purchases.sink).toBeUndefined();
    expect(settings.reconciliation.links).toEqual([]);
    expect(settings.tracing).toBeUndefined();
    expect(settings.activitiesPerSecond).toEqual({ accounting: 2 });
    expect(settings.encryption.encrypted).toBe(false);
  });

  it('stops at the first bad value, naming the variable and never echoing a secret', () => {
    const secret = 'not-a-valid-secret-value-0123456789';
    expect(() => loadWorkerSettings({ ...services, PAYLOAD_KEYS: key, CALLBACK_SECRET: 'short' })).toThrow(
      /^CALLBACK_SECRET: /,
    );
    expect(() => loadWorkerSettings({ ...services, PAYLOAD_KEYS: key, RECONCILE_EVERY: 'daily' })).toThrow(ConfigError);
    expect(() => loadWorkerSettings({ ...services, PAYLOAD_KEYS: key, ACCOUNTING_ACTIVITIES_PER_SECOND: '0' })).toThrow(
      /^ACCOUNTING_ACTIVITIES_PER_SECOND: /,
    );
    let message = '';
    try {
      loadWorkerSettings({ ...services, COMPLIANCE_API_KEY: secret, PAYLOAD_KEYS: key });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^COMPLIANCE_API_KEY/);
    expect(message).not.toContain(secret);
  });

  it('requires payload keys unless encryption is turned off explicitly', () => {
    expect(() => loadWorkerSettings(services)).toThrow(PayloadKeyConfigError);
    expect(() => loadWorkerSettings({ ...services, PAYLOAD_KEYS: 'k1:not-base64' })).toThrow(PayloadKeyConfigError);
  });
});

describe('loadWorkerSettings without services', () => {
  it('names the services first, before any other setting a worker would need', () => {
    expect(() => loadWorkerSettings({})).toThrow(
      /^COMPLIANCE_BASE_URL and COMPLIANCE_API_KEY, ACCOUNTING_BASE_URL and ACCOUNTING_API_KEY are not set/,
    );
    expect(loadWorkerSettings({ SANDBOX: 'embedded', PAYLOAD_ENCRYPTION: 'off' }).services.embeddedSandbox).toBe(true);
  });
});

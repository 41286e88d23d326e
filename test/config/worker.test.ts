import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { loadTemporalSettings } from '../../src/temporal/connection.js';
import { assertServicesConfigured } from '../../src/services/endpoints.js';

describe('the Temporal connection of a worker', () => {
  it('comes from envconfig: address, namespace, API key', () => {
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: 'eu-west-1.aws.api.temporal.io:7233',
      TEMPORAL_NAMESPACE: 'sales.a1b2c',
      TEMPORAL_API_KEY: 'k'.repeat(40),
    });
    expect(settings).toMatchObject({
      address: 'eu-west-1.aws.api.temporal.io:7233',
      namespace: 'sales.a1b2c',
      tls: true,
    });
  });

  it('leaves the address to the local stack when nothing names a server', () => {
    const settings = loadTemporalSettings({ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' });
    expect(settings.address).toBeUndefined();
    expect(settings.namespace).toBe('default');
  });

  it('is not part of the worker config', () => {
    expect(loadWorkerConfig({ TEMPORAL_ADDRESS: 'x:7233' })).not.toHaveProperty('temporal');
  });
});

describe('assertServicesConfigured', () => {
  const compliance = {
    baseUrl: 'https://c.example',
    apiKey: 'x',
    businessId: undefined,
    timeoutMs: 1000,
    allowLoopbackCallbacks: false,
  };
  it('refuses a missing service, naming its variables, unless the embedded sandbox is asked for', () => {
    const config = { compliance, accounting: undefined, logLevel: 'info' };
    expect(() => assertServicesConfigured(config)).toThrow(ConfigError);
    expect(() => assertServicesConfigured(config)).toThrow(
      /^ACCOUNTING_BASE_URL and ACCOUNTING_API_KEY are not set: .*SANDBOX=embedded/,
    );
    expect(() => assertServicesConfigured({ ...config, embeddedSandbox: true })).not.toThrow();
  });
});

describe('OPERATOR_WORK_COUNT_INTERVAL', () => {
  it('is a duration from 5 s to 10 minutes, unset by default (the count runs every minute)', () => {
    expect(loadWorkerConfig({}).operatorWorkCountIntervalMs).toBeUndefined();
    expect(loadWorkerConfig({ OPERATOR_WORK_COUNT_INTERVAL: '15s' }).operatorWorkCountIntervalMs).toBe(15_000);
    expect(() => loadWorkerConfig({ OPERATOR_WORK_COUNT_INTERVAL: '1s' })).toThrow(
      /OPERATOR_WORK_COUNT_INTERVAL: must be a duration from 5s to 10m/,
    );
    expect(() => loadWorkerConfig({ OPERATOR_WORK_COUNT_INTERVAL: '60' })).toThrow(/with its unit/);
  });
});

describe('WORKFLOW_TASK_QUEUE', () => {
  it('names the fleet’s own workflow queue (default: the sales queue), refused with a clear error when unusable', () => {
    expect(loadWorkerConfig({}).workflowTaskQueue).toBeUndefined();
    expect(loadWorkerConfig({ WORKFLOW_TASK_QUEUE: 'sales-2' }).workflowTaskQueue).toBe('sales-2');
    expect(() => loadWorkerConfig({ WORKFLOW_TASK_QUEUE: 'sales 2' })).toThrow(
      /WORKFLOW_TASK_QUEUE: must be letters, digits/,
    );
  });
});

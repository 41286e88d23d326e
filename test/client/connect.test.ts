import { describe, expect, inject, it } from 'vitest';
import { connectSalesClient, TemporalConnectionError } from '../../src/client/index.js';
import { ConfigError } from '../../src/config/env.js';

describe('connectSalesClient', () => {
  it('connects from the environment the ecosystem way (envconfig variables)', async () => {
    const connected = await connectSalesClient({
      env: { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace') },
      taskQueue: 'sales-elsewhere',
    });
    try {
      expect(connected.settings.namespace).toBe(inject('temporalNamespace'));
      expect(connected.client.options.namespace).toBe(inject('temporalNamespace'));
    } finally {
      await connected.close();
    }
  });

  it('names an unreachable Temporal and a bad setting', async () => {
    await expect(connectSalesClient({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } })).rejects.toThrow(TemporalConnectionError);
    await expect(connectSalesClient({ env: { TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/key.pem' } })).rejects.toThrow(ConfigError);
  });
});

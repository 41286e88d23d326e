import { describe, expect, inject, it } from 'vitest';
import { connectSalesClient, TemporalConnectionError } from '../../src/client/index.js';
import { ConfigError } from '../../src/config/env.js';

const PAYLOAD_KEYS = 'test-1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';

describe('connectSalesClient', () => {
  it('connects from the environment the ecosystem way (envconfig variables)', async () => {
    const connected = await connectSalesClient({
      env: {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        PAYLOAD_KEYS,
      },
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
    await expect(connectSalesClient({ env: { TEMPORAL_ADDRESS: '127.0.0.1:1', PAYLOAD_KEYS } })).rejects.toThrow(
      TemporalConnectionError,
    );
    await expect(
      connectSalesClient({ env: { TEMPORAL_TLS_CLIENT_KEY_PATH: '/nonexistent/key.pem', PAYLOAD_KEYS } }),
    ).rejects.toThrow(ConfigError);
  });

  it('encrypts what it sends: no payload key is a named configuration error, never a plaintext fallback', async () => {
    const env = { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace') };
    await expect(connectSalesClient({ env })).rejects.toThrow(ConfigError);
    await expect(connectSalesClient({ env })).rejects.toThrow(/PAYLOAD_KEYS/);
    const plain = await connectSalesClient({ env: { ...env, PAYLOAD_ENCRYPTION: 'off' } });
    await plain.close();
  });
});

import { Client } from '@temporalio/client';
import { payloadEncryptionFromEnv } from '../codec/data-converter.js';
import { connectClient, loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { SalesClient, type SalesClientOptions } from './sales-client.js';
import type { Env } from '../config/env.js';

export interface ConnectedSalesClient {
  sales: SalesClient;
  client: Client;
  settings: TemporalSettings;
  close(): Promise<void>;
}

/**
 * A SalesClient for another service, connected the ecosystem's way: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS* and temporal.toml profiles (TEMPORAL_PROFILE), as @temporalio/envconfig
 * reads them; or explicit `settings`. Payloads are encrypted with PAYLOAD_KEYS / PAYLOAD_KEYS_FILE (required unless
 * PAYLOAD_ENCRYPTION=off). Throws ConfigError (a setting or key unusable, named) or
 * TemporalConnectionError (unreachable, credentials refused, no such namespace), never with a secret.
 */
export async function connectSalesClient(
  options: SalesClientOptions & { env?: Env; settings?: TemporalSettings } = {},
): Promise<ConnectedSalesClient> {
  const env = options.env ?? process.env;
  const settings = options.settings ?? loadTemporalSettings(env);
  // The same keys as the workers': a start carries customer data, so it is encrypted before it leaves.
  const { dataConverter } = payloadEncryptionFromEnv(env);
  const connection = await connectClient(settings);
  // Traced when the process has called installTracing() (src/temporal/tracing.ts); the sales CLI does.
  const client = new Client({ connection, namespace: settings.namespace, dataConverter, plugins: tracingPlugins() });
  const sales = new SalesClient(client, options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue });
  return { sales, client, settings, close: () => connection.close() };
}

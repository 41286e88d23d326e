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

/** Connected as the Temporal CLI connects (envconfig), payloads encrypted with the workers' keys. */
export async function connectSalesClient(
  options: SalesClientOptions & { env?: Env; settings?: TemporalSettings } = {},
): Promise<ConnectedSalesClient> {
  const env = options.env ?? process.env;
  const settings = options.settings ?? loadTemporalSettings(env);
  const { dataConverter } = payloadEncryptionFromEnv(env);
  const connection = await connectClient(settings);
  const client = new Client({ connection, namespace: settings.namespace, dataConverter, plugins: tracingPlugins() });
  return { sales: new SalesClient(client, options), client, settings, close: () => connection.close() };
}

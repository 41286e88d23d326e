import { Client } from '@temporalio/client';
import { connectClient, loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { SalesClient, type SalesClientOptions } from './sales-client.js';

export interface ConnectedSalesClient {
  sales: SalesClient;
  client: Client;
  settings: TemporalSettings;
  close(): Promise<void>;
}

/**
 * A SalesClient for another service, connected the ecosystem's way: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS* and temporal.toml profiles (TEMPORAL_PROFILE), as @temporalio/envconfig
 * reads them; or explicit `settings`. Throws ConfigError (a setting unusable, named) or
 * TemporalConnectionError (unreachable, credentials refused, no such namespace), never with a secret.
 */
export async function connectSalesClient(
  options: SalesClientOptions & { env?: Record<string, string | undefined>; settings?: TemporalSettings } = {},
): Promise<ConnectedSalesClient> {
  const settings = options.settings ?? loadTemporalSettings(options.env ?? process.env);
  const connection = await connectClient(settings);
  const client = new Client({ connection, namespace: settings.namespace });
  const sales = new SalesClient(client, options.taskQueue === undefined ? {} : { taskQueue: options.taskQueue });
  return { sales, client, settings, close: () => connection.close() };
}

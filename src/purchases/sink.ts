/**
 * Opens the sink the configuration names. The sink interface and its error live in event-sink.ts, so that the two
 * sinks do not import this factory back.
 */
import type { PurchasesSinkConfig } from '../config/purchases.js';
import type { PurchaseEventSink } from './event-sink.js';
import { openNdjsonSink } from './ndjson-sink.js';
import { WebhookSink } from './webhook-sink.js';

/** The sink the configuration names (see src/config/purchases.ts), opened; undefined when none is configured. */
export async function createSink(config: PurchasesSinkConfig | undefined): Promise<PurchaseEventSink | undefined> {
  if (config === undefined) return undefined;
  if (config.kind === 'file') return openNdjsonSink(config.path);
  return new WebhookSink({ url: config.url, secret: config.webhookSecret });
}

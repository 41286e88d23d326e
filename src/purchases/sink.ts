// The sinks do not import this factory back: their interface is event-sink.ts.
import type { PurchasesSinkConfig } from '../config/purchases.js';
import type { PurchaseEventSink } from './event-sink.js';
import { openNdjsonSink } from './ndjson-sink.js';
import { WebhookSink } from './webhook-sink.js';

export async function createSink(config: PurchasesSinkConfig | undefined): Promise<PurchaseEventSink | undefined> {
  if (config === undefined) return undefined;
  if (config.kind === 'file') return openNdjsonSink(config.path);
  return new WebhookSink({ url: config.url, secret: config.webhookSecret });
}

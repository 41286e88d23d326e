/**
 * Where supplier-invoice events go: the business's own system. A sink delivers one event at a time and either
 * takes it (resolves) or says whether trying again may help (`SinkDeliveryError.retryable`). Delivery is at
 * least once; the event id is stable, so receivers de-duplicate on it (the NDJSON sink does so itself).
 */
import { loadPurchasesConfig, type PurchasesSinkConfig } from '../config/purchases.js';
import type { PurchaseEvent } from '../contracts/purchases-sync.js';
import { openNdjsonSink } from './ndjson-sink.js';
import { WebhookSink } from './webhook-sink.js';

export type { PurchaseEvent };

export interface DeliverOptions {
  /** Aborts an in-flight delivery (the activity was cancelled or its worker is shutting down). */
  signal?: AbortSignal;
}

export interface PurchaseEventSink {
  /** Resolves once the event is delivered (or was already); throws SinkDeliveryError otherwise. */
  deliver(event: PurchaseEvent, options?: DeliverOptions): Promise<void>;
  /** For logs: where events go, without any secret. */
  readonly description: string;
  close(): Promise<void>;
}

export class SinkDeliveryError extends Error {
  override readonly name = 'SinkDeliveryError';

  constructor(
    message: string,
    /** Whether another attempt may succeed (5xx, 408, 429, network); false for other 4xx. */
    readonly retryable: boolean,
    /** The receiver's HTTP status, when it answered. */
    readonly status?: number,
    /** Seconds the receiver asked to wait (Retry-After), when it did. */
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The sink the configuration names (see src/config/purchases.ts), opened; undefined when none is configured. */
export async function createSink(config: PurchasesSinkConfig | undefined): Promise<PurchaseEventSink | undefined> {
  if (config === undefined) return undefined;
  if (config.kind === 'file') return openNdjsonSink(config.path);
  return new WebhookSink({ url: config.url, secret: config.webhookSecret });
}

/** The sink of PURCHASES_SINK / PURCHASES_WEBHOOK_SECRET; undefined when PURCHASES_SINK is unset. Throws ConfigError. */
export async function createSinkFromEnv(env: Record<string, string | undefined> = process.env): Promise<PurchaseEventSink | undefined> {
  return createSink(loadPurchasesConfig(env).sink);
}

/**
 * Where supplier-invoice events go: the business's own system. A sink delivers one event at a time and either
 * takes it (resolves) or says whether trying again may help (`SinkDeliveryError.retryable`). Delivery is at
 * least once; the event id is stable, so receivers de-duplicate on it (the NDJSON sink does so itself).
 *
 * What every sink implements, apart from the factory (sink.ts) that opens one: the sinks import this file, the
 * factory imports the sinks, and nothing imports back.
 */
import type { PurchaseEvent } from '../contracts/purchases-sync.js';

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

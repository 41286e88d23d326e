// Delivery is at least once: the event id is stable, so receivers de-duplicate on it (docs/purchases-sync.md).
import type { PurchaseEvent } from '../contracts/purchases-sync.js';

export type { PurchaseEvent };

export interface PurchaseEventSink {
  deliver(event: PurchaseEvent, options?: { signal?: AbortSignal }): Promise<void>;
  /** For logs: where events go, without any secret. */
  readonly description: string;
  close(): Promise<void>;
}

export class SinkDeliveryError extends Error {
  override readonly name = 'SinkDeliveryError';

  readonly status: number | undefined;
  /** Retry-After, when the receiver asked. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    message: string,
    /** Whether another attempt may succeed (5xx, 408, 429, network); false for other 4xx. */
    readonly retryable: boolean,
    { cause, ...answer }: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.status = answer.status;
    this.retryAfterSeconds = answer.retryAfterSeconds;
  }
}

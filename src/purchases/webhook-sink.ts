// Signed the Standard Webhooks way, as the project verifies inbound webhooks (docs/purchases-sync.md).
import { Agent, request } from 'undici';
import { webhookHeaders } from '../accounting/webhooks.js';
import { parseRetryAfter } from '../http/rate-limit.js';
import { SinkDeliveryError, type DeliverOptions, type PurchaseEvent, type PurchaseEventSink } from './event-sink.js';

interface WebhookSinkOptions {
  url: string;
  /** `whsec_…`; never logged, never part of an error. */
  secret: string;
  /** Per delivery (default 10 s). */
  timeoutMs?: number;
  /** Unix seconds for webhook-timestamp (default the clock). */
  now?: () => number;
}

const RETRYABLE_4XX = new Set([408, 429]);

export class WebhookSink implements PurchaseEventSink {
  readonly description: string;
  private readonly url: URL;
  readonly #secret: string;
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(options: WebhookSinkOptions) {
    this.url = new URL(options.url);
    this.#secret = options.secret;
    this.description = `${this.url.origin}${this.url.pathname}`;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: 10_000 } });
  }

  async deliver(event: PurchaseEvent, options: DeliverOptions = {}): Promise<void> {
    const rawBody = JSON.stringify(event);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'etims-temporal-worker (purchases sync)',
      ...webhookHeaders({ secret: this.#secret, id: event.id, timestamp: this.now(), rawBody }),
    };
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let status: number;
    let retryAfter: number | undefined;
    try {
      const init = { method: 'POST', headers, body: rawBody, signal, dispatcher: this.agent } as const;
      const response = await request(this.url, init);
      status = response.statusCode;
      retryAfter = parseRetryAfter(response.headers);
      // Drain the body so the socket goes back to the pool; its content does not matter.
      await response.body.dump();
    } catch (err) {
      const why = timeout.aborted
        ? `no answer in ${this.timeoutMs} ms`
        : err instanceof Error
          ? err.message
          : String(err);
      throw new SinkDeliveryError(`${this.description}: delivery of ${event.id} failed: ${why}`, true, { cause: err });
    }
    if (status >= 200 && status < 300) return;
    // A redirect is refused like a 4xx: the configured URL is wrong, and a signed body is not re-sent elsewhere.
    const retryable = status >= 500 || RETRYABLE_4XX.has(status);
    const message = `${this.description} answered ${status} to ${event.id}`;
    throw new SinkDeliveryError(message, retryable, { status, retryAfterSeconds: retryAfter });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { Timers } from '../compliance/timers.js';
import type { CallbackFaultPlan, FaultEngine } from '../shared/faults.js';
import type { AccountingApplication, WebhooksFixture } from './fixture.js';
import type { PaymentStatusChange } from './state.js';

const WEBHOOK_USER_AGENT = 'accounting-webhooks/1.0';
export const BILL_PAYMENT_EVENT = 'bill_payment.sync_status_changed';

export type WebhookAttemptKind = 'scheduled' | 'duplicate' | 'out-of-order';

/** One send of a webhook, as the inspection API shows it. */
export interface WebhookAttempt {
  /** The `webhook-id`: the same on every attempt and copy of one delivery. */
  deliveryId: string;
  type: string;
  applicationId: string;
  syncBatchId: string;
  billPaymentId: string;
  /** The status the event reports. */
  status: string;
  attempt: number;
  kind: WebhookAttemptKind;
  at: string;
  /** HTTP status of the receiver's answer; null when none came. */
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

interface Delivery {
  id: string;
  change: PaymentStatusChange;
  url: string;
  secret: string;
  body: string;
  plan: CallbackFaultPlan;
  startedAt: number;
  attempts: number;
  held: boolean;
  cancelHold: (() => void) | undefined;
  sent: boolean;
  resendAfter: Delivery | undefined;
}

/**
 * The sandbox's own Standard Webhooks signature (A14), written independently of the project's verifier
 * (src/accounting/webhooks.ts) so that a mistake shared by both cannot make them agree.
 */
function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_(development_|production_)?/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`;
}

/**
 * Delivers signed webhooks for bill-payment sync status changes (A20) to each application's webhook URL:
 * one delivery per change, attempted on the fixture's schedule until a 2xx, each attempt signed afresh
 * with its own timestamp. The fault engine's callback kinds (rules naming `service: accounting`, or no
 * service) add duplicate sends, a delay, or out-of-order sends, as for the compliance callbacks.
 */
export class WebhookDispatcher {
  private readonly agent = new Agent({ keepAliveTimeout: 1_000, connections: 8 });
  private readonly closing = new AbortController();
  private readonly timers = new Timers();
  private endpoints = new Map<string, string>();
  /** The latest delivery per bill payment, for out-of-order sends. */
  private readonly latest = new Map<string, Delivery>();
  private deliveries: Delivery[] = [];
  private log: WebhookAttempt[] = [];
  private generation = 0;

  constructor(
    private readonly options: {
      config: WebhooksFixture;
      applications: readonly AccountingApplication[];
      faults: FaultEngine;
      now: () => number;
    },
  ) {
    this.restoreEndpoints();
  }

  /** Webhook URL per application (null: none). */
  endpointList(): Array<{ applicationId: string; url: string | null }> {
    return this.options.applications.map((a) => ({ applicationId: a.id, url: this.endpoints.get(a.id) ?? null }));
  }

  hasApplication(applicationId: string): boolean {
    return this.options.applications.some((a) => a.id === applicationId);
  }

  setEndpoint(applicationId: string, url: string | null): void {
    if (url === null) this.endpoints.delete(applicationId);
    else this.endpoints.set(applicationId, url);
  }

  statusChanged(change: PaymentStatusChange): void {
    const url = this.endpoints.get(change.applicationId);
    const secret = this.options.applications.find((a) => a.id === change.applicationId)?.webhookSecret;
    if (url === undefined || secret === undefined) return;

    const plan = this.options.faults.callbackPlan('accounting');
    const now = this.options.now();
    const previous = this.latest.get(change.billPaymentId);
    const holdBack = plan.outOfOrder && !(previous?.sent ?? false);
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const { applicationId: _applicationId, ...data } = change;
    const delivery: Delivery = {
      id,
      change,
      url,
      secret,
      body: JSON.stringify({ type: BILL_PAYMENT_EVENT, timestamp: new Date(now).toISOString(), data }),
      plan,
      startedAt: now,
      attempts: 0,
      held: holdBack,
      cancelHold: undefined,
      sent: false,
      resendAfter: plan.outOfOrder && previous?.sent ? previous : undefined,
    };
    this.latest.set(change.billPaymentId, delivery);
    this.deliveries.push(delivery);
    if (holdBack) {
      delivery.cancelHold = this.timers.after(this.options.config.outOfOrderHoldMs, () => this.release(delivery));
    } else {
      this.schedule(delivery, 0);
    }
  }

  attempts(filter: { syncBatchId?: string; billPaymentId?: string } = {}): WebhookAttempt[] {
    return this.log
      .filter((a) => (filter.syncBatchId === undefined || a.syncBatchId === filter.syncBatchId) && (filter.billPaymentId === undefined || a.billPaymentId === filter.billPaymentId))
      .map((a) => ({ ...a }));
  }

  /** Back to the fixture: endpoints restored, deliveries and their timers dropped. */
  reset(): void {
    this.generation += 1;
    this.timers.clear();
    this.latest.clear();
    this.deliveries = [];
    this.log = [];
    this.restoreEndpoints();
  }

  async close(): Promise<void> {
    this.generation += 1;
    this.timers.close();
    this.closing.abort();
    await this.agent.destroy();
  }

  private restoreEndpoints(): void {
    this.endpoints = new Map(this.options.applications.flatMap((a) => (a.webhookUrl ? [[a.id, a.webhookUrl] as const] : [])));
  }

  private offset(plan: CallbackFaultPlan, index: number): number {
    return plan.delayMs + (this.options.config.retryScheduleMs[index] ?? 0);
  }

  private schedule(delivery: Delivery, index: number): void {
    const due = delivery.startedAt + this.offset(delivery.plan, index);
    this.timers.after(due - this.options.now(), () => void this.attempt(delivery, index));
  }

  private release(delivery: Delivery): void {
    if (!delivery.held) return;
    delivery.held = false;
    delivery.cancelHold?.();
    delivery.startedAt = this.options.now() - delivery.plan.delayMs;
    this.schedule(delivery, 0);
  }

  private async attempt(delivery: Delivery, index: number): Promise<void> {
    const generation = this.generation;
    const attempt = index + 1;
    delivery.attempts = attempt;
    const delivered = await this.send(delivery, attempt, 'scheduled');
    if (generation !== this.generation) return;
    const firstSend = !delivery.sent;
    delivery.sent = true;
    if (firstSend) {
      if (delivery.resendAfter) await this.send(delivery.resendAfter, Math.max(1, delivery.resendAfter.attempts), 'out-of-order');
      for (const other of this.deliveries) {
        if (other !== delivery && other.held && other.change.billPaymentId === delivery.change.billPaymentId) this.release(other);
      }
    }
    if (delivered) {
      for (let copy = 0; copy < delivery.plan.duplicates && generation === this.generation; copy++) {
        await this.send(delivery, attempt, 'duplicate');
      }
      return;
    }
    if (index + 1 < this.options.config.retryScheduleMs.length) this.schedule(delivery, index + 1);
  }

  /** One signed POST; true on a 2xx. */
  private async send(delivery: Delivery, attempt: number, kind: WebhookAttemptKind): Promise<boolean> {
    const started = this.options.now();
    const timestamp = Math.floor(started / 1000);
    let responseStatus: number | null = null;
    let error: string | null = null;
    const timeout = AbortSignal.timeout(this.options.config.timeoutMs);
    try {
      const response = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.any([timeout, this.closing.signal]),
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': standardWebhookSignature(delivery.secret, delivery.id, timestamp, delivery.body),
        },
        body: delivery.body,
      });
      responseStatus = response.statusCode;
      await response.body.dump();
      if (responseStatus < 200 || responseStatus >= 300) error = `HTTP ${responseStatus}`;
    } catch (err) {
      error = timeout.aborted ? `no answer within ${this.options.config.timeoutMs} ms` : `connection failed (${errorCode(err)})`;
    }
    this.log.push({
      deliveryId: delivery.id,
      type: BILL_PAYMENT_EVENT,
      applicationId: delivery.change.applicationId,
      syncBatchId: delivery.change.syncBatchId,
      billPaymentId: delivery.change.billPaymentId,
      status: delivery.change.status,
      attempt,
      kind,
      at: new Date(started).toISOString(),
      responseStatus,
      error,
      durationMs: this.options.now() - started,
    });
    return responseStatus !== null && responseStatus >= 200 && responseStatus < 300;
  }
}

/** The network error's code (ECONNREFUSED, …) without the URL, which may carry a receiver's token. */
function errorCode(err: unknown): string {
  const own = (err as { code?: unknown }).code;
  const cause = ((err as { cause?: { code?: unknown } }).cause ?? {}).code;
  return typeof own === 'string' ? own : typeof cause === 'string' ? cause : err instanceof Error ? err.name : 'unknown';
}

import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Timers } from '../compliance/timers.js';
import { DeliverySchedule, type DeliveryAttemptKind } from '../shared/delivery-schedule.js';
import type { FaultEngine } from '../shared/faults.js';
import type { AccountingApplication, WebhooksFixture } from './fixture.js';
import type { PaymentStatusChange } from './state.js';

const WEBHOOK_USER_AGENT = 'accounting-webhooks/1.0';
export const BILL_PAYMENT_EVENT = 'bill_payment.sync_status_changed';

export type WebhookAttemptKind = DeliveryAttemptKind;

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

/** What one webhook delivery carries: the change and the secret its attempts are signed with. */
interface StatusChange {
  change: PaymentStatusChange;
  secret: string;
}

/**
 * The Standard Webhooks signature (A14), made with the reference library as a real sender would, and not with
 * the project's helper (src/accounting/webhooks.ts): the key handling here is the sandbox's own, so a mistake in
 * the project's cannot make them agree. The key goes in raw: the library itself only strips `whsec_`.
 */
function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_(development_|production_)?/, ''), 'base64');
  return new Webhook(key, { format: 'raw' }).sign(id, new Date(timestampSeconds * 1000), body);
}

/**
 * Delivers signed webhooks for bill-payment sync status changes (A20) to each application's webhook URL:
 * one delivery per change, attempted on the fixture's schedule until a 2xx, each attempt signed afresh
 * with its own timestamp. The fault engine's callback kinds (rules naming `service: accounting`, or no
 * service) add duplicate sends, a delay, or out-of-order sends, as for the compliance callbacks.
 */
export class WebhookDispatcher {
  private readonly timers = new Timers();
  private endpoints = new Map<string, string>();
  /** Deliveries are keyed by bill payment, for out-of-order sends. */
  private readonly schedule: DeliverySchedule<StatusChange, WebhookAttempt>;

  constructor(
    private readonly options: {
      config: WebhooksFixture;
      applications: readonly AccountingApplication[];
      faults: FaultEngine;
      now: () => number;
    },
  ) {
    this.schedule = new DeliverySchedule({
      config: options.config,
      timers: this.timers,
      now: options.now,
      userAgent: WEBHOOK_USER_AGENT,
      headers: (delivery, _attempt, sentAt) => {
        const timestamp = Math.floor(sentAt / 1000);
        return {
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': standardWebhookSignature(delivery.subject.secret, delivery.id, timestamp, delivery.body),
        };
      },
      logEntry: (delivery, attempt, kind, result) => ({
        deliveryId: delivery.id,
        type: BILL_PAYMENT_EVENT,
        applicationId: delivery.subject.change.applicationId,
        syncBatchId: delivery.subject.change.syncBatchId,
        billPaymentId: delivery.subject.change.billPaymentId,
        status: delivery.subject.change.status,
        attempt,
        kind,
        at: result.at,
        responseStatus: result.status,
        error: result.error,
        durationMs: result.durationMs,
      }),
    });
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
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const { applicationId: _applicationId, ...data } = change;
    this.schedule.add({
      id,
      key: change.billPaymentId,
      subject: { change, secret },
      url,
      body: JSON.stringify({ type: BILL_PAYMENT_EVENT, timestamp: new Date(now).toISOString(), data }),
      plan,
      now,
    });
  }

  attempts(filter: { syncBatchId?: string; billPaymentId?: string } = {}): WebhookAttempt[] {
    return this.schedule.attempts(
      (a) =>
        (filter.syncBatchId === undefined || a.syncBatchId === filter.syncBatchId) &&
        (filter.billPaymentId === undefined || a.billPaymentId === filter.billPaymentId),
    );
  }

  /** Back to the fixture: endpoints restored, deliveries and their timers dropped. */
  reset(): void {
    this.timers.clear();
    this.schedule.reset();
    this.restoreEndpoints();
  }

  async close(): Promise<void> {
    this.timers.close();
    await this.schedule.close();
  }

  private restoreEndpoints(): void {
    this.endpoints = new Map(
      this.options.applications.flatMap((a) => (a.webhookUrl ? [[a.id, a.webhookUrl] as const] : [])),
    );
  }
}

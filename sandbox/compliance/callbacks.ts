import { DeliverySchedule, type AttemptOutcome, type Delivery } from '../shared/delivery-schedule.js';
import type { FaultEngine } from '../shared/faults.js';
import type { ComplianceFixture } from './fixture-schema.js';
import type { CallbackAttempt } from './inspection-types.js';
import { newId, snapshot, type CallbackEvent, type CallbackView, type DocumentRecord } from './model.js';
import type { Timers } from './timers.js';

const CALLBACK_USER_AGENT = 'compliance-callbacks/1.0';

/** What one callback delivery carries: the document's outcome. */
interface Outcome {
  record: DocumentRecord;
  event: CallbackEvent;
}

export function emptyCallback(url: string): CallbackView {
  return {
    url,
    status: 'awaiting_outcome',
    event: null,
    attempts: 0,
    lastAttemptAt: null,
    lastResponseStatus: null,
    lastError: null,
    deliveredAt: null,
    nextAttemptAt: null,
  };
}

/**
 * Delivers result callbacks (C8, C45–C47): one delivery per outcome of a document, attempted on the
 * fixture's schedule counted from the outcome until a 2xx; the document's `callback` object follows its
 * latest delivery. Fault plans add duplicate sends, a delay, or out-of-order sends. Every send is logged
 * for the inspection API.
 */
export class CallbackDispatcher {
  /** Deliveries are keyed by document id. */
  private readonly schedule: DeliverySchedule<Outcome, CallbackAttempt>;

  constructor(
    private readonly options: {
      config: ComplianceFixture['callbacks'];
      faults: FaultEngine;
      timers: Timers;
      now: () => number;
    },
  ) {
    this.schedule = new DeliverySchedule({
      config: options.config,
      timers: options.timers,
      now: options.now,
      userAgent: CALLBACK_USER_AGENT,
      headers: (delivery, attempt) => ({ 'x-callback-id': delivery.id, 'x-callback-attempt': String(attempt) }),
      logEntry: (delivery, attempt, kind, result) => ({
        deliveryId: delivery.id,
        documentId: delivery.key,
        event: delivery.subject.event,
        attempt,
        kind,
        at: result.at,
        status: result.status,
        error: result.error,
        durationMs: result.durationMs,
      }),
      onAttempt: (delivery, outcome) => this.followAttempt(delivery, outcome),
    });
  }

  /** The document has reached an outcome (completed or failed); deliver it if it is a new one. */
  outcome(record: DocumentRecord): void {
    const view = record.view;
    if (!view.callback) return;
    const event: CallbackEvent | undefined =
      view.status === 'completed' ? 'sale.completed' : view.status === 'failed' ? 'sale.failed' : undefined;
    if (!event) return;
    if (this.schedule.latest(view.id)?.subject.event === event) return; // a retry that failed again is the same outcome

    const plan = this.options.faults.callbackPlan();
    const now = this.options.now();
    const callback: CallbackView = {
      ...emptyCallback(view.callback.url),
      status: 'pending',
      event,
      nextAttemptAt: new Date(this.schedule.firstDueAt(view.id, plan, now)).toISOString(),
    };
    view.callback = callback; // before the body, whose snapshot shows the pending callback
    const id = newId('evt');
    this.schedule.add({
      id,
      key: view.id,
      subject: { record, event },
      url: callback.url,
      body: JSON.stringify({ id, event, createdAt: new Date(now).toISOString(), data: { sale: snapshot(view) } }),
      plan,
      now,
    });
  }

  /** Attempts made so far, oldest first. */
  attempts(documentId?: string): CallbackAttempt[] {
    return this.schedule.attempts((a) => documentId === undefined || a.documentId === documentId);
  }

  /** Forgets every delivery (the caller clears the timers). */
  reset(): void {
    this.schedule.reset();
  }

  async close(): Promise<void> {
    await this.schedule.close();
  }

  /** The document's `callback` object follows its latest delivery only. */
  private followAttempt(delivery: Delivery<Outcome>, outcome: AttemptOutcome): void {
    const callback = delivery.subject.record.view.callback;
    if (!this.schedule.isCurrent(delivery) || !callback) return;
    callback.attempts = outcome.attempt;
    callback.lastAttemptAt = outcome.at;
    callback.lastResponseStatus = outcome.status;
    callback.lastError = outcome.error;
    if (outcome.delivered) {
      callback.status = 'delivered';
      callback.deliveredAt = outcome.at;
      callback.nextAttemptAt = null;
    } else if (outcome.nextDueAt === null) {
      callback.status = 'failed';
      callback.nextAttemptAt = null;
    } else {
      callback.nextAttemptAt = new Date(outcome.nextDueAt).toISOString();
    }
  }
}

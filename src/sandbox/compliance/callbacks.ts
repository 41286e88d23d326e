import { Agent, request } from 'undici';
import type { CallbackFaultPlan, FaultEngine } from '../shared/faults.js';
import type { ComplianceFixture } from './fixture-schema.js';
import type { CallbackAttempt, CallbackAttemptKind } from './inspection-types.js';
import { newId, snapshot, type CallbackEvent, type CallbackView, type DocumentRecord } from './model.js';
import type { Timers } from './timers.js';

const CALLBACK_USER_AGENT = 'compliance-callbacks/1.0';

interface Delivery {
  id: string;
  record: DocumentRecord;
  event: CallbackEvent;
  url: string;
  body: string;
  plan: CallbackFaultPlan;
  /** When the schedule counts from: the outcome, or the release of a held delivery. */
  startedAt: number;
  attempts: number;
  /** Held back by an out-of-order fault until a later delivery of the document went out. */
  held: boolean;
  cancelHold: (() => void) | undefined;
  /** The first attempt has been made. */
  sent: boolean;
  /** The delivery of an earlier outcome, re-sent after this one by an out-of-order fault. */
  resendAfter: Delivery | undefined;
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
  private readonly agent = new Agent({ keepAliveTimeout: 1_000, connections: 8 });
  private readonly closing = new AbortController();
  private readonly latest = new Map<string, Delivery>();
  private deliveries: Delivery[] = [];
  private log: CallbackAttempt[] = [];
  /** Bumped by reset(), so a send still in flight from before cannot touch the new state. */
  private generation = 0;

  constructor(
    private readonly options: {
      config: ComplianceFixture['callbacks'];
      faults: FaultEngine;
      timers: Timers;
      now: () => number;
    },
  ) {}

  /** The document has reached an outcome (completed or failed); deliver it if it is a new one. */
  outcome(record: DocumentRecord): void {
    const view = record.view;
    if (!view.callback) return;
    const event: CallbackEvent | undefined =
      view.status === 'completed' ? 'sale.completed' : view.status === 'failed' ? 'sale.failed' : undefined;
    if (!event) return;
    const previous = this.latest.get(view.id);
    if (previous?.event === event) return; // a retry that failed again is the same outcome

    const plan = this.options.faults.callbackPlan();
    const now = this.options.now();
    const holdBack = plan.outOfOrder && !(previous?.sent ?? false);
    const callback: CallbackView = {
      ...emptyCallback(view.callback.url),
      status: 'pending',
      event,
      nextAttemptAt: new Date(now + (holdBack ? this.options.config.outOfOrderHoldMs : this.offset(plan, 0))).toISOString(),
    };
    view.callback = callback;
    const id = newId('evt');
    const delivery: Delivery = {
      id,
      record,
      event,
      url: callback.url,
      body: JSON.stringify({ id, event, createdAt: new Date(now).toISOString(), data: { sale: snapshot(view) } }),
      plan,
      startedAt: now,
      attempts: 0,
      held: holdBack,
      cancelHold: undefined,
      sent: false,
      resendAfter: plan.outOfOrder && previous?.sent ? previous : undefined,
    };
    this.latest.set(view.id, delivery);
    this.deliveries.push(delivery);
    if (holdBack) {
      delivery.cancelHold = this.options.timers.after(this.options.config.outOfOrderHoldMs, () => this.release(delivery));
    } else {
      this.schedule(delivery, 0);
    }
  }

  /** Attempts made so far, oldest first. */
  attempts(documentId?: string): CallbackAttempt[] {
    return this.log.filter((a) => documentId === undefined || a.documentId === documentId).map((a) => ({ ...a }));
  }

  /** Forgets every delivery (the caller clears the timers). */
  reset(): void {
    this.generation += 1;
    this.latest.clear();
    this.deliveries = [];
    this.log = [];
  }

  async close(): Promise<void> {
    this.generation += 1;
    this.closing.abort();
    await this.agent.destroy();
  }

  private offset(plan: CallbackFaultPlan, index: number): number {
    return plan.delayMs + (this.options.config.retryScheduleMs[index] ?? 0);
  }

  private schedule(delivery: Delivery, index: number): void {
    const due = delivery.startedAt + this.offset(delivery.plan, index);
    this.options.timers.after(due - this.options.now(), () => void this.attempt(delivery, index));
  }

  private release(delivery: Delivery): void {
    if (!delivery.held) return;
    delivery.held = false;
    delivery.cancelHold?.();
    delivery.startedAt = this.options.now() - delivery.plan.delayMs; // already waited; send now
    this.schedule(delivery, 0);
  }

  private isCurrent(delivery: Delivery): boolean {
    return this.latest.get(delivery.record.view.id) === delivery;
  }

  private async attempt(delivery: Delivery, index: number): Promise<void> {
    const generation = this.generation;
    const attempt = index + 1;
    delivery.attempts = attempt;
    const result = await this.send(delivery, attempt, 'scheduled');
    if (generation !== this.generation) return;
    const firstSend = !delivery.sent;
    delivery.sent = true;
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const last = index + 1 >= this.options.config.retryScheduleMs.length;

    if (this.isCurrent(delivery) && delivery.record.view.callback) {
      const callback = delivery.record.view.callback;
      callback.attempts = attempt;
      callback.lastAttemptAt = result.at;
      callback.lastResponseStatus = result.status;
      callback.lastError = result.error;
      if (delivered) {
        callback.status = 'delivered';
        callback.deliveredAt = result.at;
        callback.nextAttemptAt = null;
      } else if (last) {
        callback.status = 'failed';
        callback.nextAttemptAt = null;
      } else {
        callback.nextAttemptAt = new Date(delivery.startedAt + this.offset(delivery.plan, index + 1)).toISOString();
      }
    }

    if (firstSend) {
      // Out of order: the earlier outcome goes out again after this one, and any delivery held back for
      // a later one of the same document is released now that this one went out first.
      if (delivery.resendAfter) await this.send(delivery.resendAfter, Math.max(1, delivery.resendAfter.attempts), 'out-of-order');
      for (const other of this.deliveries) {
        if (other !== delivery && other.held && other.record === delivery.record) this.release(other);
      }
    }
    if (delivered) {
      for (let copy = 0; copy < delivery.plan.duplicates && generation === this.generation; copy++) {
        await this.send(delivery, attempt, 'duplicate');
      }
      return;
    }
    if (!last) this.schedule(delivery, index + 1);
  }

  private async send(
    delivery: Delivery,
    attempt: number,
    kind: CallbackAttemptKind,
  ): Promise<{ status: number | null; error: string | null; at: string }> {
    const started = this.options.now();
    const at = new Date(started).toISOString();
    let status: number | null = null;
    let error: string | null = null;
    const timeout = AbortSignal.timeout(this.options.config.timeoutMs);
    try {
      const response = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.any([timeout, this.closing.signal]),
        headers: {
          'content-type': 'application/json',
          'user-agent': CALLBACK_USER_AGENT,
          'x-callback-id': delivery.id,
          'x-callback-attempt': String(attempt),
        },
        body: delivery.body,
      });
      status = response.statusCode;
      await response.body.dump();
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      // Never the URL: it may carry the receiver's capability token.
      error = timeout.aborted
        ? `no answer within ${this.options.config.timeoutMs} ms`
        : `connection failed (${errorCode(err)})`;
    }
    this.log.push({
      deliveryId: delivery.id,
      documentId: delivery.record.view.id,
      event: delivery.event,
      attempt,
      kind,
      at,
      status,
      error,
      durationMs: this.options.now() - started,
    });
    return { status, error, at };
  }
}

function errorCode(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.name : 'unknown';
}

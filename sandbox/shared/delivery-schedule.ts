import { Agent, request } from 'undici';
import type { CallbackFaultPlan } from './faults.js';

/** What a fixture says about pushed deliveries (compliance callbacks, accounting webhooks). */
export interface DeliveryScheduleConfig {
  /** Delay of each attempt after the delivery starts; its length is the number of attempts. */
  readonly retryScheduleMs: readonly number[];
  /** An attempt without an answer in this time has failed. */
  readonly timeoutMs: number;
  /** How long an out-of-order delivery waits for a later one of the same key before it goes out anyway. */
  readonly outOfOrderHoldMs: number;
}

export type DeliveryAttemptKind = 'scheduled' | 'duplicate' | 'out-of-order';

/** The sandbox's timers, so a closing sandbox stops every pending attempt. */
export interface DeliveryTimers {
  after(ms: number, fn: () => void): () => void;
}

/** One delivery as its sender sees it. */
export interface Delivery<T> {
  /** The same on every attempt and copy of the delivery. */
  readonly id: string;
  /** What deliveries are ordered within (a document, a bill payment): out-of-order faults act per key. */
  readonly key: string;
  /** The sender's own record of what is delivered. */
  readonly subject: T;
  readonly url: string;
  readonly body: string;
  readonly plan: CallbackFaultPlan;
}

interface ScheduledDelivery<T> extends Delivery<T> {
  /** When the schedule counts from: the start, or the release of a held delivery. */
  startedAt: number;
  attempts: number;
  /** Held back by an out-of-order fault until a later delivery of the same key went out. */
  held: boolean;
  cancelHold: (() => void) | undefined;
  /** The first attempt has been made. */
  sent: boolean;
  /** The delivery of an earlier change of the key, re-sent after this one by an out-of-order fault. */
  resendAfter: ScheduledDelivery<T> | undefined;
}

/** One POST and the receiver's answer. */
export interface SendResult {
  /** When the send started. */
  at: string;
  /** HTTP status of the answer; null when none came. */
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** A scheduled attempt as its sender's bookkeeping needs it. */
export interface AttemptOutcome extends SendResult {
  attempt: number;
  delivered: boolean;
  /** When the next attempt is due; null once delivered or out of attempts. */
  nextDueAt: number | null;
}

export interface DeliveryScheduleOptions<T, A> {
  config: DeliveryScheduleConfig;
  timers: DeliveryTimers;
  now: () => number;
  userAgent: string;
  /** The sender's headers, built per send so that a signature can carry the send's own time. */
  headers: (delivery: Delivery<T>, attempt: number, sentAt: number) => Record<string, string>;
  /** The inspection API's record of one send. */
  logEntry: (delivery: Delivery<T>, attempt: number, kind: DeliveryAttemptKind, result: SendResult) => A;
  /** After each scheduled attempt (not its copies), before the out-of-order follow-ups of a first send. */
  onAttempt?: (delivery: Delivery<T>, outcome: AttemptOutcome) => void;
}

/**
 * Pushes deliveries to receivers: each delivery is attempted on the fixture's schedule until a 2xx or
 * the schedule runs out. A fault plan per delivery adds duplicate sends after the success, a delay of the
 * whole schedule, or out-of-order sends (a delivery held back until a later one of the same key went
 * out, or an earlier one re-sent after it). Every send is logged for the inspection API.
 */
export class DeliverySchedule<T, A extends object> {
  private readonly agent = new Agent({ keepAliveTimeout: 1_000, connections: 8 });
  private readonly closing = new AbortController();
  private readonly latestByKey = new Map<string, ScheduledDelivery<T>>();
  private deliveries: ScheduledDelivery<T>[] = [];
  private log: A[] = [];
  /** Bumped by reset(), so a send still in flight from before cannot touch the new state. */
  private generation = 0;

  constructor(private readonly options: DeliveryScheduleOptions<T, A>) {}

  /** The latest delivery of the key. */
  latest(key: string): Delivery<T> | undefined {
    return this.latestByKey.get(key);
  }

  isCurrent(delivery: Delivery<T>): boolean {
    return this.latestByKey.get(delivery.key) === delivery;
  }

  /** When the first attempt of a delivery for `key` added at `now` with `plan` will be due. */
  firstDueAt(key: string, plan: CallbackFaultPlan, now: number): number {
    return now + (this.holdsBack(key, plan) ? this.options.config.outOfOrderHoldMs : this.offset(plan, 0));
  }

  /** Starts a delivery; it becomes the latest of its key. */
  add(input: Delivery<T> & { now: number }): Delivery<T> {
    const { now, ...fields } = input;
    const previous = this.latestByKey.get(fields.key);
    const holdBack = this.holdsBack(fields.key, fields.plan);
    const delivery: ScheduledDelivery<T> = {
      ...fields,
      startedAt: now,
      attempts: 0,
      held: holdBack,
      cancelHold: undefined,
      sent: false,
      resendAfter: fields.plan.outOfOrder && previous?.sent ? previous : undefined,
    };
    this.latestByKey.set(delivery.key, delivery);
    this.deliveries.push(delivery);
    if (holdBack) {
      delivery.cancelHold = this.options.timers.after(this.options.config.outOfOrderHoldMs, () =>
        this.release(delivery),
      );
    } else {
      this.schedule(delivery, 0);
    }
    return delivery;
  }

  /** Copies of the logged sends that match, oldest first. */
  attempts(match: (entry: A) => boolean): A[] {
    return this.log.filter(match).map((entry) => ({ ...entry }));
  }

  /** Forgets every delivery (the owner of the timers clears them). */
  reset(): void {
    this.generation += 1;
    this.latestByKey.clear();
    this.deliveries = [];
    this.log = [];
  }

  async close(): Promise<void> {
    this.generation += 1;
    this.closing.abort();
    await this.agent.destroy();
  }

  private holdsBack(key: string, plan: CallbackFaultPlan): boolean {
    return plan.outOfOrder && !(this.latestByKey.get(key)?.sent ?? false);
  }

  private offset(plan: CallbackFaultPlan, index: number): number {
    return plan.delayMs + (this.options.config.retryScheduleMs[index] ?? 0);
  }

  private dueAt(delivery: ScheduledDelivery<T>, index: number): number {
    return delivery.startedAt + this.offset(delivery.plan, index);
  }

  private schedule(delivery: ScheduledDelivery<T>, index: number): void {
    this.options.timers.after(
      this.dueAt(delivery, index) - this.options.now(),
      () => void this.attempt(delivery, index),
    );
  }

  private release(delivery: ScheduledDelivery<T>): void {
    if (!delivery.held) return;
    delivery.held = false;
    delivery.cancelHold?.();
    delivery.startedAt = this.options.now() - delivery.plan.delayMs; // already waited; send now
    this.schedule(delivery, 0);
  }

  private async attempt(delivery: ScheduledDelivery<T>, index: number): Promise<void> {
    const generation = this.generation;
    const attempt = index + 1;
    delivery.attempts = attempt;
    const result = await this.send(delivery, attempt, 'scheduled');
    if (generation !== this.generation) return;
    const firstSend = !delivery.sent;
    delivery.sent = true;
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const last = attempt >= this.options.config.retryScheduleMs.length;
    this.options.onAttempt?.(delivery, {
      ...result,
      attempt,
      delivered,
      nextDueAt: delivered || last ? null : this.dueAt(delivery, index + 1),
    });

    if (firstSend) {
      // Out of order: the earlier delivery goes out again after this one, and any delivery held back for
      // a later one of the same key is released now that this one went out first.
      if (delivery.resendAfter)
        await this.send(delivery.resendAfter, Math.max(1, delivery.resendAfter.attempts), 'out-of-order');
      for (const other of this.deliveries) {
        if (other !== delivery && other.held && other.key === delivery.key) this.release(other);
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

  private async send(delivery: ScheduledDelivery<T>, attempt: number, kind: DeliveryAttemptKind): Promise<SendResult> {
    const started = this.options.now();
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
          'user-agent': this.options.userAgent,
          ...this.options.headers(delivery, attempt, started),
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
    const result: SendResult = {
      at: new Date(started).toISOString(),
      status,
      error,
      durationMs: this.options.now() - started,
    };
    this.log.push(this.options.logEntry(delivery, attempt, kind, result));
    return result;
  }
}

/** The network error's code (ECONNREFUSED, …) from the error or its causes. */
function errorCode(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.name : 'unknown';
}

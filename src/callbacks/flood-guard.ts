/**
 * Keeps a flood of callbacks on one valid URL (a leaked URL, a service redelivering in a loop) from growing
 * the workflow's history: every signal adds events, and Temporal terminates an execution at 51,200.
 *
 * A callback is only a hint (the workflow confirms by reading the document, and polls anyway), so dropping
 * one costs at most the polling interval. Admission, decided synchronously so concurrent copies race on it:
 *
 * 1. delivery id: a (workflow, delivery id) already signalled is a 'duplicate';
 * 2. outcome: a (workflow, document, event) signalled within `outcomeWindowMs` is a 'duplicate' too (a
 *    later genuine delivery of the same outcome, e.g. a second failure after a retry, is signalled once the
 *    window has passed; polling covers the gap). A callback whose body names neither (a body of another shape,
 *    or none) is told apart by its bytes' fingerprint instead;
 * 3. per-workflow budget: a token bucket of `workflowBurst` signals refilled one per `workflowRefillMs`,
 *    whatever the bodies say (an attacker can vary document ids and events); beyond it, 'throttled';
 * 4. a workflow whose signal answered 'not_found' (closed) is remembered: 'closed', without a Temporal call.
 *
 * Memory is bounded whatever arrives: each table is an LRU of at most `maxEntries` with a TTL, and entries are
 * only added for signals actually sent (which the budget limits), closed workflows, and one counter per
 * workflow of callbacks answered without a signal (for a log line per workflow per refill interval).
 */
import type { CallbackHint } from '../contracts/sale.js';

export interface CallbackGuardOptions {
  /** Entries per table (delivery ids, outcomes, budgets, closed workflows). Default 10,000. */
  maxEntries?: number;
  /** How long a signalled delivery id is remembered. Default 3 h (covers the service's retry schedule, C47). */
  deliveryTtlMs?: number;
  /** At most one signal per (workflow, document, event) within this window. Default 10 min. */
  outcomeWindowMs?: number;
  /** Signals a workflow may get at once. Default 4. */
  workflowBurst?: number;
  /** One more signal allowed per this interval, up to the burst. Default 5 min. */
  workflowRefillMs?: number;
  /** How long a closed workflow is remembered. Default 1 h. */
  closedTtlMs?: number;
  now?: () => number;
}

export const CALLBACK_GUARD_DEFAULTS = {
  maxEntries: 10_000,
  deliveryTtlMs: 3 * 3_600_000,
  outcomeWindowMs: 10 * 60_000,
  workflowBurst: 4,
  workflowRefillMs: 5 * 60_000,
  closedTtlMs: 3_600_000,
} as const satisfies Required<Omit<CallbackGuardOptions, 'now'>>;

/** Refusals are logged at most once per reason per this interval, with their count (accounting webhooks). */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

export type Admission =
  | { verdict: 'signal'; ticket: AdmissionTicket }
  | {
      verdict: 'duplicate' | 'throttled' | 'closed';
      /**
       * Set at most once per workflow per `workflowRefillMs`: how many callbacks of this workflow were answered
       * without a signal since the last report, so the receiver can log a flood without logging every request.
       */
      suppressedReport?: number;
    };

/** What a 'signal' admission reserved, to be settled with the signal's result. */
export interface AdmissionTicket {
  readonly workflowId: string;
  readonly deliveryKey: string | undefined;
  readonly outcomeKey: string;
}

/**
 * A Map kept in insertion order: the oldest entry goes first when full; entries expire after their TTL.
 * By hand, not lru-cache: matching this takes its test-only `perf` clock, `ttlResolution: 0`, a shifted `start`, `peek`.
 */
export class BoundedTtlMap<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    readonly maxEntries: number,
    private readonly now: () => number,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Sets (and refreshes the position of) `key`, evicting the oldest entries beyond `maxEntries`. */
  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class CallbackFloodGuard {
  private readonly options: Required<Omit<CallbackGuardOptions, 'now'>>;
  private readonly now: () => number;
  private readonly deliveries: BoundedTtlMap<true>;
  private readonly outcomes: BoundedTtlMap<true>;
  private readonly budgets: BoundedTtlMap<Bucket>;
  private readonly closed: BoundedTtlMap<true>;
  private readonly suppressed: BoundedTtlMap<{ count: number; reportedAt: number }>;

  constructor(options: CallbackGuardOptions = {}) {
    const { now, ...rest } = options;
    this.options = { ...CALLBACK_GUARD_DEFAULTS, ...stripUndefined(rest) };
    for (const [name, value] of Object.entries(this.options)) {
      if (!Number.isFinite(value) || value <= 0)
        throw new RangeError(`callback guard ${name} must be a positive number`);
    }
    this.now = now ?? Date.now;
    const max = this.options.maxEntries;
    this.deliveries = new BoundedTtlMap(max, this.now);
    this.outcomes = new BoundedTtlMap(max, this.now);
    this.budgets = new BoundedTtlMap(max, this.now);
    this.closed = new BoundedTtlMap(max, this.now);
    this.suppressed = new BoundedTtlMap(max, this.now);
  }

  /**
   * Decides, synchronously, whether this callback is signalled; a 'signal' reserves its keys and one budget unit.
   * `fingerprint` (a digest of the body) stands for the outcome when the hint names neither document nor event.
   */
  admit(workflowId: string, hint: CallbackHint, fingerprint = ''): Admission {
    if (this.closed.get(workflowId)) return this.suppress(workflowId, 'closed');
    const deliveryKey = hint.callbackId === null ? undefined : key(workflowId, 'delivery', hint.callbackId);
    if (deliveryKey !== undefined && this.deliveries.get(deliveryKey)) return this.suppress(workflowId, 'duplicate');
    const outcomeKey =
      hint.documentId === null && hint.event === null
        ? key(workflowId, 'body', fingerprint)
        : key(workflowId, 'outcome', hint.documentId ?? '', hint.event ?? '');
    if (this.outcomes.get(outcomeKey)) return this.suppress(workflowId, 'duplicate');
    if (!this.take(workflowId)) return this.suppress(workflowId, 'throttled');
    if (deliveryKey !== undefined) this.deliveries.set(deliveryKey, true, this.options.deliveryTtlMs);
    this.outcomes.set(outcomeKey, true, this.options.outcomeWindowMs);
    return { verdict: 'signal', ticket: { workflowId, deliveryKey, outcomeKey } };
  }

  /** The signal could not be sent: forget the reservation, so the service's redelivery is signalled. */
  failed(ticket: AdmissionTicket): void {
    if (ticket.deliveryKey !== undefined) this.deliveries.delete(ticket.deliveryKey);
    this.outcomes.delete(ticket.outcomeKey);
  }

  /** No running workflow has this id: answer its later callbacks without asking Temporal. */
  notFound(ticket: AdmissionTicket): void {
    this.closed.set(ticket.workflowId, true, this.options.closedTtlMs);
  }

  /** Counts an unsignalled callback; the first one, then the count once per refill interval, is reported. */
  private suppress(workflowId: string, verdict: 'duplicate' | 'throttled' | 'closed'): Admission {
    const now = this.now();
    const interval = this.options.workflowRefillMs;
    // Kept well past the interval so a count is reported rather than forgotten; bounded by maxEntries.
    const ttl = Math.max(interval, this.options.deliveryTtlMs);
    const entry = this.suppressed.get(workflowId);
    if (entry === undefined) {
      this.suppressed.set(workflowId, { count: 0, reportedAt: now }, ttl);
      return { verdict, suppressedReport: 1 };
    }
    entry.count++;
    if (now - entry.reportedAt < interval) return { verdict };
    const count = entry.count;
    this.suppressed.set(workflowId, { count: 0, reportedAt: now }, ttl);
    return { verdict, suppressedReport: count };
  }

  private take(workflowId: string): boolean {
    const { workflowBurst: burst, workflowRefillMs: refillMs } = this.options;
    const now = this.now();
    const bucket = this.budgets.get(workflowId) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.updatedAt) / refillMs);
    bucket.updatedAt = now;
    const granted = bucket.tokens >= 1;
    if (granted) bucket.tokens -= 1;
    // Kept until it would have refilled completely: a bucket forgotten after that is the same as a full one.
    this.budgets.set(workflowId, bucket, Math.max(1, Math.ceil((burst - bucket.tokens) * refillMs)));
    return granted;
  }
}

/** Unambiguous composite keys: JSON of the parts. */
function key(...parts: string[]): string {
  return JSON.stringify(parts);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

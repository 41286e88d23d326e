// Why and the limits: docs/contract-assumptions.md, C62. Admission is synchronous, so concurrent copies race on it.
import type { CallbackHint } from '../contracts/sale.js';

export const CALLBACK_GUARD_DEFAULTS = {
  maxEntries: 10_000,
  // Covers the service's retry schedule of one delivery (C47).
  deliveryTtlMs: 3 * 3_600_000,
  outcomeWindowMs: 10 * 60_000,
  workflowBurst: 4,
  workflowRefillMs: 5 * 60_000,
  closedTtlMs: 3_600_000,
};

type CallbackGuardOptions = Partial<Record<keyof typeof CALLBACK_GUARD_DEFAULTS, number>> & { now?: () => number };

export type Admission =
  | { verdict: 'signal'; ticket: AdmissionTicket }
  | {
      verdict: 'duplicate' | 'throttled' | 'closed';
      /** Callbacks of this workflow answered without a signal since the last report (once per refill interval). */
      suppressedReport?: number;
    };

interface AdmissionTicket {
  readonly workflowId: string;
  readonly deliveryKey: string | undefined;
  readonly outcomeKey: string;
}

/** An LRU with a TTL per entry. By hand: lru-cache would need its test-only `perf` clock to match this. */
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

  set(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

export class CallbackFloodGuard {
  private readonly options: Record<keyof typeof CALLBACK_GUARD_DEFAULTS, number>;
  private readonly now: () => number;
  private readonly deliveries: BoundedTtlMap<true>;
  private readonly outcomes: BoundedTtlMap<true>;
  private readonly budgets: BoundedTtlMap<{ tokens: number; updatedAt: number }>;
  private readonly closed: BoundedTtlMap<true>;
  private readonly suppressed: BoundedTtlMap<{ count: number; reportedAt: number }>;

  constructor(options: CallbackGuardOptions = {}) {
    const { now, ...rest } = options;
    this.options = { ...CALLBACK_GUARD_DEFAULTS, ...rest };
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

  /** `fingerprint` (of the body) stands for an outcome that names neither document nor event. */
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

  /** The signal could not be sent: the service's redelivery is signalled. */
  failed(ticket: AdmissionTicket): void {
    if (ticket.deliveryKey !== undefined) this.deliveries.delete(ticket.deliveryKey);
    this.outcomes.delete(ticket.outcomeKey);
  }

  /** No running workflow has this id: answer its later callbacks without asking Temporal. */
  notFound(ticket: AdmissionTicket): void {
    this.closed.set(ticket.workflowId, true, this.options.closedTtlMs);
  }

  private suppress(workflowId: string, verdict: 'duplicate' | 'throttled' | 'closed'): Admission {
    const now = this.now();
    const interval = this.options.workflowRefillMs;
    // Kept well past the interval so a count is reported rather than forgotten; bounded by maxEntries.
    const ttl = Math.max(interval, this.options.deliveryTtlMs);
    const entry = this.suppressed.get(workflowId);
    if (entry !== undefined && now - entry.reportedAt < interval) {
      entry.count++;
      return { verdict };
    }
    this.suppressed.set(workflowId, { count: 0, reportedAt: now }, ttl);
    return { verdict, suppressedReport: (entry?.count ?? 0) + 1 };
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

function key(...parts: string[]): string {
  return JSON.stringify(parts);
}

export type IdempotencyBegin<T> =
  { kind: 'new' } | { kind: 'replay'; value: T } | { kind: 'conflict' } | { kind: 'in-progress' };

type Entry<T> =
  | { state: 'in-progress'; fingerprint: string; storedAt: number }
  | { state: 'done'; fingerprint: string; storedAt: number; value: T };

/**
 * Idempotency keys scoped by the caller (contract decisions C13–C16): the first request with a key
 * reserves it; a repeat with the same fingerprint replays the stored value, with another fingerprint
 * is a conflict, and while the first is still running is 'in-progress'. Entries expire `ttlMs` after
 * they were stored.
 */
export class IdempotencyStore<T> {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry<T>>();
  /** Size at which expired entries are next swept out; doubling it keeps sweeps amortised O(1). */
  private sweepAt = MIN_SWEEP_SIZE;

  constructor(options: { ttlMs: number; now?: () => number }) {
    if (!Number.isFinite(options.ttlMs) || options.ttlMs <= 0) {
      throw new RangeError(`ttlMs must be a positive number of milliseconds, got ${options.ttlMs}`);
    }
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
  }

  begin(scope: string, key: string, fingerprint: string): IdempotencyBegin<T> {
    const id = entryId(scope, key);
    const now = this.now();
    if (this.entries.size >= this.sweepAt) this.sweep(now);
    const entry = this.entries.get(id);
    if (!entry || this.expired(entry, now)) {
      this.entries.set(id, { state: 'in-progress', fingerprint, storedAt: now });
      return { kind: 'new' };
    }
    if (entry.fingerprint !== fingerprint) return { kind: 'conflict' };
    if (entry.state === 'in-progress') return { kind: 'in-progress' };
    return { kind: 'replay', value: entry.value };
  }

  complete(scope: string, key: string, value: T): void {
    const id = entryId(scope, key);
    const entry = this.entries.get(id);
    if (!entry || entry.state !== 'in-progress') {
      throw new Error(`idempotency key ${JSON.stringify(key)} in ${JSON.stringify(scope)} is not in progress`);
    }
    this.entries.set(id, { state: 'done', fingerprint: entry.fingerprint, storedAt: this.now(), value });
  }

  abandon(scope: string, key: string): void {
    const id = entryId(scope, key);
    if (this.entries.get(id)?.state === 'in-progress') this.entries.delete(id);
  }

  reset(): void {
    this.entries.clear();
    this.sweepAt = MIN_SWEEP_SIZE;
  }

  /** How many keys are held, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  private expired(entry: Entry<T>, now: number): boolean {
    return now - entry.storedAt >= this.ttlMs;
  }

  private sweep(now: number): void {
    for (const [id, entry] of this.entries) {
      if (this.expired(entry, now)) this.entries.delete(id);
    }
    this.sweepAt = Math.max(MIN_SWEEP_SIZE, this.entries.size * 2);
  }
}

const MIN_SWEEP_SIZE = 1024;

// JSON keeps scope and key apart whatever characters they contain.
function entryId(scope: string, key: string): string {
  return JSON.stringify([scope, key]);
}

import { describe, expect, it } from 'vitest';
import { IdempotencyStore } from '../../../sandbox/shared/idempotency-store.js';

function clock(start = 5_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('IdempotencyStore', () => {
  it('reserves a new key, reports in-progress until complete, then replays the stored value', () => {
    const store = new IdempotencyStore<{ id: string }>({ ttlMs: 1000, now: clock().now });
    expect(store.begin('app/biz/sales', 'key-1', 'fp-a')).toEqual({ kind: 'new' });
    expect(store.begin('app/biz/sales', 'key-1', 'fp-a')).toEqual({ kind: 'in-progress' });
    store.complete('app/biz/sales', 'key-1', { id: 'sale_1' });
    expect(store.begin('app/biz/sales', 'key-1', 'fp-a')).toEqual({ kind: 'replay', value: { id: 'sale_1' } });
    expect(store.begin('app/biz/sales', 'key-1', 'fp-a')).toEqual({ kind: 'replay', value: { id: 'sale_1' } });
  });

  it('reports a conflict for the same key with another fingerprint, in progress or done', () => {
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: clock().now });
    store.begin('s', 'k', 'fp-a');
    expect(store.begin('s', 'k', 'fp-b')).toEqual({ kind: 'conflict' });
    store.complete('s', 'k', 'v');
    expect(store.begin('s', 'k', 'fp-b')).toEqual({ kind: 'conflict' });
    // The conflict did not disturb the original.
    expect(store.begin('s', 'k', 'fp-a')).toEqual({ kind: 'replay', value: 'v' });
  });

  it('scopes keys, so the same key in another scope is new', () => {
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: clock().now });
    store.begin('app-1', 'k', 'fp');
    store.complete('app-1', 'k', 'one');
    expect(store.begin('app-2', 'k', 'fp')).toEqual({ kind: 'new' });
    // Scope and key are kept apart even when their concatenations would collide.
    store.begin('a/b', 'c', 'fp');
    expect(store.begin('a', 'b/c', 'fp')).toEqual({ kind: 'new' });
  });

  it('frees the key on abandon, so a corrected body can use it', () => {
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: clock().now });
    store.begin('s', 'k', 'fp-bad');
    store.abandon('s', 'k');
    expect(store.begin('s', 'k', 'fp-good')).toEqual({ kind: 'new' });
  });

  it('does not let abandon drop a completed key', () => {
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: clock().now });
    store.begin('s', 'k', 'fp');
    store.complete('s', 'k', 'v');
    store.abandon('s', 'k');
    expect(store.begin('s', 'k', 'fp')).toEqual({ kind: 'replay', value: 'v' });
  });

  it('expires a completed key ttlMs after completion', () => {
    const time = clock();
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: time.now });
    store.begin('s', 'k', 'fp');
    time.advance(300);
    store.complete('s', 'k', 'v');
    time.advance(999);
    expect(store.begin('s', 'k', 'fp-other')).toEqual({ kind: 'conflict' });
    time.advance(1);
    expect(store.begin('s', 'k', 'fp-other')).toEqual({ kind: 'new' });
  });

  it('expires a reservation that was never completed', () => {
    const time = clock();
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: time.now });
    store.begin('s', 'k', 'fp');
    time.advance(1000);
    expect(store.begin('s', 'k', 'fp')).toEqual({ kind: 'new' });
  });

  it('sweeps out expired keys as new ones arrive, so memory stays bounded', () => {
    const time = clock();
    const store = new IdempotencyStore<number>({ ttlMs: 1000, now: time.now });
    for (let i = 0; i < 1024; i++) {
      store.begin('s', `old-${i}`, 'fp');
      store.complete('s', `old-${i}`, i);
    }
    expect(store.size).toBe(1024);
    time.advance(1000);
    store.begin('s', 'fresh', 'fp');
    expect(store.size).toBe(1);
    // Keys still alive survive a sweep.
    time.advance(500);
    for (let i = 0; i < 2048; i++) store.begin('s', `more-${i}`, 'fp');
    expect(store.begin('s', 'fresh', 'fp')).toEqual({ kind: 'in-progress' });
  });

  it('refuses to complete a key that is not in progress', () => {
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: clock().now });
    expect(() => store.complete('s', 'missing', 'v')).toThrow(/not in progress/);
  });

  it('forgets everything on reset', () => {
    const store = new IdempotencyStore<string>({ ttlMs: 1000, now: clock().now });
    store.begin('s', 'k', 'fp');
    store.reset();
    expect(store.begin('s', 'k', 'other')).toEqual({ kind: 'new' });
  });

  it('rejects a bad ttl with the setting named', () => {
    expect(() => new IdempotencyStore({ ttlMs: -1 })).toThrow(/ttlMs/);
  });
});

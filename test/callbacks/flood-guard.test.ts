import { describe, expect, it } from 'vitest';
import {
  BoundedTtlMap,
  CALLBACK_GUARD_DEFAULTS,
  CallbackFloodGuard,
  type Admission,
} from '../../src/callbacks/flood-guard.js';
import type { CallbackHint } from '../../src/contracts/sale.js';

const WF = 'sale:biz_nairobi:INV-1';
const MINUTE = 60_000;

function hint(callbackId: string | null, documentId = 'sal_1', event: string | null = 'sale.completed'): CallbackHint {
  return { documentId, event, callbackId };
}

function clock(start = Date.UTC(2025, 5, 30, 10, 0, 0)) {
  const c = { t: start, now: () => c.t };
  return c;
}

const verdict = (a: Admission) => a.verdict;

describe('CallbackFloodGuard', () => {
  it('signals the first callback, answers its redeliveries as duplicates', () => {
    const guard = new CallbackFloodGuard();
    expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('signal');
    for (let i = 0; i < 100; i++) expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('duplicate');
  });

  it('at most one signal per (workflow, document, event) within the outcome window, whatever the delivery ids', () => {
    const c = clock();
    const guard = new CallbackFloodGuard({ now: c.now });
    expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('signal');
    expect(verdict(guard.admit(WF, hint('evt_2')))).toBe('duplicate');
    expect(verdict(guard.admit(WF, hint(null)))).toBe('duplicate');
    // Another event, another document, another workflow: each is a first.
    expect(verdict(guard.admit(WF, hint('evt_3', 'sal_1', 'sale.failed')))).toBe('signal');
    expect(verdict(guard.admit(WF, hint('evt_4', 'sal_2')))).toBe('signal');
    expect(verdict(guard.admit('sale:biz_nairobi:INV-2', hint('evt_1')))).toBe('signal');
    // After the window a new delivery of the same outcome (a second failure after a retry) is signalled.
    c.t += CALLBACK_GUARD_DEFAULTS.outcomeWindowMs;
    expect(verdict(guard.admit(WF, hint('evt_5')))).toBe('signal');
    // The delivery id itself is remembered longer.
    expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('duplicate');
    c.t += CALLBACK_GUARD_DEFAULTS.deliveryTtlMs;
    expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('signal');
  });

  it('throttles a workflow to its burst, then one signal per refill interval, whatever the bodies say', () => {
    const c = clock();
    const guard = new CallbackFloodGuard({ now: c.now, workflowBurst: 3, workflowRefillMs: 5 * MINUTE });
    const verdicts = Array.from({ length: 1_000 }, (_, i) => verdict(guard.admit(WF, hint(`evt_${i}`, `sal_${i}`))));
    expect(verdicts.filter((v) => v === 'signal')).toHaveLength(3);
    expect(verdicts.slice(3).every((v) => v === 'throttled')).toBe(true);
    // Another workflow has its own budget.
    expect(verdict(guard.admit('sale:other', hint('evt_x')))).toBe('signal');

    c.t += 5 * MINUTE - 1;
    expect(verdict(guard.admit(WF, hint('evt_a', 'sal_a')))).toBe('throttled');
    c.t += 1;
    expect(verdict(guard.admit(WF, hint('evt_b', 'sal_b')))).toBe('signal');
    expect(verdict(guard.admit(WF, hint('evt_c', 'sal_c')))).toBe('throttled');
    // A long quiet spell refills up to the burst, not beyond.
    c.t += 24 * 60 * MINUTE;
    const after = Array.from({ length: 10 }, (_, i) => verdict(guard.admit(WF, hint(`evt_q${i}`, `sal_q${i}`))));
    expect(after.filter((v) => v === 'signal')).toHaveLength(3);
  });

  it('bounds the signals of a day-long flood with fresh ids to burst + elapsed / refill', () => {
    const c = clock();
    const guard = new CallbackFloodGuard({ now: c.now });
    let signals = 0;
    for (let i = 0; i < 24 * 60 * 6; i++) {
      c.t += 10_000; // one callback every 10 s for a day, each with a new delivery id, document and event
      if (guard.admit(WF, hint(`evt_${i}`, `sal_${i}`, `e${i}`)).verdict === 'signal') signals++;
    }
    const { workflowBurst, workflowRefillMs } = CALLBACK_GUARD_DEFAULTS;
    expect(signals).toBeLessThanOrEqual(workflowBurst + Math.ceil((24 * 60 * MINUTE) / workflowRefillMs));
  });

  it('a failed signal releases its reservation, so the redelivery is signalled', () => {
    const guard = new CallbackFloodGuard();
    const first = guard.admit(WF, hint('evt_1'));
    expect(first.verdict).toBe('signal');
    // A concurrent copy while the first is being signalled is a duplicate.
    expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('duplicate');
    if (first.verdict === 'signal') guard.failed(first.ticket);
    expect(verdict(guard.admit(WF, hint('evt_1')))).toBe('signal');
  });

  it('remembers a closed workflow for a while and answers it without signalling', () => {
    const c = clock();
    const guard = new CallbackFloodGuard({ now: c.now });
    const first = guard.admit(WF, hint('evt_1'));
    if (first.verdict === 'signal') guard.notFound(first.ticket);
    expect(verdict(guard.admit(WF, hint('evt_2', 'sal_9', 'sale.failed')))).toBe('closed');
    c.t += CALLBACK_GUARD_DEFAULTS.closedTtlMs;
    expect(verdict(guard.admit(WF, hint('evt_3', 'sal_9', 'sale.failed')))).toBe('signal');
  });

  it('keeps memory bounded: every table holds at most maxEntries', () => {
    const guard = new CallbackFloodGuard({ maxEntries: 50, workflowBurst: 1_000_000 });
    for (let i = 0; i < 10_000; i++) guard.admit(`wf-${i % 200}`, hint(`evt_${i}`, `sal_${i}`));
    for (let i = 0; i < 10_000; i++) guard.admit(`wf-${i}`, hint('evt_same', 'sal_same'));
    const tables = guard as unknown as Record<
      'deliveries' | 'outcomes' | 'budgets' | 'closed' | 'suppressed',
      BoundedTtlMap<unknown>
    >;
    for (const name of ['deliveries', 'outcomes', 'budgets', 'closed', 'suppressed'] as const) {
      expect(tables[name].size, name).toBeLessThanOrEqual(50);
    }
  });

  it('reports unsignalled callbacks once per workflow per refill interval, with their count', () => {
    const c = clock();
    const guard = new CallbackFloodGuard({ now: c.now, workflowBurst: 1 });
    expect(guard.admit(WF, hint('evt_1')).verdict).toBe('signal');
    const reports = () => {
      const seen: number[] = [];
      for (let i = 0; i < 500; i++) {
        const a = guard.admit(WF, hint('evt_1'));
        if (a.verdict !== 'signal' && a.suppressedReport !== undefined) seen.push(a.suppressedReport);
      }
      return seen;
    };
    expect(reports()).toEqual([1]);
    c.t += CALLBACK_GUARD_DEFAULTS.workflowRefillMs;
    expect(reports()).toEqual([500]);
  });

  it('tells anonymous callbacks (no document, no event) apart by their body fingerprint', () => {
    const guard = new CallbackFloodGuard();
    const anonymous: CallbackHint = { documentId: null, event: null, callbackId: null };
    expect(verdict(guard.admit(WF, anonymous, 'body-a'))).toBe('signal');
    expect(verdict(guard.admit(WF, anonymous, 'body-a'))).toBe('duplicate');
    expect(verdict(guard.admit(WF, anonymous, 'body-b'))).toBe('signal');
    // A hint that names its outcome is keyed by it, not by the bytes.
    expect(verdict(guard.admit(WF, hint(null), 'body-a'))).toBe('signal');
    expect(verdict(guard.admit(WF, hint(null), 'body-c'))).toBe('duplicate');
  });

  it('refuses limits that are not positive', () => {
    expect(() => new CallbackFloodGuard({ workflowBurst: 0 })).toThrow(RangeError);
    expect(() => new CallbackFloodGuard({ outcomeWindowMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('BoundedTtlMap', () => {
  it('evicts the oldest entry when full and expires entries after their TTL', () => {
    const c = clock();
    const map = new BoundedTtlMap<number>(2, c.now);
    map.set('a', 1, 1_000);
    map.set('b', 2, 1_000);
    map.set('a', 3, 1_000); // refreshed: now the newest
    map.set('c', 4, 1_000);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([3, undefined, 4]);
    c.t += 1_000;
    expect(map.get('a')).toBeUndefined();
    expect(map.size).toBe(1);
  });

  it('orders by writes only: a read does not keep an entry from eviction', () => {
    const c = clock();
    const map = new BoundedTtlMap<number>(2, c.now);
    map.set('a', 1, 1_000);
    map.set('b', 2, 1_000);
    expect(map.get('a')).toBe(1);
    map.set('c', 3, 1_000);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('expires entries on a clock that starts at zero', () => {
    const c = clock(0);
    const map = new BoundedTtlMap<number>(2, c.now);
    map.set('a', 1, 10);
    c.t += 9;
    expect(map.get('a')).toBe(1);
    c.t += 1;
    expect(map.get('a')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { BookedPurchase } from '../../src/contracts/purchases-book.js';
import type {
  LedgerEntry,
  ListedPurchase,
  ListingPass,
  PurchaseLedger,
  SweepState,
} from '../../src/contracts/purchases-sync.js';
import {
  addDays,
  bookWrites,
  diffPage,
  IN_REVIEW_KEPT,
  leftReview,
  noteInReview,
  notePending,
  pendingPasses,
  planListings,
  previousSync,
  todayInKenya,
  type ListingSettings,
} from '../../workflows/purchases-sync/ledger.js';

function listed(id: string, status: string, fingerprint: string, invoiceDate = '2025-06-01'): ListedPurchase {
  return {
    fingerprint,
    purchase: {
      id,
      status,
      supplier: { name: 'S', pin: 'P1' },
      supplierInvoiceNumber: 'INV-1',
      invoiceDate,
      branch: null,
      totals: { subtotal: 1, vat: 0, total: 1 },
      lines: [],
      confirmationError: null,
    },
  };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DEFAULTS: ListingSettings = { windowDays: 7, horizonDays: 730, sweepHours: 24 };
// 22:00 UTC on the 27th is 01:00 on the 28th in Nairobi: the business's day is the 28th.
const NOW = Date.parse('2026-11-27T22:00:00.000Z');
const TODAY = '2026-11-28';
const OLDEST = '2024-11-28'; // 730 days back
const SWEEP_START = '2026-11-20'; // the day before the 7-day window
const REGION_DAYS = 723; // OLDEST to SWEEP_START, both included

const iso = (ms: number) => new Date(ms).toISOString();
const sweepOf = (passes: ListingPass[]) => passes.find((p) => p.name === 'sweep');
const daysIn = (pass: ListingPass | undefined) =>
  pass === undefined ? 0 : (Date.parse(pass.toDate!) - Date.parse(pass.fromDate!)) / 86_400_000 + 1;

describe('dates', () => {
  it('are Kenyan dates (UTC+3) and add across months and leap years', () => {
    expect(todayInKenya(NOW)).toBe(TODAY);
    expect(todayInKenya(Date.parse('2026-11-27T20:59:59.999Z'))).toBe('2026-11-27');
    expect(addDays(TODAY, -730)).toBe(OLDEST);
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });
});

describe('previousSync: what the schedule handed over', () => {
  const sweep: SweepState = { next: '2026-10-01', completedAt: null, syncedAt: iso(NOW - 15 * MINUTE) };

  it('takes the sweep and the invoices in review from a result of this release, for the same business only', () => {
    const inReview = { '2025-06-01': ['pur_a', 'pur_b'] };
    const result = { businessId: 'biz', counts: {}, sweep, inReview };
    const none = { ids: {}, overflow: false };
    expect(previousSync(result, 'biz')).toEqual({ sweep, inReview, pending: none });
    const pending = { '2025-05-01': ['pur_c'] };
    expect(previousSync({ ...result, pending, pendingOverflow: true }, 'biz').pending).toEqual({
      ids: pending,
      overflow: true,
    });
    // No migration from a result of this shape, whatever else it carries.
    expect(previousSync({ ...result, ledger: { pur_a: ['fa', 0, 'pulled'] } }, 'biz').migrating).toBeUndefined();
    // A malformed review record is dropped, not the sweep.
    expect(previousSync({ ...result, inReview: { '2025-06-01': 'pur_a' } }, 'biz')).toEqual({
      sweep,
      inReview: {},
      pending: none,
    });
    expect(previousSync({ ...result, businessId: 'other' }, 'biz')).toEqual({});
  });

  it('moves a ledger carried whole (2.x) into the migration, keeping only well-formed entries and statuses told', () => {
    const ledger = { pur_a: ['fa', 0, 'pulled'], pur_b: ['fb', 2, 'confirmed'], bad: ['x', -1, 'pulled'], worse: 'no' };
    const told = { pur_b: 'confirmed', odd: 3 };
    expect(previousSync({ businessId: 'biz', ledger, told, counts: {} }, 'biz')).toEqual({
      migrating: {
        ledger: { pur_a: ['fa', 0, 'pulled'], pur_b: ['fb', 2, 'confirmed'] },
        told: { pur_b: 'confirmed' },
      },
    });
    // 2.0 carried no statuses told.
    expect(previousSync({ businessId: 'biz', ledger: { pur_a: ['fa', 0, 'pulled'] } }, 'biz')).toEqual({
      migrating: { ledger: { pur_a: ['fa', 0, 'pulled'] }, told: {} },
    });
    // Another business's ledger is not this one's: nothing to migrate, a first sync.
    expect(previousSync({ businessId: 'other', ledger, told }, 'biz')).toEqual({});
  });

  it('finds nothing in no result or a result of no known shape: the business’s first sync', () => {
    for (const nothing of [undefined, null, 'text', 42, {}, { businessId: 'biz' }, { businessId: 'biz', ledger: 'x' }])
      expect(previousSync(nothing, 'biz')).toEqual({});
    // A sweep in the wrong shape is not one.
    expect(previousSync({ businessId: 'biz', sweep: { next: 3 }, inReview: {} }, 'biz')).toEqual({});
  });
});

describe('planListings', () => {
  const previous = (next: string | null, sinceMs: number, completedAt: string | null = null): SweepState => ({
    next,
    completedAt,
    syncedAt: iso(NOW - sinceMs),
  });

  it('a first sync lists the whole horizon once, and hands on a completed sweep starting again at the window', () => {
    expect(planListings(DEFAULTS, NOW, undefined)).toEqual({
      passes: [{ name: 'full', fromDate: OLDEST }],
      sweep: { next: null, completedAt: iso(NOW), syncedAt: iso(NOW) },
    });
    expect(planListings({ ...DEFAULTS, horizonDays: 30 }, NOW, undefined).passes).toEqual([
      { name: 'full', fromDate: addDays(TODAY, -30) },
    ]);
  });

  it('a later sync lists the review statuses over the horizon, the recent window, then one slice of the sweep', () => {
    const completedAt = iso(NOW - 3 * HOUR);
    const plan = planListings(DEFAULTS, NOW, previous(null, 15 * MINUTE, completedAt));
    // 15 minutes of 24 hours: ceil(723 / 96) = 8 days, from the day before the window backwards.
    expect(plan.passes).toEqual([
      { name: 'pulled', status: 'pulled', fromDate: OLDEST },
      { name: 'pending_review', status: 'pending_review', fromDate: OLDEST },
      { name: 'recent', fromDate: '2026-11-21' },
      { name: 'sweep', fromDate: '2026-11-13', toDate: SWEEP_START },
    ]);
    expect(plan.sweep).toEqual({ next: '2026-11-12', completedAt, syncedAt: iso(NOW) });

    // The next slice starts where this one stopped.
    const after = planListings(DEFAULTS, NOW + 15 * MINUTE, plan.sweep);
    expect(sweepOf(after.passes)).toEqual({ name: 'sweep', fromDate: '2026-11-05', toDate: '2026-11-12' });
    expect(after.sweep.next).toBe('2026-11-04');
  });

  it.each([
    [15 * MINUTE, 8],
    [HOUR, 31], // ceil(723 / 24)
    [6 * HOUR, 181],
    // Back to back (or a clock gone backwards): sized as 15 minutes, never nothing.
    [0, 8],
    [-HOUR, 8],
  ])('sizes the slice by the time since the last sync: %i ms, %i days', (sinceMs, days) => {
    const plan = planListings(DEFAULTS, NOW, previous(null, sinceMs));
    expect(daysIn(sweepOf(plan.passes))).toBe(days);
    expect(sweepOf(plan.passes)!.toDate).toBe(SWEEP_START);
  });

  it('sizes it by sweepHours: one sync after sweepHours or more lists the whole rest of the horizon', () => {
    expect(daysIn(sweepOf(planListings({ ...DEFAULTS, sweepHours: 1 }, NOW, previous(null, 15 * MINUTE)).passes))).toBe(
      Math.ceil(REGION_DAYS / 4),
    );
    for (const sinceMs of [24 * HOUR, 3 * 24 * HOUR]) {
      const plan = planListings(DEFAULTS, NOW, previous(null, sinceMs));
      expect(sweepOf(plan.passes)).toEqual({ name: 'sweep', fromDate: OLDEST, toDate: SWEEP_START });
      expect(plan.sweep).toEqual({ next: null, completedAt: iso(NOW), syncedAt: iso(NOW) });
    }
  });

  it('wraps around at the horizon: the slice stops at its end, the sweep is complete, the next starts at the window', () => {
    const plan = planListings(DEFAULTS, NOW, previous(addDays(OLDEST, 3), HOUR, iso(NOW - 30 * HOUR)));
    expect(sweepOf(plan.passes)).toEqual({ name: 'sweep', fromDate: OLDEST, toDate: addDays(OLDEST, 3) });
    expect(plan.sweep).toEqual({ next: null, completedAt: iso(NOW), syncedAt: iso(NOW) });
    const next = planListings(DEFAULTS, NOW + HOUR, plan.sweep);
    expect(sweepOf(next.passes)!.toDate).toBe(SWEEP_START);
    expect(next.sweep.completedAt).toBe(iso(NOW));
  });

  it('a slice ending exactly at the horizon completes the sweep', () => {
    const plan = planListings(DEFAULTS, NOW, previous(addDays(OLDEST, 7), 15 * MINUTE));
    expect(sweepOf(plan.passes)).toEqual({ name: 'sweep', fromDate: OLDEST, toDate: addDays(OLDEST, 7) });
    expect(plan.sweep.next).toBeNull();
    expect(plan.sweep.completedAt).toBe(iso(NOW));
  });

  it('starts again at the window’s edge when the sweep stood inside the window or past the horizon', () => {
    for (const next of ['2026-11-25', TODAY, '2026-12-30', '2020-01-01', addDays(OLDEST, -1)]) {
      const plan = planListings(DEFAULTS, NOW, previous(next, 15 * MINUTE));
      expect(sweepOf(plan.passes), next).toEqual({ name: 'sweep', fromDate: '2026-11-13', toDate: SWEEP_START });
    }
    // The day the window just left is the sweep's first.
    expect(sweepOf(planListings(DEFAULTS, NOW, previous(SWEEP_START, 15 * MINUTE)).passes)!.toDate).toBe(SWEEP_START);
  });

  it('lists every date of the horizon at least once in sweepHours of syncs, whatever the interval', () => {
    for (const intervalMs of [15 * MINUTE, 10 * MINUTE, 7 * MINUTE, HOUR, 6 * HOUR]) {
      let sweep: SweepState = { next: null, completedAt: iso(NOW), syncedAt: iso(NOW) };
      let t = NOW;
      // Dates listed since the start, and when each sweep completed.
      const listedDates = new Set<string>();
      const completions: number[] = [];
      while (t < NOW + 24 * HOUR) {
        t += intervalMs;
        const plan = planListings(DEFAULTS, t, sweep);
        const slice = sweepOf(plan.passes)!;
        for (let d = slice.fromDate!; d <= slice.toDate!; d = addDays(d, 1)) listedDates.add(d);
        if (plan.sweep.completedAt !== sweep.completedAt) completions.push(t);
        sweep = plan.sweep;
      }
      expect(completions.length, `every ${intervalMs / MINUTE} min`).toBeGreaterThanOrEqual(1);
      expect(completions[0]! - NOW).toBeLessThanOrEqual(24 * HOUR);
      // Every date from the horizon to the window's edge as the sweep began (a day the window left since is listed
      // by the recent pass until it leaves, then first in the next sweep).
      const end = todayInKenya(completions[0]!);
      for (let d = addDays(end, -730); d <= SWEEP_START; d = addDays(d, 1))
        expect(listedDates.has(d), `${d} every ${intervalMs / MINUTE} min`).toBe(true);
    }
  });

  it('follows the options: a wider window, a shorter horizon', () => {
    const plan = planListings({ windowDays: 30, horizonDays: 60, sweepHours: 24 }, NOW, previous(null, 24 * HOUR));
    expect(plan.passes).toEqual([
      { name: 'pulled', status: 'pulled', fromDate: '2026-09-29' },
      { name: 'pending_review', status: 'pending_review', fromDate: '2026-09-29' },
      { name: 'recent', fromDate: '2026-10-29' },
      { name: 'sweep', fromDate: '2026-09-29', toDate: '2026-10-28' },
    ]);
  });
});

describe('diffPage', () => {
  it('is due a received event for an invoice the books do not hold, a change for a new fingerprint, nothing for the same', () => {
    const known: PurchaseLedger = { pur_b: ['fb', 0, 'pulled'], pur_c: ['fc', 2, 'confirmed'] };
    const asked: string[] = [];
    const diff = diffPage(
      'biz',
      [listed('pur_a', 'pulled', 'fa'), listed('pur_b', 'confirmed', 'fb2'), listed('pur_c', 'confirmed', 'fc')],
      (id) => (asked.push(id), known[id]),
    );
    expect(asked).toEqual(['pur_a', 'pur_b', 'pur_c']);
    expect(diff).toMatchObject({ seen: 3, newInvoices: 1, statusChanges: 1 });
    expect(diff.due.map((d) => [d.event.id, d.event.type, d.event.businessId, d.event.previousStatus])).toEqual([
      ['purchase.pur_a.v0.fa', 'purchase.received', 'biz', undefined],
      ['purchase.pur_b.v1.fb2', 'purchase.status_changed', 'biz', 'pulled'],
    ]);
    expect('previousStatus' in diff.due[0]!.event).toBe(false);
    // The entries the books take once delivered.
    expect(diff.due.map((d) => d.entry)).toEqual([
      ['fa', 0, 'pulled'],
      ['fb2', 1, 'confirmed'],
    ]);
  });

  it('an undelivered change is due again under the same id; a status that goes back gets a new one', () => {
    const known: PurchaseLedger = { pur_b: ['fb', 0, 'pending_review'] };
    const once = diffPage('biz', [listed('pur_b', 'rejected', 'frej')], (id) => known[id]);
    const again = diffPage('biz', [listed('pur_b', 'rejected', 'frej')], (id) => known[id]);
    expect(again.due.map((d) => d.event.id)).toEqual(once.due.map((d) => d.event.id));

    let entry: LedgerEntry = once.due[0]!.entry;
    entry = diffPage('biz', [listed('pur_b', 'pending_review', 'fb')], () => entry).due[0]!.entry;
    const back = diffPage('biz', [listed('pur_b', 'rejected', 'frej')], () => entry).due[0]!;
    expect(back.event.id).toBe('purchase.pur_b.v3.frej');
    expect(back.event.id).not.toBe(once.due[0]!.event.id);
  });
});

describe('bookWrites', () => {
  const a = listed('pur_a', 'pulled', 'fa');
  const b = listed('pur_b', 'confirmed', 'fb');
  const c = listed('pur_c', 'confirmed', 'fc');

  it('writes the entry of each event delivered and each status told, nothing for an invoice with neither', () => {
    const due = diffPage('biz', [a, b, c], () => undefined).due;
    // Two of three delivered (the sink went down), one told.
    expect(bookWrites([a, b, c], {}, due.slice(0, 2), { pur_b: 'confirmed' }, undefined)).toEqual([
      { id: 'pur_a', invoiceDate: '2025-06-01', entry: ['fa', 0, 'pulled'] },
      { id: 'pur_b', invoiceDate: '2025-06-01', entry: ['fb', 0, 'confirmed'], told: 'confirmed' },
    ]);
    expect(bookWrites([a, b, c], {}, [], {}, undefined)).toEqual([]);
  });

  it('moves what a 2.x ledger knew into the books only where the books lack it', () => {
    const booked: Record<string, BookedPurchase> = {
      pur_a: { entry: ['fa', 4, 'pulled'], told: 'pulled' },
      pur_b: { told: 'confirmed' },
    };
    const migrating = {
      ledger: {
        pur_a: ['fa', 1, 'pulled'],
        pur_b: ['fb', 2, 'confirmed'],
        pur_c: ['fc0', 0, 'pending_review'],
        pur_z: ['fz', 0, 'pulled'],
      } as PurchaseLedger,
      told: { pur_a: 'confirmed', pur_b: 'pending_review', pur_c: 'confirmed', pur_z: 'confirmed' },
    };
    // pur_c changed and its event did not get through: the books take the migrated entry, so the next sync sends
    // the change again under the same id (version 1), not as a new invoice.
    expect(bookWrites([a, b, c], booked, [], {}, migrating)).toEqual([
      { id: 'pur_b', invoiceDate: '2025-06-01', entry: ['fb', 2, 'confirmed'] },
      { id: 'pur_c', invoiceDate: '2025-06-01', entry: ['fc0', 0, 'pending_review'], told: 'confirmed' },
    ]);
    // What this sync delivered and told wins over what the migration knew.
    const delivered = diffPage('biz', [c], (id) => migrating.ledger[id]).due;
    expect(delivered.map((d) => d.event.id)).toEqual(['purchase.pur_c.v1.fc']);
    expect(bookWrites([c], {}, delivered, { pur_c: 'rejected' }, migrating)).toEqual([
      { id: 'pur_c', invoiceDate: '2025-06-01', entry: ['fc', 1, 'confirmed'], told: 'rejected' },
    ]);
  });
});

describe('invoices in review', () => {
  it('notes the invoices in a review status by date, once each', () => {
    const inReview = { '2025-06-01': ['pur_x'] };
    noteInReview(inReview, [
      listed('pur_a', 'pulled', 'fa'),
      listed('pur_b', 'pending_review', 'fb', '2025-05-01'),
      listed('pur_c', 'confirmed', 'fc'),
      listed('pur_d', 'rejected', 'fd'),
      listed('pur_a', 'pulled', 'fa'),
    ]);
    expect(inReview).toEqual({ '2025-06-01': ['pur_x', 'pur_a'], '2025-05-01': ['pur_b'] });
  });

  it('lists again, newest first, each date of an invoice that left review, unless this sync lists that date anyway', () => {
    const before = {
      '2025-01-10': ['pur_a'],
      '2025-03-01': ['pur_b', 'pur_c'],
      '2025-04-01': ['pur_d'],
      '2026-11-25': ['pur_e'],
    };
    const now = { '2025-03-01': ['pur_c', 'pur_b'], '2025-04-01': ['pur_f'] };
    const anyway = (date: string) => date >= '2026-11-21';
    expect(leftReview(before, now, anyway)).toEqual([
      { name: 'left_review', fromDate: '2025-04-01', toDate: '2025-04-01' },
      { name: 'left_review', fromDate: '2025-01-10', toDate: '2025-01-10' },
    ]);
    expect(leftReview(before, before, () => false)).toEqual([]);
    expect(leftReview({}, now, () => false)).toEqual([]);
    expect(leftReview(before, {}, () => true)).toEqual([]);
  });
});

describe('events left pending', () => {
  const due = (id: string, invoiceDate: string) =>
    diffPage('biz', [listed(id, 'confirmed', 'f', invoiceDate)], () => undefined).due;

  it('remembers the invoices whose event was not delivered, by date, up to a bound', () => {
    const pending = {};
    expect(notePending(pending, [...due('pur_a', '2025-01-02'), ...due('pur_b', '2025-01-02')])).toBe(true);
    expect(notePending(pending, due('pur_a', '2025-01-02'))).toBe(true);
    expect(pending).toEqual({ '2025-01-02': ['pur_a', 'pur_b'] });
    const full = Object.fromEntries(
      Array.from({ length: IN_REVIEW_KEPT }, (_, i) => [`d${String(i).padStart(5, '0')}`, [`pur_${i}`]]),
    );
    expect(notePending(full, due('pur_new', '2025-01-03'))).toBe(false);
  });

  it('lists their dates again, outside the window, in at most eight ranges merging the closest first', () => {
    const ids = (dates: string[]) => Object.fromEntries(dates.map((d) => [d, ['pur_x']]));
    expect(pendingPasses(ids(['2025-01-02', '2026-11-27']), '2026-11-21')).toEqual([
      { name: 'pending', fromDate: '2025-01-02', toDate: '2025-01-02' },
    ]);
    const many = Array.from({ length: 20 }, (_, i) => addDays('2025-01-01', i * 10));
    const passes = pendingPasses(ids(many), '2026-11-21');
    expect(passes).toHaveLength(8);
    // Every pending date is in a range, newest range first.
    for (const date of many) expect(passes.some((p) => p.fromDate! <= date && date <= p.toDate!)).toBe(true);
    expect(passes[0]!.toDate).toBe(many.at(-1));
  });

  it('a predecessor that left more pending than it remembers: the whole horizon', () => {
    const plan = planListings(
      DEFAULTS,
      NOW,
      { next: null, completedAt: null, syncedAt: iso(NOW - HOUR) },
      {
        ids: {},
        overflow: true,
      },
    );
    expect(plan.passes).toEqual([{ name: 'full', fromDate: OLDEST }]);
  });
});

describe('invoices in review, bounded', () => {
  it('remembers at most IN_REVIEW_KEPT, the newest-dated first; the rest are left to the sweep', () => {
    const inReview = {};
    const page = Array.from({ length: IN_REVIEW_KEPT + 10 }, (_, i) => listed(`pur_${i}`, 'pending_review', 'f'));
    noteInReview(inReview, page);
    expect(Object.values(inReview).flat()).toHaveLength(IN_REVIEW_KEPT);
  });
});

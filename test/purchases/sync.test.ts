import { describe, expect, it } from 'vitest';
import { createPurchasesBookActivities } from '../../activities/purchases-book.js';
import { DEFAULT_PURCHASES_HORIZON_DAYS } from '../../src/contracts/purchases-book.js';
import { openNdjsonSink } from '../../src/purchases/event-sink.js';
import type { PurchasesSyncResult } from '../../src/contracts/purchases-sync.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { DEMO, duplicates, eventsIn, supplierInvoice, usePurchasesStack, useTempDir } from './harness.js';

const tmp = useTempDir();
const file = () => tmp.path('events.ndjson');
// Pages of 20, so the 48 invoices of the demo's Nairobi business take three pages and an old invoice lands on the last.
const stack = usePurchasesStack(() => ({ sink: () => openNdjsonSink(file()), syncOptions: { pageSize: 20 } }));

const nothingHappened = (r: PurchasesSyncResult) => ({
  newInvoices: r.counts.newInvoices,
  statusChanges: r.counts.statusChanges,
  delivered: r.counts.delivered,
  pending: r.counts.pending,
});

/** Requests to the purchases routes (the pull and the list), as the sandbox logged them. */
const purchasesRequests = () =>
  stack.sandbox.stats.records({ service: 'compliance' }).filter((r) => r.route.startsWith('/v1/purchases')).length;

/** What the purchases books hold of these invoices, read as the sync reads them (updates of the book workflows). */
async function booked(ids: readonly string[]) {
  const invoices = (await stack.purchases())
    .filter((p) => ids.includes(p.purchase.id))
    .map(({ purchase: { id, invoiceDate } }) => ({ id, invoiceDate }));
  expect(invoices).toHaveLength(ids.length);
  return createPurchasesBookActivities({ temporal: { client: stack.client } }).readPurchaseBooks({
    businessId: DEMO.businesses.nairobi,
    taskQueue: stack.taskQueue,
    horizonDays: DEFAULT_PURCHASES_HORIZON_DAYS,
    invoices,
  });
}

/** The day before the recent window, where the sweep starts (dates are Kenyan). */
const sweepStart = () => addDays(todayInKenya(Date.now()), -8);
const horizonStart = () => addDays(todayInKenya(Date.now()), -DEFAULT_PURCHASES_HORIZON_DAYS);
/** Invoice ids by invoice date, each date's sorted: the order they were listed in does not matter. */
const sortedReview = (inReview: Record<string, string[]>) =>
  Object.fromEntries(Object.entries(inReview).map(([date, ids]) => [date, [...ids].sort()]));

describe('purchases sync (real workflow, schedule, sandbox over HTTP, NDJSON sink)', () => {
  let first: PurchasesSyncResult;

  it('delivers every supplier invoice once in the sync the worker schedules at start-up, in 1 + pages calls', async () => {
    first = await stack.firstSync();
    const visible = (await stack.purchases()).filter((p) => p.visible);
    const ids = visible.map((p) => p.purchase.id);
    expect(ids).toHaveLength(48); // 45 listed at the start, 3 the pull fetched
    // A business's first sync lists the whole horizon, once.
    expect(purchasesRequests()).toBe(1 + 3);
    expect(first.counts).toEqual({
      pages: 3,
      seen: 48,
      newInvoices: 48,
      statusChanges: 0,
      delivered: 48,
      pending: 0,
    });
    const events = await eventsIn(file());
    expect(events.map((e) => e.purchase.id).sort()).toEqual([...ids].sort());
    expect(
      events.every(
        (e) =>
          e.type === 'purchase.received' && e.businessId === DEMO.businesses.nairobi && e.previousStatus === undefined,
      ),
    ).toBe(true);
    expect(events.every((e) => e.id.startsWith(`purchase.${e.purchase.id}.v0.`))).toBe(true);
    // What was delivered of each is in the books, not in the result.
    const books = await booked(ids);
    expect(Object.keys(books).sort()).toEqual([...ids].sort());
    for (const { purchase } of visible) {
      expect(books[purchase.id]!.entry).toEqual([expect.stringMatching(/^[0-9a-f]{12}$/), 0, purchase.status]);
    }
    expect('ledger' in first).toBe(false);
    // The invoices in review, handed to the next sync; the sweep complete, starting again at the window.
    const inReview = visible
      .filter((p) => p.purchase.status === 'pulled' || p.purchase.status === 'pending_review')
      .map((p) => p.purchase.id);
    expect(Object.values(first.inReview).flat().sort()).toEqual([...inReview].sort());
    expect(first.sweep).toEqual({ next: null, completedAt: first.sweep.syncedAt, syncedAt: expect.any(String) });
  });

  it('hands where its listings stand to the next sync through the schedule: nothing new, the review statuses, the window and a slice of the sweep listed', async () => {
    const before = purchasesRequests();
    const second = await stack.sync();
    expect(nothingHappened(second)).toEqual({ newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 });
    // The 11 pulled and the 15 pending review, a page each; the window (no demo invoice is that recent) and the
    // sweep's first slice, an empty page each. Handed nothing, it would have listed the whole horizon again.
    expect(second.counts).toMatchObject({ pages: 4, seen: 26 });
    expect(purchasesRequests() - before).toBe(1 + 4);
    expect(second.sweep.completedAt).toBe(first.sweep.completedAt);
    expect(second.sweep.next! < sweepStart()).toBe(true);
    expect(second.sweep.next! > horizonStart()).toBe(true);
    expect(sortedReview(second.inReview)).toEqual(sortedReview(first.inReview));
    expect(await eventsIn(file())).toHaveLength(48);
  });

  it('delivers an invoice pulled late with an old date, and tells apart two suppliers using the same invoice number', async () => {
    const oldest = (await stack.purchases()).map((p) => p.purchase.invoiceDate).sort()[0]!;
    await stack.addPurchase(supplierInvoice('pur_late_a', '2025-01-15', { supplierInvoiceNumber: 'INV-2400' }));
    await stack.addPurchase(
      supplierInvoice('pur_late_b', '2025-01-15', {
        supplierInvoiceNumber: 'INV-2400',
        supplier: { name: 'Another Supplier', pin: 'P051188888Y' },
      }),
    );
    expect('2025-01-15' < oldest).toBe(true);

    const result = await stack.sync();
    // The pull fetched them in review ('pulled'): that pass lists them, whatever their date, behind any watermark.
    expect(result.counts).toMatchObject({ pages: 4, seen: 28, newInvoices: 2, delivered: 2, pending: 0 });
    const late = (await eventsIn(file())).slice(48);
    expect(late.map((e) => [e.type, e.purchase.id, e.purchase.invoiceDate])).toEqual([
      ['purchase.received', 'pur_late_b', '2025-01-15'],
      ['purchase.received', 'pur_late_a', '2025-01-15'],
    ]);
    // INV-2400 is also the number of a demo invoice of another supplier: three invoices, one number, all kept apart.
    const books = await booked(['pur_late_a', 'pur_late_b', 'pur_nbo_001']);
    expect(Object.keys(books).sort()).toEqual(['pur_late_a', 'pur_late_b', 'pur_nbo_001']);
    expect(books.pur_late_a!.entry![1]).toBe(0);
    expect(books.pur_late_b!.entry![1]).toBe(0);
    expect(new Set(late.map((e) => e.id)).size).toBe(2);
  });

  it('delivers each status change of an invoice in review once, at the next sync whatever its date, with the previous status; a status that goes back gets a new event id', async () => {
    const target = (await stack.purchases()).find((p) => p.visible && p.purchase.status === 'pending_review')!.purchase;
    // Months older than the window: listed again by its date because it left review.
    expect(target.invoiceDate < sweepStart()).toBe(true);
    await stack.review(target.id, 'rejected', 'Quantities differ from the delivery note');
    const rejected = await stack.sync();
    expect(nothingHappened(rejected)).toEqual({ newInvoices: 0, statusChanges: 1, delivered: 1, pending: 0 });
    expect(nothingHappened(await stack.sync())).toEqual({ newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 });

    await stack.review(target.id, 'pending_review');
    await stack.sync();
    await stack.review(target.id, 'rejected', 'Quantities differ from the delivery note');
    await stack.sync();

    const changes = (await eventsIn(file())).filter(
      (e) => e.purchase.id === target.id && e.type === 'purchase.status_changed',
    );
    expect(changes.map((e) => [e.previousStatus, e.purchase.status, e.purchase.confirmationError])).toEqual([
      ['pending_review', 'rejected', 'Quantities differ from the delivery note'],
      ['rejected', 'pending_review', null],
      ['pending_review', 'rejected', 'Quantities differ from the delivery note'],
    ]);
    // Same state twice (rejected), two facts: the version keeps the second from being dropped as a duplicate.
    expect(changes[0]!.id.replace(/\.v\d+\./, '.')).toBe(changes[2]!.id.replace(/\.v\d+\./, '.'));
    expect(changes[0]!.id).not.toBe(changes[2]!.id);
  });

  it(
    'the sweep reaches a confirmed invoice older than the window that was rejected: delivered once its slice gets to the invoice’s date, not before',
    { timeout: 180_000 },
    async () => {
      // A few days past where the sweep stands now (each sync here lists a day or so of it).
      let previous = await stack.sync();
      const date = addDays(previous.sweep.next ?? sweepStart(), -8);
      await stack.addPurchase(supplierInvoice('pur_swept', date));
      expect((await stack.sync()).counts).toMatchObject({ newInvoices: 1, delivered: 1 });
      await stack.review('pur_swept', 'confirmed');
      previous = await stack.sync();
      expect(previous.counts).toMatchObject({ statusChanges: 1, delivered: 1 });

      await stack.review('pur_swept', 'rejected', 'Goods returned to the supplier');
      // Neither in review nor in the window: only the sweep lists it. Each sync's slice, from the sweep it was handed
      // and the one it hands on.
      const syncs: Array<{ from: string; to: string; statusChanges: number }> = [];
      while (syncs.length < 30 && !syncs.some((s) => s.statusChanges > 0)) {
        const result = await stack.sync();
        syncs.push({
          from: result.sweep.next === null ? horizonStart() : addDays(result.sweep.next, 1),
          to: previous.sweep.next ?? sweepStart(),
          statusChanges: result.counts.statusChanges,
        });
        previous = result;
      }
      const at = syncs.findIndex((s) => s.statusChanges > 0);
      expect(at).toBeGreaterThanOrEqual(1);
      expect(syncs.findIndex((s) => s.from <= date && date <= s.to)).toBe(at);
      expect(syncs[at]!.statusChanges).toBe(1);
      const changes = (await eventsIn(file())).filter((e) => e.purchase.id === 'pur_swept');
      expect(changes.map((e) => [e.type, e.previousStatus, e.purchase.status])).toEqual([
        ['purchase.received', undefined, 'pulled'],
        ['purchase.status_changed', 'pulled', 'confirmed'],
        ['purchase.status_changed', 'confirmed', 'rejected'],
      ]);
    },
  );

  it('never wrote an event twice', async () => {
    const ids = (await eventsIn(file())).map((e) => e.id);
    expect(duplicates(ids)).toEqual([]);
    expect(ids).toHaveLength(48 + 2 + 3 + 3);
  });
});

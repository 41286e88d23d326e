import { describe, expect, it } from 'vitest';
import { openNdjsonSink } from '../../src/purchases/event-sink.js';
import type { PurchasesSyncResult } from '../../src/contracts/purchases-sync.js';
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

describe('purchases sync (real workflow, schedule, sandbox over HTTP, NDJSON sink)', () => {
  let first: PurchasesSyncResult;

  it('delivers every supplier invoice once in the sync the worker schedules at start-up, in 1 + pages calls', async () => {
    first = await stack.firstSync();
    const visible = (await stack.purchases()).filter((p) => p.visible).map((p) => p.purchase.id);
    expect(visible).toHaveLength(48); // 45 listed at the start, 3 the pull fetched
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
    expect(events.map((e) => e.purchase.id).sort()).toEqual([...visible].sort());
    expect(
      events.every(
        (e) =>
          e.type === 'purchase.received' && e.businessId === DEMO.businesses.nairobi && e.previousStatus === undefined,
      ),
    ).toBe(true);
    expect(events.every((e) => e.id.startsWith(`purchase.${e.purchase.id}.v0.`))).toBe(true);
    expect(Object.keys(first.ledger).sort()).toEqual([...visible].sort());
  });

  it('hands its ledger to the next sync through the schedule: nothing new, the same number of calls', async () => {
    const before = purchasesRequests();
    const second = await stack.sync();
    expect(nothingHappened(second)).toEqual({ newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 });
    expect(purchasesRequests() - before).toBe(4);
    expect(second.ledger).toEqual(first.ledger);
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
    // The pull fetched them; the list put them last (newest first), behind any invoice-date watermark.
    expect(result.counts).toMatchObject({ pages: 3, seen: 50, newInvoices: 2, delivered: 2, pending: 0 });
    const late = (await eventsIn(file())).slice(48);
    expect(late.map((e) => [e.type, e.purchase.id, e.purchase.invoiceDate])).toEqual([
      ['purchase.received', 'pur_late_b', '2025-01-15'],
      ['purchase.received', 'pur_late_a', '2025-01-15'],
    ]);
    // INV-2400 is also the number of a demo invoice of another supplier: three invoices, one number, all kept apart.
    expect(Object.keys(result.ledger)).toEqual(expect.arrayContaining(['pur_late_a', 'pur_late_b', 'pur_nbo_001']));
  });

  it('delivers each status change once, with the previous status; a status that goes back gets a new event id', async () => {
    const target = (await stack.purchases()).find((p) => p.visible && p.purchase.status === 'pending_review')!.purchase
      .id;
    await stack.review(target, 'rejected', 'Quantities differ from the delivery note');
    const rejected = await stack.sync();
    expect(nothingHappened(rejected)).toEqual({ newInvoices: 0, statusChanges: 1, delivered: 1, pending: 0 });
    expect(nothingHappened(await stack.sync())).toEqual({ newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 });

    await stack.review(target, 'pending_review');
    await stack.sync();
    await stack.review(target, 'rejected', 'Quantities differ from the delivery note');
    await stack.sync();

    const changes = (await eventsIn(file())).filter(
      (e) => e.purchase.id === target && e.type === 'purchase.status_changed',
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

  it('never wrote an event twice', async () => {
    const ids = (await eventsIn(file())).map((e) => e.id);
    expect(duplicates(ids)).toEqual([]);
    expect(ids).toHaveLength(48 + 2 + 3);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSink } from '../../src/purchases/event-sink.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { DEMO, duplicates, supplierInvoice, usePurchasesStack } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MOMBASA = DEMO.businesses.mombasa;

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver(SECRET);
  // The first sync runs as the worker starts: the receiver is down for its first three deliveries.
  receiver.answer((n) => (n <= 3 ? 503 : 200));
});
afterAll(async () => {
  await receiver.close();
});

// Four attempts per batch, 200 ms apart at first: the sink's "few minutes" shortened for a test.
const stack = usePurchasesStack(() => ({
  businessIds: [MOMBASA],
  sink: async () => webhookSink({ url: receiver.url, secret: SECRET }),
  syncOptions: { deliveryAttempts: 4, deliveryRetryInterval: '200 ms' },
}));

const mombasaInvoice = (id: string, invoiceDate = '2025-03-01', more: Record<string, unknown> = {}) =>
  supplierInvoice(id, invoiceDate, { branchId: DEMO.branches.mombasaNyali, ...more });
/**
 * Dated yesterday (a Kenyan date): inside the recent window every sync lists, so a change of it that the receiver did
 * not take is found again by the next sync. (An older invoice that is not in review waits for the sweep's slice.)
 */
const RECENT = 'pur_msa_recent';

describe('purchases sync to a signed webhook', () => {
  it('retries a batch while the receiver answers 503, then delivers every event once, each signature valid', async () => {
    const first = await stack.firstSync();
    expect(first.counts).toMatchObject({ seen: 8, newInvoices: 8, delivered: 8, pending: 0 });
    expect(receiver.received.slice(0, 3).map((r) => r.status)).toEqual([503, 503, 503]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(receiver.acknowledged()).toHaveLength(8);
    expect(duplicates(receiver.acknowledged())).toEqual([]);
  });

  it('with the receiver down for a whole sync: the sync completes with the events pending, and the next one delivers them', async () => {
    await stack.addPurchase(
      mombasaInvoice(RECENT, addDays(todayInKenya(Date.now()), -1), { status: 'confirmed' }),
      MOMBASA,
    );
    expect((await stack.sync(MOMBASA)).counts).toMatchObject({ newInvoices: 1, delivered: 1, pending: 0 });

    await stack.addPurchase(mombasaInvoice('pur_msa_late_1'), MOMBASA);
    await stack.addPurchase(mombasaInvoice('pur_msa_late_2'), MOMBASA);
    await stack.review(RECENT, 'rejected', 'Wrong PIN on the invoice');
    receiver.answer(503);
    const down = await stack.sync(MOMBASA);
    expect(down.counts).toMatchObject({ newInvoices: 2, statusChanges: 1, delivered: 0, pending: 3 });
    expect(receiver.acknowledged()).toHaveLength(8 + 1);
    expect(receiver.acknowledged().some((id) => /^purchase\.pur_msa_late_/.test(id))).toBe(false);

    // Up for one delivery, down again: the one delivered is recorded, the other two stay pending.
    let up = 1;
    receiver.answer(() => (up-- > 0 ? 200 : 503));
    const flaky = await stack.sync(MOMBASA);
    expect(flaky.counts).toMatchObject({ newInvoices: 2, statusChanges: 1, delivered: 1, pending: 2 });

    receiver.answer(200);
    const back = await stack.sync(MOMBASA);
    // The new invoices are listed first (in review), the change in the window after them.
    expect(back.counts).toMatchObject({ newInvoices: 1, statusChanges: 1, delivered: 2, pending: 0 });

    const acknowledged = receiver.acknowledged();
    expect(duplicates(acknowledged)).toEqual([]);
    expect(acknowledged).toHaveLength(8 + 1 + 3);
    const received = receiver.received.filter((r) => r.status === 200).map((r) => r.event!);
    expect(
      received
        .filter((e) => e.type === 'purchase.status_changed')
        .map((e) => [e.purchase.id, e.previousStatus, e.purchase.status]),
    ).toEqual([[RECENT, 'confirmed', 'rejected']]);
    expect(received.filter((e) => e.type === 'purchase.received').map((e) => e.purchase.id)).toEqual(
      expect.arrayContaining([RECENT, 'pur_msa_late_1', 'pur_msa_late_2']),
    );
  });

  it('a receiver refusing an event (4xx) is not retried in that sync; a later sync delivers it once accepted', async () => {
    await stack.review(RECENT, 'confirmed');
    receiver.answer(422);
    const before = receiver.received.length;
    const refused = await stack.sync(MOMBASA);
    expect(refused.counts).toMatchObject({ statusChanges: 1, delivered: 0, pending: 1 });
    expect(receiver.received.length - before).toBe(1);

    receiver.answer(200);
    expect((await stack.sync(MOMBASA)).counts).toMatchObject({ statusChanges: 1, delivered: 1, pending: 0 });
    expect(duplicates(receiver.acknowledged())).toEqual([]);
  });
});

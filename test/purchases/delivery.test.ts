import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookSink } from '../../src/purchases/event-sink.js';
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

const mombasaInvoice = (id: string) => supplierInvoice(id, '2025-03-01', { branchId: DEMO.branches.mombasaNyali });

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
    await stack.addPurchase(mombasaInvoice('pur_msa_late_1'), MOMBASA);
    await stack.addPurchase(mombasaInvoice('pur_msa_late_2'), MOMBASA);
    await stack.review('pur_msa_001', 'rejected', 'Wrong PIN on the invoice');
    receiver.answer(503);
    const down = await stack.sync(MOMBASA);
    expect(down.counts).toMatchObject({ newInvoices: 2, statusChanges: 1, delivered: 0, pending: 3 });
    expect(down.ledger.pur_msa_late_1).toBeUndefined();
    expect(receiver.acknowledged()).toHaveLength(8);

    // Up for one delivery, down again: the one delivered is recorded, the other two stay pending.
    let up = 1;
    receiver.answer(() => (up-- > 0 ? 200 : 503));
    const flaky = await stack.sync(MOMBASA);
    expect(flaky.counts).toMatchObject({ newInvoices: 2, statusChanges: 1, delivered: 1, pending: 2 });

    receiver.answer(200);
    const back = await stack.sync(MOMBASA);
    expect(back.counts).toMatchObject({ newInvoices: 2, statusChanges: 0, delivered: 2, pending: 0 });
    expect(back.ledger.pur_msa_001?.[2]).toBe('rejected');

    const acknowledged = receiver.acknowledged();
    expect(duplicates(acknowledged)).toEqual([]);
    expect(acknowledged).toHaveLength(8 + 3);
    const received = receiver.received.filter((r) => r.status === 200).map((r) => r.event!);
    expect(
      received
        .filter((e) => e.type === 'purchase.status_changed')
        .map((e) => [e.purchase.id, e.previousStatus, e.purchase.status]),
    ).toEqual([['pur_msa_001', 'confirmed', 'rejected']]);
  });

  it('a receiver refusing an event (4xx) is not retried in that sync; a later sync delivers it once accepted', async () => {
    await stack.review('pur_msa_002', 'confirmed');
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

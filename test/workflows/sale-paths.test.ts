import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { retryUpdate } from '../../src/contracts/sale.js';
import { closeTestEnv } from '../helpers/temporal.js';
import {
  DEMO,
  invoiceNumber,
  saleInput,
  scheduledActivities,
  searchAttribute,
  signalNames,
  startSaleHarness,
  type SaleHarness,
} from './harness.js';
import { stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { expectRecordedOnce } from './ledger-reads.js';

let h: SaleHarness;
/** A second stack without a callback receiver: the workflow learns outcomes by polling alone. */
let polling: SaleHarness;

beforeAll(async () => {
  [h, polling] = await Promise.all([startSaleHarness({ callbacks: true }), startSaleHarness({ callbacks: false })]);
});
afterAll(async () => {
  await Promise.all([h?.close(), polling?.close()]);
  await closeTestEnv();
});

describe('saleWorkflow paths to a signed receipt', () => {
  it('signs an immediate sale, hands its tracked lines to the stock ledger, which records each once, and closes', async () => {
    const handle = await h.start(saleInput());
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.sale?.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    expect(state.submissions).toBe(1);
    // Closed at once (no refund window): it handed its lines over and does not wait for their movements.
    const ledger = stockLedgerWorkflowId(h.taskQueue, DEMO.businesses.nairobi, DEMO.branches.nairobiCbd);
    expect(state.stockMovements.map((m) => [m.itemId, m.action, m.status, m.ledger])).toEqual([
      [DEMO.items.sugar, 'DEDUCT', 'handed_over', ledger],
      [DEMO.items.milk, 'DEDUCT', 'handed_over', ledger],
    ]);
    const docs = await h.sandbox.inspector.documents({
      businessId: DEMO.businesses.nairobi,
      traderInvoiceNumber: state.traderInvoiceNumber,
    });
    expect(docs).toHaveLength(1);
    expect(docs[0]?.sale.receipt?.cuInvoiceNo).toBe(state.sale?.receipt?.cuInvoiceNo);
    await expectRecordedOnce(
      {
        client: h.client,
        taskQueue: h.taskQueue,
        businessId: DEMO.businesses.nairobi,
        branchId: DEMO.branches.nairobiCbd,
      },
      h.sandbox.inspector,
      state.stockMovements,
    );
    expect(await searchAttribute(handle, FiscalStatus)).toBe('signed');
    // Never written: it never needed an operator (a client's start sets it false; a sale writes only changes).
    expect(await searchAttribute(handle, NeedsAttention)).toBeUndefined();
  });

  it('does not report stock for an item that is not stock tracked', async () => {
    const state = await (
      await h.start(saleInput({ lines: [{ itemId: DEMO.items.giftVoucher, quantity: 1, unitPrice: 1000 }] }))
    ).result();
    expect(state.sale?.status).toBe('completed');
    expect(state.stockMovements).toEqual([]);
  });

  it('completes an async sale on the result callback, confirming it by reading the sale', async () => {
    // Settles 1 s after creation: well after the workflow starts waiting, well before its second poll (2 s).
    const tin = invoiceNumber('ASYNC-');
    await h.sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${tin}$` },
      outcome: 'async',
      delayMs: 1_000,
    });
    const handle = await h.start(saleInput({ traderInvoiceNumber: tin }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
    expect(state.sale?.receipt?.receiptLabel).toBe('NS');

    const attempts = await h.sandbox.inspector.callbackAttempts(state.sale!.id);
    expect(attempts.filter((a) => a.status === 202).map((a) => a.event)).toEqual(['sale.completed']);
    expect(await signalNames(handle)).toContain('callbackReceived');
    // The hint is confirmed by a read of the document (getDocument), never taken as the outcome itself.
    expect(await scheduledActivities(handle)).toContain('getDocument');
  });

  it('completes an async sale by polling alone when no callback URL is configured; polls add no history', async () => {
    // Settles 1.5 s after creation: the first poll comes well before that even on a loaded server (the fixture's
    // 300 ms was not always enough there), and its retry 2 s later sees it settled.
    const tin = invoiceNumber('ASYNC-');
    await polling.sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${tin}$` },
      outcome: 'async',
      delayMs: 1_500,
    });
    const since = Date.now();
    const handle = await polling.start(saleInput({ traderInvoiceNumber: tin }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');

    expect(await polling.sandbox.inspector.callbackAttempts(state.sale!.id)).toEqual([]);
    expect(await signalNames(handle)).not.toContain('callbackReceived');
    const reads = (await polling.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
      (r) => r.method === 'GET' && r.path === `/v1/sales/${state.sale!.id}`,
    );
    // The first poll saw it pending and the activity's retry saw it settled: several reads, one activity.
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect((await scheduledActivities(handle)).filter((a) => a === 'awaitDocumentOutcome')).toHaveLength(1);
  });

  it('retries a document that failed in flight, parks after the transient limit, and signs after an operator retry', async () => {
    const tin = invoiceNumber('ASYNCFAIL-');
    const handle = await h.start(
      saleInput({ traderInvoiceNumber: tin, options: { refundWindowDays: 0, transientRetryLimit: 1 } }),
    );

    const parked = await h.waitFor(handle, (s) => s.step === 'parked', 20_000);
    // Failed in flight: the read gives the authority's text but no cause code, and the retry is in flight too.
    expect(parked.parked).toMatchObject({ code: 'authority_failed', actions: ['retry', 'cancel'] });
    expect(parked.parked?.message).toMatch(/unavailable.*still failing after 1 automatic retry\)$/i);
    // The creation and one transient retry, both failed by the authority while in flight.
    expect(parked.submissions).toBe(2);
    expect(parked.sale?.status).toBe('failed');
    expect(await searchAttribute(handle, NeedsAttention)).toBe(true);
    const [filed] = await h.sandbox.inspector.documents({ traderInvoiceNumber: tin });
    expect(filed?.submissions).toBe(2);

    // The authority is back for this sale: the operator's retry goes through.
    await h.sandbox.inspector.addAuthorityRule({ match: { traderInvoiceNumber: `^${tin}$` }, outcome: 'accept' });
    await handle.executeUpdate(retryUpdate);
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(3);
    expect(state.parked).toBeNull();
    expect(await searchAttribute(handle, NeedsAttention)).toBe(false);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
  });
});

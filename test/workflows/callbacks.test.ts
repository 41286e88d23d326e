import { fetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelUpdate } from '../../src/contracts/sale.js';
import { carriersOf } from './ledger-reads.js';
import {
  DEMO,
  activityResults,
  eventually,
  invoiceNumber,
  saleInput,
  scheduledActivities,
  signalNames,
  useSaleHarness,
  windowOfSeconds,
} from './harness.js';

const h = useSaleHarness({ callbacks: true });
afterEach(async () => {
  await h.sandbox.inspector.clearFaults();
});

/** A sale the authority holds until the test settles it through the sandbox. */
async function heldSale(options: { refundWindowDays: number; transientRetryLimit?: number } = { refundWindowDays: 0 }) {
  const tin = invoiceNumber('HELD-');
  await h.sandbox.inspector.addAuthorityRule({
    match: { traderInvoiceNumber: `^${tin}$` },
    outcome: 'async',
    delayMs: 600_000,
  });
  const handle = await h.start(saleInput({ traderInvoiceNumber: tin, options }));
  const waiting = await h.waitFor(handle, (s) => s.step === 'awaiting_outcome');
  return { handle, tin, documentId: waiting.sale!.id };
}

/** POSTs a result callback to the receiver as the compliance service would. */
async function postCallback(
  url: string,
  documentId: string,
  event: string,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-callback-id': `cbk_test_${documentId}` },
    body: JSON.stringify({
      id: `evt_test_${documentId}`,
      event,
      createdAt: new Date().toISOString(),
      data: { sale: { id: documentId, status: event === 'sale.completed' ? 'completed' : 'failed' } },
    }),
  });
  return { status: response.status, body: await response.json() };
}

const count = (values: string[], wanted: string) => values.filter((v) => v === wanted).length;

describe('result callbacks are hints', () => {
  it('duplicate deliveries are acknowledged without a second signal: one read, one sale, stock once', async () => {
    await h.sandbox.inspector.addFault({ kind: 'callback-duplicate', duplicates: 2, times: 1 });
    const handle = await h.start(
      saleInput({ traderInvoiceNumber: invoiceNumber('ASYNC-'), options: { refundWindowDays: windowOfSeconds(30) } }),
    );
    const signed = await h.waitFor(handle, (s) => s.step === 'completed');
    const attempts = await h.sandbox.inspector.waitForCallbackAttempts(
      signed.sale!.id,
      (a) => a.filter((x) => x.kind === 'duplicate' && x.status !== null).length === 2,
    );
    expect(attempts.map((a) => [a.kind, a.event, a.status])).toEqual([
      ['scheduled', 'sale.completed', 202],
      ['duplicate', 'sale.completed', 200],
      ['duplicate', 'sale.completed', 200],
    ]);
    expect(count(await signalNames(handle), 'callbackReceived')).toBe(1);
    const activities = await scheduledActivities(handle);
    // The callback was announced, so nothing polled: one read confirms the first hint.
    expect(count(activities, 'getDocument')).toBe(1);
    expect(count(activities, 'awaitDocumentOutcome')).toBe(0);
    expect(count(activities, 'signSale')).toBe(1);
    // The sale hands its two lines to the branch's stock ledger (a local activity, no activity task): it sends no movement itself.
    expect(count(activities, 'adjustStock')).toBe(0);
    const state = await h.state(handle);
    expect(state.sale?.status).toBe('completed');
    expect(state.stockMovements.map((m) => m.status)).not.toContain('pending');
    await carriersOf(
      {
        client: h.client,
        taskQueue: h.taskQueue,
        businessId: DEMO.businesses.nairobi,
        branchId: DEMO.branches.nairobiCbd,
      },
      state.stockMovements,
    );
    for (const m of state.stockMovements) {
      expect(await h.sandbox.inspector.stockMovements({ referenceId: m.referenceId })).toHaveLength(1);
    }
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber })).toHaveLength(1);
  });

  it('an older outcome delivered after a newer one does not undo it', async () => {
    const { handle, tin, documentId } = await heldSale({ refundWindowDays: windowOfSeconds(30) });
    // The authority fails it; the sale retries by itself (no cause given: transient) and is in flight again.
    await h.sandbox.inspector.settle(documentId, 'failed', { errorCode: 'authority_unavailable' });
    await h.waitFor(handle, (s) => s.submissions === 2 && s.step === 'awaiting_outcome');
    // The next delivery (sale.completed) goes out first, then the older sale.failed is sent again.
    await h.sandbox.inspector.addFault({ kind: 'callback-out-of-order', times: 1 });
    await h.sandbox.inspector.settle(documentId, 'completed');

    const attempts = await h.sandbox.inspector.waitForCallbackAttempts(documentId, (a) =>
      a.some((x) => x.kind === 'out-of-order' && x.status !== null),
    );
    expect(attempts.map((a) => [a.kind, a.event])).toEqual([
      ['scheduled', 'sale.failed'],
      ['scheduled', 'sale.completed'],
      ['out-of-order', 'sale.failed'],
    ]);
    const state = await h.waitFor(handle, (s) => s.step === 'completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.parked).toBeNull();
    expect(state.submissions).toBe(2);
    // Let the stale hint land, then check nothing moved.
    await new Promise((r) => setTimeout(r, 500));
    const after = await h.state(handle);
    expect(after.step).toBe('completed');
    expect(after.submissions).toBe(2);
    expect(after.stockMovements.map((m) => m.status)).toEqual(['handed_over', 'handed_over']);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
  });

  it('a callback whose body claims an outcome the service does not confirm changes nothing', async () => {
    const { handle, documentId } = await heldSale();
    const completedBefore = (await activityResults(handle)).length;
    const answer = await postCallback(h.minter!.mint(handle.workflowId), documentId, 'sale.completed');
    expect(answer).toEqual({ status: 202, body: { status: 'accepted' } });
    // The hint's one read of the document has completed.
    await eventually(
      () => activityResults(handle),
      (results) => results.length === completedBefore + 1,
    );
    const state = await h.state(handle);
    expect(count(await signalNames(handle), 'callbackReceived')).toBe(1);
    // It read the document, found it still pending, and went on waiting.
    expect(count(await scheduledActivities(handle), 'getDocument')).toBe(1);
    expect(state.step).toBe('awaiting_outcome');
    expect(state.sale?.status).toBe('pending');
    expect(state.stockMovements).toEqual([]);

    await h.sandbox.inspector.settle(documentId, 'completed');
    expect((await handle.result()).sale?.status).toBe('completed');
  });

  it('a forged token is refused with 401 and signals nothing', async () => {
    const { handle, documentId } = await heldSale();
    const base = `${h.callbacks!.url}/callbacks/${encodeURIComponent(handle.workflowId)}`;
    const forged = await postCallback(`${base}/${'A'.repeat(43)}`, documentId, 'sale.completed');
    expect(forged.status).toBe(401);
    // A genuine token minted for another workflow does not open this one.
    const otherToken = h.minter!.token('sale:biz_demo_nairobi:SOMETHING-ELSE');
    expect((await postCallback(`${base}/${otherToken}`, documentId, 'sale.completed')).status).toBe(401);

    await new Promise((r) => setTimeout(r, 300));
    expect(await signalNames(handle)).toEqual([]);
    expect((await h.state(handle)).step).toBe('awaiting_outcome');
    await h.sandbox.inspector.settle(documentId, 'failed', { errorCode: 'authority_rejected' });
    await handle.terminate('test finished');
  });

  it('a callback arriving after the sale closed is acknowledged and ignored', async () => {
    const handle = await h.start(saleInput({ traderInvoiceNumber: invoiceNumber('ASYNC-') }));
    const state = await handle.result();
    expect(state.step).toBe('completed');

    // The announced callback is what finished the sale (no poll ran)...
    const attempts = await h.sandbox.inspector.waitForCallbackAttempts(
      state.sale!.id,
      (a) => a.length > 0 && a[0]!.status !== null,
      8_000,
    );
    expect(attempts.map((a) => [a.event, a.status])).toEqual([['sale.completed', 202]]);
    expect(await scheduledActivities(handle)).not.toContain('awaitDocumentOutcome');
    // ...and the same one sent again once it closed is a calm acknowledgement (a repeat, or for a closed
    // workflow), so the service stops retrying.
    const late = await postCallback(h.minter!.mint(handle.workflowId), state.sale!.id, 'sale.completed');
    expect(late.status).toBe(200);
    expect(['ignored', 'duplicate']).toContain((late.body as { status: string }).status);
    expect(await signalNames(handle)).toEqual(['callbackReceived']);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber })).toHaveLength(1);
  });

  it('a cancelled sale ignores the late outcome of its document', async () => {
    const { handle, documentId } = await heldSale();
    // The authority fails it in flight, and refuses the sale's own retry for good: it parks.
    await h.sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${(await h.state(handle)).traderInvoiceNumber}$` },
      outcome: 'reject',
      errorCode: 'authority_rejected',
    });
    await h.sandbox.inspector.settle(documentId, 'failed', { errorCode: 'authority_rejected' });
    await h.waitFor(handle, (s) => s.step === 'parked', 15_000);
    await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'test: operator gave up' }] });
    expect((await handle.result()).step).toBe('cancelled');
    expect(await postCallback(h.minter!.mint(handle.workflowId), documentId, 'sale.completed')).toEqual({
      status: 200,
      body: { status: 'ignored' },
    });
  });
});

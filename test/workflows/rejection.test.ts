import { describe, expect, it } from 'vitest';
import {
  FiscalStatus,
  NeedsAttention,
  cancelUpdate,
  confirmStockMovementUpdate,
  itemFixedUpdate,
  resendStockMovementUpdate,
  retryUpdate,
} from '../../workflows/definitions.js';
import {
  DEMO,
  expectUpdateRefused,
  historyEvents,
  invoiceNumber,
  saleInput,
  searchAttribute,
  useSaleHarness,
  windowOfSeconds,
  } from './harness.js';

const h = useSaleHarness();

/** Updates the server accepted into history; a validator's refusal leaves none. */
async function acceptedUpdates(handle: Parameters<typeof historyEvents>[0]): Promise<string[]> {
  return (await historyEvents(handle)).flatMap((e) =>
    e.workflowExecutionUpdateAcceptedEventAttributes ? [e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? ''] : [],
  );
}

describe('saleWorkflow after a rejection', () => {
  it('retries a transient rejection (authority_unavailable) by itself and signs without an operator', async () => {
    const tin = invoiceNumber('FLAKY-');
    const handle = await h.start(saleInput({ traderInvoiceNumber: tin }));
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(2);
    expect(state.history.map((e) => e.event).filter((e) => e.startsWith('parked'))).toEqual([]);
    const [filed, ...others] = await h.sandbox.inspector.documents({ traderInvoiceNumber: tin });
    expect(others).toEqual([]);
    expect(filed?.submissions).toBe(2);
    expect(filed?.history.map((x) => x.status)).toEqual(['pending', 'failed', 'retrying', 'completed']);
  });

  it('parks a hard rejection for an operator, and signs after the operator retries once the cause is gone', async () => {
    const tin = invoiceNumber('REJECT-');
    const handle = await h.start(saleInput({ traderInvoiceNumber: tin }));
    const parked = await h.waitFor(handle, (s) => s.step === 'parked');
    expect(parked.parked).toMatchObject({ code: 'authority_rejected', actions: ['retry', 'cancel'] });
    expect(parked.sale?.status).toBe('failed');
    expect(parked.submissions).toBe(1);
    expect(await searchAttribute(handle, NeedsAttention)).toBe(true);
    expect(await searchAttribute(handle, FiscalStatus)).toBe('failed');

    // Nothing happens by itself while parked.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await h.state(handle)).submissions).toBe(1);

    // The operator corrects the cause (here: the authority now accepts this sale), then retries.
    await h.sandbox.inspector.addAuthorityRule({ match: { traderInvoiceNumber: `^${tin}$` }, outcome: 'accept' });
    await handle.executeUpdate(retryUpdate);
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(2);
    expect(await searchAttribute(handle, NeedsAttention)).toBe(false);
    expect(await searchAttribute(handle, FiscalStatus)).toBe('signed');
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
  });

  it('parks again when the operator retries while the cause is still there', async () => {
    const handle = await h.start(saleInput({ traderInvoiceNumber: invoiceNumber('REJECT-') }));
    await h.waitFor(handle, (s) => s.step === 'parked');
    await handle.executeUpdate(retryUpdate);
    const parkedAgain = await h.waitFor(handle, (s) => s.step === 'parked' && s.submissions === 2);
    expect(parkedAgain.parked?.code).toBe('authority_rejected');
    await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'test finished' }] });
    await handle.result();
  });

  it('cancels a parked sale on the operator\'s cancel update, with the reason in its history', async () => {
    const tin = invoiceNumber('REJECT-');
    const handle = await h.start(saleInput({ traderInvoiceNumber: tin }));
    await h.waitFor(handle, (s) => s.step === 'parked');
    await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'customer walked away' }] });
    const state = await handle.result();
    expect(state.step).toBe('cancelled');
    expect(state.parked).toBeNull();
    expect(state.stockMovements).toEqual([]);
    expect(state.history.at(-1)?.event).toBe('cancelled: customer walked away');
    expect(await searchAttribute(handle, FiscalStatus)).toBe('cancelled');
    expect(await searchAttribute(handle, NeedsAttention)).toBe(false);
  });

  it('refuses operator actions that do not fit the sale\'s situation, and bad input, before anything is recorded', async () => {
    // A signed sale waiting in its refund window: nothing to retry, cancel, fix or confirm.
    const signed = await h.start(saleInput({ options: { refundWindowDays: windowOfSeconds(60) } }));
    await h.waitFor(signed, (s) => s.step === 'refund_window');
    await expectUpdateRefused(signed.executeUpdate(retryUpdate), /retry is possible only while the sale is parked/);
    await expectUpdateRefused(signed.executeUpdate(cancelUpdate, { args: [{ reason: 'changed my mind' }] }), /cancel is possible only while the sale is parked and unsigned/);
    await expectUpdateRefused(signed.executeUpdate(itemFixedUpdate, { args: [{ itemId: DEMO.items.sugar }] }), /item itm_sugar_2kg is not waiting for a fix/);
    const referenceId = (await h.state(signed)).stockMovements[0]!.referenceId;
    await expectUpdateRefused(signed.executeUpdate(confirmStockMovementUpdate, { args: [{ referenceId }] }), /is not waiting for confirmation/);
    await expectUpdateRefused(signed.executeUpdate(resendStockMovementUpdate, { args: [{ referenceId: 'no-such-movement' }] }), /no-such-movement is not waiting for confirmation/);

    // A parked sale: cancel needs a reason.
    const parked = await h.start(saleInput({ traderInvoiceNumber: invoiceNumber('REJECT-') }));
    await h.waitFor(parked, (s) => s.step === 'parked');
    await expectUpdateRefused(parked.executeUpdate(cancelUpdate, { args: [{ reason: '  ' }] }), /a cancel needs a reason/);
    expect((await h.state(parked)).step).toBe('parked');

    expect(await acceptedUpdates(signed)).toEqual([]);
    expect(await acceptedUpdates(parked)).toEqual([]);
    await signed.terminate('test finished');
    await parked.executeUpdate(cancelUpdate, { args: [{ reason: 'test finished' }] });
    expect(await acceptedUpdates(parked)).toEqual(['cancel']);
  });
});

describe('a refusal the worker cannot fix', () => {
  it('parks a sale naming an item the business does not have, and files nothing until an operator acts', async () => {
    const input = saleInput({ lines: [{ itemId: 'itm_does_not_exist', quantity: 1, unitPrice: 10 }] });
    const handle = await h.start(input);
    const parked = await h.waitFor(handle, (s) => s.parked !== null);
    expect(parked.parked).toMatchObject({ code: 'item_not_found', actions: ['retry', 'cancel'] });
    expect(parked.parked?.message).toContain('itm_does_not_exist');
    expect(await h.sandbox.inspector.documents({ businessId: input.businessId, traderInvoiceNumber: input.traderInvoiceNumber })).toHaveLength(0);

    await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'wrong item scanned' }] });
    expect((await handle.result()).step).toBe('cancelled');
  });
});

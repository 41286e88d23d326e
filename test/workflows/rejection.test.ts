/**
 * Rejections end to end: the real retry endpoint, the sandbox's authority and the item lookup. The workflow's
 * own decisions after a rejection (parking again, cancel, refused operator actions) are in sale-logic.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import { cancelUpdate, retryUpdate } from '../../src/contracts/sale.js';
import { invoiceNumber, saleInput, searchAttribute, useSaleHarness } from './harness.js';

const h = useSaleHarness();

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
});

describe('a refusal the worker cannot fix', () => {
  it('parks a sale naming an item the business does not have, and files nothing until an operator acts', async () => {
    const input = saleInput({ lines: [{ itemId: 'itm_does_not_exist', quantity: 1, unitPrice: 10 }] });
    const handle = await h.start(input);
    const parked = await h.waitFor(handle, (s) => s.parked !== null);
    expect(parked.parked).toMatchObject({ code: 'item_not_found', actions: ['retry', 'cancel'] });
    expect(parked.parked?.message).toContain('itm_does_not_exist');
    expect(
      await h.sandbox.inspector.documents({
        businessId: input.businessId,
        traderInvoiceNumber: input.traderInvoiceNumber,
      }),
    ).toHaveLength(0);

    await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'wrong item scanned' }] });
    expect((await handle.result()).step).toBe('cancelled');
  });
});

/**
 * A till's receipt through the sales client, end to end: the real sale workflow on real workers, the sandbox over
 * HTTP, the shared dev server. `startAndAwaitReceipt` is one update-with-start call; `awaitReceipt` waits on a sale
 * already started; both answer a closed sale from its final state and refuse another input as a conflict.
 */
import { describe, expect, it } from 'vitest';
import { SaleInputConflictError, SaleInputError, SaleOperationError, SalesClient } from '../../src/client/index.js';
import type { SaleInput } from '../../src/client/index.js';
import { saleWorkflowId } from '../../src/contracts/sale.js';
import { DEMO, invoiceNumber, saleInput, useSaleHarness } from '../workflows/harness.js';

const h = useSaleHarness();
const sales = () => new SalesClient(h.client, { taskQueue: h.taskQueue });

/** A sale that stays open after it is signed (the harness's default closes at once). */
const openSale = (overrides: Partial<SaleInput> = {}) => saleInput({ options: { refundWindowDays: 1 }, ...overrides });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (answer) => ({ answer }),
    (err: unknown) => err,
  );
}

describe('startAndAwaitReceipt', () => {
  it('starts the sale and answers with the signed receipt values in one call', async () => {
    const input = openSale({ customer: { name: 'Wanjiru Kamau', pin: 'A123456789B' } });

    const answer = await sales().startAndAwaitReceipt(input, { wait: '30 seconds' });

    expect(answer).toMatchObject({
      workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
      signed: true,
    });
    expect(answer.receipt).toMatchObject({
      cuInvoiceNo: expect.any(String),
      signature: expect.any(String),
      receiptNumber: expect.any(Number),
    });
    expect(answer.state.sale?.status).toBe('completed');
    // One sale filed, whatever the till does next.
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber })).toHaveLength(1);
  });

  it('answers the same input again from the sale it finds, running or closed, filing nothing twice', async () => {
    const input = saleInput();
    const first = await sales().startAndAwaitReceipt(input);
    expect(first.signed).toBe(true);

    const again = await sales().startAndAwaitReceipt(input);
    await h.client.workflow.getHandle(first.workflowId).result();
    const afterClose = await sales().startAndAwaitReceipt(input);

    expect(again.receipt).toEqual(first.receipt);
    expect(afterClose).toMatchObject({ workflowId: first.workflowId, signed: true, receipt: first.receipt });
    expect(afterClose.state.step).toBe('completed');
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber })).toHaveLength(1);
  });

  it('refuses another input under the same invoice number, running or closed: a conflict naming the fields', async () => {
    const running = openSale({ customer: { name: 'Wanjiru Kamau' } });
    await sales().startAndAwaitReceipt(running);
    const other = {
      ...running,
      customer: { name: 'Otieno Odhiambo' },
      lines: [{ ...running.lines[0]!, quantity: 4321 }, running.lines[1]!],
    };

    const conflict = await failure(sales().startAndAwaitReceipt(other));

    expect(conflict).toBeInstanceOf(SaleInputConflictError);
    expect(conflict).toMatchObject({
      workflowId: saleWorkflowId(running.businessId, running.traderInvoiceNumber),
      fields: ['customer.name', 'lines[0].quantity'],
    });
    expect((conflict as Error).message).not.toMatch(/Otieno|Wanjiru|4321/);

    const closed = saleInput();
    const { workflowId } = await sales().startAndAwaitReceipt(closed);
    await h.client.workflow.getHandle(workflowId).result();
    const late = await failure(sales().startAndAwaitReceipt({ ...closed, saleDate: '2026-11-22' }));
    expect(late).toBeInstanceOf(SaleInputConflictError);
    expect(late).toMatchObject({ fields: ['saleDate'] });
  });

  it('answers not signed when the wait ends first, with the state saying why', async () => {
    const parked = await sales().startAndAwaitReceipt(
      openSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) }),
      { wait: '20s' },
    );
    expect(parked).toMatchObject({
      signed: false,
      receipt: null,
      state: { step: 'parked', parked: { code: 'authority_rejected' } },
    });

    // The demo authority holds a SLOW- sale for 2 s: a 300 ms wait ends before.
    const slow = await sales().startAndAwaitReceipt(
      openSale({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.slow) }),
      { wait: '300ms' },
    );
    expect(slow).toMatchObject({ signed: false, receipt: null });
    expect(slow.state.step).not.toBe('parked');
  });

  it('refuses a bad wait or input before anything is sent', async () => {
    const input = openSale();
    const tooLong = await failure(sales().startAndAwaitReceipt(input, { wait: '2 hours' }));
    expect(tooLong).toBeInstanceOf(SaleInputError);
    expect((tooLong as Error).message).toBe('invalid awaitReceipt request: wait must be at most 10 minutes');
    const badSale = await failure(sales().startAndAwaitReceipt({ ...input, lines: [] }));
    expect(badSale).toMatchObject({ name: 'SaleInputError', field: 'lines' });
    await expect(
      h.client.workflow.getHandle(saleWorkflowId(input.businessId, input.traderInvoiceNumber)).describe(),
    ).rejects.toThrow();
  });
});

describe('awaitReceipt', () => {
  it('waits for the receipt of a sale already started, and answers a closed sale from its final state', async () => {
    const input = saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.slow) });
    const started = await sales().startSale(input);

    const answer = await sales().awaitReceipt(input.businessId, input.traderInvoiceNumber, { wait: '30s' });
    expect(answer).toMatchObject({
      workflowId: started.workflowId,
      signed: true,
      receipt: { signature: expect.any(String) },
    });

    await h.client.workflow.getHandle(started.workflowId).result();
    const closed = await sales().awaitReceipt(input.businessId, input.traderInvoiceNumber);
    expect(closed).toMatchObject({ signed: true, receipt: answer.receipt, state: { step: 'completed' } });
  });

  it('reports an unknown sale as not found', async () => {
    const err = await failure(sales().awaitReceipt(DEMO.businesses.nairobi, invoiceNumber('NONE-')));
    expect(err).toBeInstanceOf(SaleOperationError);
    expect(err).toMatchObject({ operation: 'awaitReceipt', failure: 'not_found' });
  });
});

import { describe, expect, it } from 'vitest';
import { SalesClient } from '../../src/client/sales-client.js';
import { retryUpdate } from '../../src/contracts/sale.js';
import type { SaleState } from '../../src/contracts/sale.js';
import { DEMO, invoiceNumber, saleInput, useSaleHarness } from './harness.js';
import { expectRecordedOnce, type LedgerAt } from './ledger-reads.js';

const h = useSaleHarness({ callbacks: true });
const ledgerAt = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: DEMO.businesses.nairobi,
  branchId: DEMO.branches.nairobiCbd,
});

/** A sale the authority holds until the test settles it through the sandbox. */
async function heldSale(options: NonNullable<ReturnType<typeof saleInput>['options']> = { refundWindowDays: 0 }) {
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

describe('a sale survives its surroundings', () => {
  it('is one execution and one document however often it is started', async () => {
    const sales = new SalesClient(h.client, { taskQueue: h.taskQueue });
    const input = saleInput();
    const [first, second] = await Promise.all([sales.startSale(input), sales.startSale(input)]);
    expect(first.runId).toBe(second.runId);
    expect([first.started, second.started].toSorted()).toEqual([false, true]);

    const state: SaleState = await h.client.workflow.getHandle(first.workflowId).result();
    const again = await sales.startSale(input);
    expect(again).toMatchObject({ workflowId: first.workflowId, runId: first.runId, started: false });

    const runs = [];
    for await (const run of h.client.workflow.list({ query: `WorkflowId = '${first.workflowId}'` })) runs.push(run);
    expect(runs).toHaveLength(1);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber })).toHaveLength(1);
    // One hand-over of the lines to the branch's stock ledger, each line recorded once.
    expect(state.stockMovements.map((m) => m.status)).toEqual(['handed_over', 'handed_over']);
    await expectRecordedOnce(ledgerAt(), h.sandbox.inspector, state.stockMovements);
  });

  it('finishes on new workers when the ones running it go away while it awaits the outcome', async () => {
    const { handle, tin, documentId } = await heldSale();
    await h.replaceWorkers();
    await h.sandbox.inspector.settle(documentId, 'completed');
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.sale?.status).toBe('completed');
    expect(state.submissions).toBe(1);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: tin })).toHaveLength(1);
    // The branch's stock ledger runs on the new workers too: each line recorded once.
    await expectRecordedOnce(ledgerAt(), h.sandbox.inspector, state.stockMovements);
    // The old process's callback receiver is gone with it, so the new workers learn the outcome by polling, whose
    // backoff can pass 30 s on a loaded PostgreSQL-backed server: a bound on the wait, not a speed target.
  }, 90_000);

  it('parks when the outcome does not come within outcomeTimeout, and confirms the late outcome on retry', async () => {
    const { handle, tin, documentId } = await heldSale({ refundWindowDays: 0, outcomeTimeout: '3 seconds' });
    const parked = await h.waitFor(handle, (s) => s.step === 'parked');
    expect(parked.parked).toMatchObject({ code: 'outcome_timeout', actions: ['retry', 'cancel'] });
    expect(parked.parked?.message).toContain('3 seconds');

    await h.sandbox.inspector.settle(documentId, 'completed');
    await handle.executeUpdate(retryUpdate);
    const state = await handle.result();
    expect(state.sale?.status).toBe('completed');
    // The late outcome was read, not submitted again.
    expect(state.submissions).toBe(1);
    const [filed, ...others] = await h.sandbox.inspector.documents({ traderInvoiceNumber: tin });
    expect(others).toEqual([]);
    expect(filed?.submissions).toBe(1);
  });
});

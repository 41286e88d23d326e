import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { FiscalStatus } from '../../src/contracts/search-attributes.js';
import { cancelUpdate, refundUpdate, type RefundRequest } from '../../src/contracts/sale.js';
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
import { expectInvalidArgument } from '../helpers/updates.js';
import { stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { carriersOf, type LedgerAt } from './ledger-reads.js';

const h = useSaleHarness({ callbacks: true });
const ledgerAt = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: DEMO.businesses.nairobi,
  branchId: DEMO.branches.nairobiCbd,
});

/** A signed sale waiting in a refund window long enough for the test. */
async function signedSale(lines = saleInput().lines) {
  const handle = await h.start(saleInput({ lines, options: { refundWindowDays: windowOfSeconds(60) } }));
  const state = await h.waitFor(handle, (s) => s.step === 'refund_window');
  return { handle, state };
}

function refundRequest(overrides: Partial<RefundRequest> = {}): RefundRequest {
  return { reason: '01', returnDate: '2026-11-22', traderInvoiceNumber: invoiceNumber('CN-'), ...overrides };
}

async function creditNotes(saleTraderInvoiceNumber: string) {
  const [sale] = await h.sandbox.inspector.documents({ traderInvoiceNumber: saleTraderInvoiceNumber });
  return sale?.creditNoteId ? [await h.sandbox.inspector.document(sale.creditNoteId)] : [];
}

async function acceptedUpdates(handle: Parameters<typeof historyEvents>[0]) {
  return (await historyEvents(handle)).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
}

describe('refunds in the refund window', () => {
  it('signs a credit note, returns it with its receipt, puts the goods back in stock and closes', async () => {
    const { handle, state: signed } = await signedSale();
    const request = refundRequest();
    const result = await handle.executeUpdate(refundUpdate, { args: [request] });

    expect(result.creditNote).toMatchObject({
      type: 'credit_note',
      status: 'completed',
      traderInvoiceNumber: request.traderInvoiceNumber,
    });
    expect(result.creditNote.receipt).toMatchObject({
      receiptLabel: 'NC',
      originalCuInvoiceNo: signed.sale?.receipt?.cuInvoiceNo,
    });
    expect(result.creditNote.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    expect(result.creditNote.totals.total).toBe(-(signed.sale?.totals.total ?? 0));
    // Answered once the branch's stock ledger has taken the restock lines; the ledger puts the goods back.
    const ledger = stockLedgerWorkflowId(h.taskQueue, DEMO.businesses.nairobi, DEMO.branches.nairobiCbd);
    expect(result.stockMovements.map((m) => [m.itemId, m.action, m.quantity, m.status, m.ledger])).toEqual([
      [DEMO.items.sugar, 'ADD', 2, 'handed_over', ledger],
      [DEMO.items.milk, 'ADD', 1, 'handed_over', ledger],
    ]);
    const carriers = await carriersOf(ledgerAt(), result.stockMovements);
    // Each line alone in its movement (the budget is idle), recorded once by the sandbox.
    expect(carriers.map((c) => [c.referenceId, c.lines.length])).toEqual(
      result.stockMovements.map((m) => [m.referenceId, 1]),
    );
    for (const m of result.stockMovements) {
      const [recorded, ...more] = await h.sandbox.inspector.stockMovements({ referenceId: m.referenceId });
      expect(more).toEqual([]);
      expect(recorded).toMatchObject({ action: 'ADD', itemId: m.itemId, quantity: m.quantity });
    }

    const closed = await handle.result();
    expect(closed.step).toBe('completed');
    expect(closed.creditNote?.id).toBe(result.creditNote.id);
    expect(closed.stockMovements.filter((m) => m.action === 'DEDUCT')).toHaveLength(2);
    expect(await searchAttribute(handle, FiscalStatus)).toBe('refunded');
    expect(await creditNotes(signed.traderInvoiceNumber)).toHaveLength(1);
  });

  it.each([
    ['damaged goods (reason 03)', { reason: '03' as const }],
    ['wasted goods (reason 04)', { reason: '04' as const }],
    ['restock: false', { reason: '01' as const, restock: false }],
  ])('does not restock for %s', async (_label, overrides) => {
    const { handle, state } = await signedSale();
    const result = await handle.executeUpdate(refundUpdate, { args: [refundRequest(overrides)] });
    expect(result.creditNote.status).toBe('completed');
    expect(result.stockMovements).toEqual([]);
    const closed = await handle.result();
    expect(closed.stockMovements.map((m) => m.action)).toEqual(['DEDUCT', 'DEDUCT']);
    expect(await creditNotes(state.traderInvoiceNumber)).toHaveLength(1);
  });

  it('refuses a second refund while the first is under way, and after it, with exactly one credit note filed', async () => {
    const { handle, state } = await signedSale([{ itemId: DEMO.items.giftVoucher, quantity: 1, unitPrice: 1000 }]);
    // The authority takes its time with this credit note: the second refund arrives meanwhile.
    const firstRequest = refundRequest();
    await h.sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${firstRequest.traderInvoiceNumber}$` },
      outcome: 'async',
      delayMs: 1_500,
    });
    const first = handle.executeUpdate(refundUpdate, { args: [firstRequest] });
    await h.waitFor(handle, (s) => s.creditNote?.status === 'pending' && s.step === 'awaiting_outcome');
    await expectUpdateRefused(handle.executeUpdate(refundUpdate, { args: [refundRequest()] }), /already been refunded/);
    expect((await first).creditNote.status).toBe('completed');
    await handle.result();

    // The sale has closed: a later refund reaches no running execution.
    const late = await handle.executeUpdate(refundUpdate, { args: [refundRequest()] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(late).toBeInstanceOf(WorkflowNotFoundError);
    expect(await creditNotes(state.traderInvoiceNumber)).toHaveLength(1);
  });

  it('refuses invalid refunds and refunds of unsigned sales before anything is recorded', async () => {
    const { handle, state: signed } = await signedSale();
    const bad: Array<[unknown, RegExp]> = [
      [refundRequest({ reason: '07' as RefundRequest['reason'] }), /reason must be one of 01, 02, 03, 04, 05, 06/],
      [refundRequest({ returnDate: '22/11/2026' }), /returnDate must be a date in the form YYYY-MM-DD/],
      [refundRequest({ traderInvoiceNumber: '' }), /traderInvoiceNumber must not be empty/],
      [refundRequest({ traderInvoiceNumber: 'x'.repeat(51) }), /traderInvoiceNumber must be at most 50 characters/],
    ];
    for (const [request, message] of bad) {
      await expectInvalidArgument(handle.executeUpdate(refundUpdate, { args: [request as RefundRequest] }), message);
    }
    expect((await h.state(handle)).step).toBe('refund_window');

    const parked = await h.start(
      saleInput({ traderInvoiceNumber: invoiceNumber('REJECT-'), options: { refundWindowDays: windowOfSeconds(60) } }),
    );
    await h.waitFor(parked, (s) => s.step === 'parked');
    await expectUpdateRefused(
      parked.executeUpdate(refundUpdate, { args: [refundRequest()] }),
      /only a signed sale inside its refund window/,
    );

    expect(await acceptedUpdates(handle)).toBe(0);
    expect(await acceptedUpdates(parked)).toBe(0);
    expect(await creditNotes(signed.traderInvoiceNumber)).toEqual([]);
    await handle.terminate('test finished');
    await parked.executeUpdate(cancelUpdate, { args: [{ reason: 'test finished' }] });
  });

  it('closes the sale when its refund window runs out, with no credit note', async () => {
    const handle = await h.start(saleInput({ options: { refundWindowDays: windowOfSeconds(2) } }));
    const open = await h.waitFor(handle, (s) => s.step === 'refund_window');
    expect(Date.parse(open.refundDeadline!)).toBeGreaterThan(Date.now());
    const state = await handle.result();
    expect(state.step).toBe('completed');
    expect(state.creditNote).toBeNull();
    expect(state.refundDeadline).toBeNull();
    expect(state.history.at(-1)?.event).toBe('refund window ended; closed');
    expect(await creditNotes(state.traderInvoiceNumber)).toEqual([]);
    const late = await handle.executeUpdate(refundUpdate, { args: [refundRequest()] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(late).not.toBeInstanceOf(WorkflowUpdateFailedError);
    expect(late).toBeInstanceOf(WorkflowNotFoundError);
  });
});

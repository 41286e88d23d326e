import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { SaleOperationError } from '../../src/client/errors.js';
import { SalesClient } from '../../src/client/sales-client.js';
import { getRefundStateQuery, refundWorkflowId } from '../../src/contracts/refund.js';
import { FiscalStatus } from '../../src/contracts/search-attributes.js';
import { type RefundRequest } from '../../src/contracts/sale.js';
import { stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { DEMO, invoiceNumber, saleInput, searchAttribute, useSaleHarness, windowOfSeconds } from './harness.js';
import { carriersOf, type LedgerAt } from './ledger-reads.js';

const h = useSaleHarness({ callbacks: true });
const sales = () => new SalesClient(h.client, { taskQueue: h.taskQueue });
const ledgerAt = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: DEMO.businesses.nairobi,
  branchId: DEMO.branches.nairobiCbd,
});

/** A signed sale, closed once its stock was handed over, refundable for `windowSeconds`. */
async function signedSale(lines = saleInput().lines, windowSeconds = 120) {
  const input = saleInput({ lines, options: { refundWindowDays: windowOfSeconds(windowSeconds) } });
  const handle = await h.start(input);
  const state = await handle.result();
  return { handle, state, input };
}

function refundRequest(overrides: Partial<RefundRequest> = {}): RefundRequest {
  return { reason: '01', returnDate: '2026-11-22', traderInvoiceNumber: invoiceNumber('CN-'), ...overrides };
}

async function creditNotes(saleTraderInvoiceNumber: string) {
  const [sale] = await h.sandbox.inspector.documents({ traderInvoiceNumber: saleTraderInvoiceNumber });
  return sale?.creditNoteId ? [await h.sandbox.inspector.document(sale.creditNoteId)] : [];
}

async function refused(call: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SaleOperationError);
  expect((err as SaleOperationError).failure).toBe('rejected');
  expect((err as Error).message).toMatch(message);
}

describe('a sale ends when its work ends', () => {
  it('closes once signed and its stock handed over: its result is the signed record a refund reads', async () => {
    const { handle, state } = await signedSale();
    expect(state.step).toBe('completed');
    expect(state.sale?.receipt?.cuInvoiceNo).toMatch(/^KRACU/);
    expect(Date.parse(state.refundDeadline!) - Date.parse(state.signedAt!)).toBe(120_000);
    expect(state.lines?.map((l) => l.itemId)).toEqual([DEMO.items.sugar, DEMO.items.milk]);
    expect(state.stockMovements.map((m) => [m.action, m.status])).toEqual([
      ['DEDUCT', 'handed_over'],
      ['DEDUCT', 'handed_over'],
    ]);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(await searchAttribute(handle, FiscalStatus)).toBe('signed');
  });
});

describe('a refund is its own workflow', () => {
  it('signs a credit note, puts the goods back through the ledger, and answers the same request again with it', async () => {
    const { state: signed, input } = await signedSale();
    const request = refundRequest();
    const result = await sales().refund(input.businessId, input.traderInvoiceNumber, request);

    expect(result.creditNote).toMatchObject({
      type: 'credit_note',
      status: 'completed',
      traderInvoiceNumber: request.traderInvoiceNumber,
    });
    expect(result.creditNote.receipt).toMatchObject({
      receiptLabel: 'NC',
      originalCuInvoiceNo: signed.sale?.receipt?.cuInvoiceNo,
    });
    expect(result.creditNote.totals.total).toBe(-(signed.sale?.totals.total ?? 0));
    const ledger = stockLedgerWorkflowId(h.taskQueue, DEMO.businesses.nairobi, DEMO.branches.nairobiCbd);
    expect(result.stockMovements.map((m) => [m.itemId, m.action, m.quantity, m.status, m.ledger])).toEqual([
      [DEMO.items.sugar, 'ADD', 2, 'handed_over', ledger],
      [DEMO.items.milk, 'ADD', 1, 'handed_over', ledger],
    ]);
    const carriers = await carriersOf(ledgerAt(), result.stockMovements);
    expect(carriers.map((c) => c.lines.length)).toEqual([1, 1]);
    for (const m of result.stockMovements) {
      const [recorded, ...more] = await h.sandbox.inspector.stockMovements({ referenceId: m.referenceId });
      expect(more).toEqual([]);
      expect(recorded).toMatchObject({ action: 'ADD', itemId: m.itemId, quantity: m.quantity });
    }

    const refund = h.client.workflow.getHandle(refundWorkflowId(input.businessId, input.traderInvoiceNumber));
    const closed = (await refund.describe()).status.name;
    expect(closed).toBe('COMPLETED');
    expect(await searchAttribute(refund, FiscalStatus)).toBe('refunded');
    const state = await refund.query(getRefundStateQuery);
    expect(state.step).toBe('completed');
    expect(state.sale?.id).toBe(signed.sale?.id);

    // Asked again once closed: the same credit note, nothing filed; another request is refused.
    const again = await sales().refund(input.businessId, input.traderInvoiceNumber, request);
    expect(again.creditNote.id).toBe(result.creditNote.id);
    const other = await sales()
      .refund(input.businessId, input.traderInvoiceNumber, refundRequest())
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(other).toBeInstanceOf(SaleOperationError);
    expect((other as Error).message).toMatch(/already refunded with another request \(traderInvoiceNumber differs\)/);
    expect(await creditNotes(signed.traderInvoiceNumber)).toHaveLength(1);
  });

  it.each([
    ['damaged goods (reason 03)', { reason: '03' as const }],
    ['restock: false', { reason: '01' as const, restock: false }],
  ])('does not restock for %s', async (_label, overrides) => {
    const { input } = await signedSale();
    const result = await sales().refund(input.businessId, input.traderInvoiceNumber, refundRequest(overrides));
    expect(result.creditNote.status).toBe('completed');
    expect(result.stockMovements).toEqual([]);
  });

  it('refuses another request while the first is under way, with exactly one credit note filed', async () => {
    const { input } = await signedSale([{ itemId: DEMO.items.giftVoucher, quantity: 1, unitPrice: 1000 }]);
    const firstRequest = refundRequest();
    // The authority takes its time with this credit note: the second request arrives meanwhile.
    await h.sandbox.inspector.addAuthorityRule({
      match: { traderInvoiceNumber: `^${firstRequest.traderInvoiceNumber}$` },
      outcome: 'async',
      delayMs: 1_500,
    });
    const first = sales().refund(input.businessId, input.traderInvoiceNumber, firstRequest);
    const refund = h.client.workflow.getHandle(refundWorkflowId(input.businessId, input.traderInvoiceNumber));
    await expect
      .poll(
        () =>
          refund.query(getRefundStateQuery).then(
            (s) => s.creditNote?.status,
            () => 'not yet started',
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe('pending');
    await refused(
      sales().refund(input.businessId, input.traderInvoiceNumber, refundRequest()),
      /already refunded with another request/,
    );
    // The same request joins the first.
    const joined = await sales().refund(input.businessId, input.traderInvoiceNumber, firstRequest);
    expect((await first).creditNote.id).toBe(joined.creditNote.id);
    expect(await creditNotes(input.traderInvoiceNumber)).toHaveLength(1);
  });

  it('refuses an invalid request, an unsigned sale and a refund past its window; a corrected refund may follow', async () => {
    const { input } = await signedSale();
    const bad: Array<[unknown, RegExp]> = [
      [refundRequest({ reason: '07' as RefundRequest['reason'] }), /reason must be one of 01, 02, 03, 04, 05, 06/],
      [refundRequest({ returnDate: '22/11/2026' }), /returnDate must be a date in the form YYYY-MM-DD/],
      [refundRequest({ traderInvoiceNumber: 'x'.repeat(51) }), /traderInvoiceNumber must be at most 50 characters/],
    ];
    for (const [request, message] of bad) {
      const err = await sales()
        .refund(input.businessId, input.traderInvoiceNumber, request)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect((err as Error).message).toMatch(message);
    }

    const parked = await h.start(saleInput({ traderInvoiceNumber: invoiceNumber('REJECT-') }));
    const parkedState = await h.waitFor(parked, (s) => s.step === 'parked');
    await refused(
      sales().refund(parkedState.businessId, parkedState.traderInvoiceNumber, refundRequest()),
      /the sale is not signed/,
    );
    await sales().cancel(parkedState.businessId, parkedState.traderInvoiceNumber, 'test finished');

    const late = await signedSale(undefined, 1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await refused(
      sales().refund(late.input.businessId, late.input.traderInvoiceNumber, refundRequest()),
      /refund window of the sale ended at/,
    );
    expect(await creditNotes(late.input.traderInvoiceNumber)).toEqual([]);

    // A refused refund spends nothing: the valid one goes through under the same id.
    const result = await sales().refund(input.businessId, input.traderInvoiceNumber, refundRequest());
    expect(result.creditNote.status).toBe('completed');
  });

  it("reads the sale from the service when its workflow history is gone, given the service's sale id", async () => {
    const { handle, state, input } = await signedSale();
    // As the namespace's retention would: the sale's execution and history deleted.
    await h.client.workflowService.deleteWorkflowExecution({
      namespace: h.client.options.namespace,
      workflowExecution: { workflowId: handle.workflowId },
    });
    await expect
      .poll(
        () =>
          handle.describe().then(
            () => 'present',
            (err: unknown) => err instanceof WorkflowNotFoundError,
          ),
        {
          timeout: 90_000,
        },
      )
      .toBe(true);
    await refused(
      sales().refund(input.businessId, input.traderInvoiceNumber, refundRequest()),
      /give the service's sale id as saleId/,
    );
    const result = await sales().refund(
      input.businessId,
      input.traderInvoiceNumber,
      refundRequest({ saleId: state.sale!.id, branchId: DEMO.branches.nairobiCbd }),
    );
    expect(result.creditNote.receipt?.originalCuInvoiceNo).toBe(state.sale?.receipt?.cuInvoiceNo);
    expect(result.stockMovements.map((m) => [m.itemId, m.action, m.quantity])).toEqual([
      [DEMO.items.sugar, 'ADD', 2],
      [DEMO.items.milk, 'ADD', 1],
    ]);
  }, 120_000);
});

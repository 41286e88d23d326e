import { ApplicationFailureCategory } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import type { CreateSaleInput, SaleRequest, SubmissionResult } from '../../activities/types.js';
import {
  CALLBACK_TOKEN,
  DEMO,
  FISCAL_DOCUMENT_KEYS,
  TODAY,
  failureOf,
  idempotencyKey,
  invoiceNumber,
  runActivity,
  useActivities,
  useSandbox,
} from './helpers.js';

const sandbox = useSandbox();
const harness = useActivities(sandbox);
const activities = () => harness().activities;

const business = DEMO.businesses.nairobi;

function saleInput(request: Partial<SaleRequest> = {}): CreateSaleInput {
  const traderInvoiceNumber = request.traderInvoiceNumber ?? invoiceNumber();
  return {
    businessId: business,
    workflowId: `sale:${business}:${traderInvoiceNumber}`,
    idempotencyKey: idempotencyKey(),
    request: {
      traderInvoiceNumber,
      saleDate: TODAY,
      lines: [{ itemId: DEMO.items.sugar, quantity: 2, unitPrice: 250 }],
      ...request,
    },
  };
}

/** The token is in what the service stored (so the test can fail), and nowhere in what the activity returned. */
async function expectNoCallbackSecret(result: SubmissionResult): Promise<void> {
  expect(JSON.stringify(result)).not.toContain(CALLBACK_TOKEN);
  expect(JSON.stringify(result)).not.toContain('callback');
  expect(Object.keys(result.document).sort()).toEqual(FISCAL_DOCUMENT_KEYS);
  const stored = await sandbox().inspector.document(result.document.id);
  expect(stored.sale.callback?.url).toContain(CALLBACK_TOKEN);
}

describe('createSale', () => {
  it('201: signed, with the receipt and no callback URL anywhere in the result', async () => {
    const input = saleInput();
    const result = await runActivity(activities().createSale, input);
    expect(result).toMatchObject({ outcome: 'signed', httpStatus: 201, replayed: false, causes: [] });
    expect(result.document).toMatchObject({
      type: 'sale',
      status: 'completed',
      traderInvoiceNumber: input.request.traderInvoiceNumber,
      totals: { total: 500, taxAmount: 68.97, taxableAmount: 431.03 },
      error: null,
    });
    expect(result.document.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    await expectNoCallbackSecret(result);
  });

  it('202: in flight', async () => {
    const result = await runActivity(
      activities().createSale,
      saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.async) }),
    );
    expect(result).toMatchObject({ outcome: 'in_flight', httpStatus: 202, replayed: false });
    expect(result.document).toMatchObject({ status: 'pending', receipt: null });
    await expectNoCallbackSecret(result);
  });

  it('422 REJECT-: rejected with the cause and the filed document (not a failure)', async () => {
    const input = saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) });
    const result = await runActivity(activities().createSale, input);
    expect(result).toMatchObject({ outcome: 'rejected', httpStatus: 422, replayed: false });
    expect(result.document).toMatchObject({
      status: 'failed',
      receipt: null,
      traderInvoiceNumber: input.request.traderInvoiceNumber,
    });
    expect(result.document.error).toEqual(expect.any(String));
    expect(result.causes).toEqual([expect.objectContaining({ code: 'authority_rejected' })]);
    await expectNoCallbackSecret(result);
  });

  it.each([
    ['bath soap', DEMO.items.bathSoap],
    ['spice mix', DEMO.items.spiceMix],
  ])(
    '422 with an unregistered item (%s): cause item_not_registered naming the item and the line',
    async (_name, itemId) => {
      const input = saleInput({
        lines: [
          { itemId: DEMO.items.milk, quantity: 1, unitPrice: 65 },
          { itemId, quantity: 1, unitPrice: 100 },
        ],
      });
      const result = await runActivity(activities().createSale, input);
      expect(result).toMatchObject({ outcome: 'rejected', httpStatus: 422 });
      expect(result.causes).toEqual([
        { code: 'item_not_registered', itemId, field: 'lines[1].itemId', message: expect.any(String) },
      ]);
      await expectNoCallbackSecret(result);
    },
  );

  it('a repeat of the key is a replay of the same document (200), counting the attempt', async () => {
    const input = saleInput();
    const first = await runActivity(activities().createSale, input);
    const second = await runActivity(activities().createSale, input, { attempt: 2 });
    expect(second).toMatchObject({ outcome: 'signed', httpStatus: 200, replayed: true });
    expect(second.document).toEqual(first.document);
    expect(
      await sandbox().inspector.documents({ traderInvoiceNumber: input.request.traderInvoiceNumber }),
    ).toHaveLength(1);
  });

  it('sends no callback URL when none is configured', async () => {
    const plain = createActivities({ ...harness().deps, callbackUrls: undefined });
    const result = await runActivity(plain.createSale, saleInput());
    expect((await sandbox().inspector.document(result.document.id)).sale.callback).toBeNull();
  });
});

describe('retrySale', () => {
  it('resubmits a document refused for a transient cause: signed on the retry', async () => {
    const created = await runActivity(
      activities().createSale,
      saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.flaky) }),
    );
    expect(created).toMatchObject({
      outcome: 'rejected',
      causes: [expect.objectContaining({ code: 'authority_unavailable' })],
    });
    const retried = await runActivity(activities().retrySale, {
      businessId: business,
      documentId: created.document.id,
    });
    expect(retried).toMatchObject({ outcome: 'signed', httpStatus: 200, causes: [] });
    expect(retried.document.id).toBe(created.document.id);
    expect(retried.document.receipt?.signature).toEqual(expect.any(String));
    expect(JSON.stringify(retried)).not.toContain(CALLBACK_TOKEN);
  });

  it('a retry refused again is a rejected outcome with its causes', async () => {
    const created = await runActivity(
      activities().createSale,
      saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) }),
    );
    const retried = await runActivity(activities().retrySale, {
      businessId: business,
      documentId: created.document.id,
    });
    expect(retried).toMatchObject({
      outcome: 'rejected',
      httpStatus: 422,
      causes: [expect.objectContaining({ code: 'authority_rejected' })],
    });
  });
});

describe('getDocument and awaitDocumentOutcome', () => {
  it('polls by failing with a benign document_in_flight, then returns the signed document once it settled', async () => {
    const created = await runActivity(
      activities().createSale,
      saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.async) }),
    );
    const ref = { businessId: business, documentId: created.document.id };

    const inFlight = await failureOf(runActivity(activities().awaitDocumentOutcome, ref));
    expect(inFlight).toMatchObject({
      type: 'document_in_flight',
      nonRetryable: false,
      category: ApplicationFailureCategory.BENIGN,
    });
    expect(inFlight.message).toContain(created.document.id);

    const read = await runActivity(activities().getDocument, ref);
    expect(read).toEqual({ document: created.document });

    await sandbox().inspector.waitForDocument(ref.documentId, (doc) => doc.sale.status === 'completed');
    const settled = await runActivity(activities().awaitDocumentOutcome, ref, { attempt: 3 });
    expect(settled.document).toMatchObject({ id: ref.documentId, status: 'completed' });
    expect(settled.document.receipt?.cuInvoiceNo).toMatch(/^KRACU/);
    expect(JSON.stringify(settled)).not.toContain(CALLBACK_TOKEN);
  });

  it('returns a failed or cancelled document as an outcome, not as a poll', async () => {
    const asyncSale = () =>
      runActivity(
        activities().createSale,
        saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.async) }),
      );
    const failed = await asyncSale();
    expect(
      (await sandbox().inspector.settle(failed.document.id, 'failed', { errorCode: 'authority_unavailable' })).sale
        .status,
    ).toBe('failed');
    const failedResult = await runActivity(activities().awaitDocumentOutcome, {
      businessId: business,
      documentId: failed.document.id,
    });
    expect(failedResult.document).toMatchObject({ status: 'failed', error: expect.any(String), receipt: null });

    const cancelled = await asyncSale();
    await sandbox().inspector.cancel(cancelled.document.id);
    const cancelledResult = await runActivity(activities().awaitDocumentOutcome, {
      businessId: business,
      documentId: cancelled.document.id,
    });
    expect(cancelledResult.document).toMatchObject({ status: 'cancelled', receipt: null });
  });
});

describe('createCreditNote', () => {
  it('reverses a signed sale (signed credit note); a second one is the non-retryable already_credited naming the first', async () => {
    const sale = await runActivity(activities().createSale, saleInput());
    const creditNote = {
      businessId: business,
      workflowId: `sale:${business}:${sale.document.traderInvoiceNumber}`,
      saleId: sale.document.id,
      traderInvoiceNumber: invoiceNumber('CN-'),
      returnDate: TODAY,
      reason: '06' as const,
      idempotencyKey: idempotencyKey(),
    };
    const result = await runActivity(activities().createCreditNote, creditNote);
    expect(result).toMatchObject({ outcome: 'signed', httpStatus: 201, replayed: false });
    expect(result.document).toMatchObject({ type: 'credit_note', status: 'completed', totals: { total: -500 } });
    expect(result.document.receipt).toMatchObject({
      receiptLabel: 'NC',
      originalCuInvoiceNo: sale.document.receipt?.cuInvoiceNo,
    });
    await expectNoCallbackSecret(result);

    const replay = await runActivity(activities().createCreditNote, creditNote);
    expect(replay).toMatchObject({ replayed: true, httpStatus: 200, document: { id: result.document.id } });

    const second = await failureOf(
      runActivity(activities().createCreditNote, {
        ...creditNote,
        traderInvoiceNumber: invoiceNumber('CN-'),
        idempotencyKey: idempotencyKey(),
      }),
    );
    expect(second).toMatchObject({ type: 'already_credited', nonRetryable: true });
    expect(second.details?.[0]).toEqual({ creditNoteId: result.document.id });
    expect(second.details?.[1]).toBe(422);
  });

  it('a sale that is not signed cannot be credited: sale_not_completed, non-retryable', async () => {
    const sale = await runActivity(
      activities().createSale,
      saleInput({ traderInvoiceNumber: invoiceNumber(DEMO.invoicePrefixes.reject) }),
    );
    const failure = await failureOf(
      runActivity(activities().createCreditNote, {
        businessId: business,
        workflowId: 'wf',
        saleId: sale.document.id,
        traderInvoiceNumber: invoiceNumber('CN-'),
        returnDate: TODAY,
        reason: '01',
        idempotencyKey: idempotencyKey(),
      }),
    );
    expect(failure).toMatchObject({ type: 'sale_not_completed', nonRetryable: true });
  });
});

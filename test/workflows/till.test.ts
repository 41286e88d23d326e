/**
 * A till's one call against the real stack: update-with-start of `awaitReceipt` (any SDK can make it) starts the
 * sale, or finds it, and answers the signed receipt values; a bad input or another input under the same invoice
 * number is refused naming the fields. The workflow's waiting logic is in sale-doors-logic.test.ts.
 */
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { SaleInputConflictError } from '../../src/client/errors.js';
import { SalesClient } from '../../src/client/sales-client.js';
import type { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { AttentionReason, FiscalStatus } from '../../src/contracts/search-attributes.js';
import { SALE_WORKFLOW_TYPE, awaitReceiptUpdate, saleWorkflowId, type SaleInput } from '../../src/contracts/sale.js';
import { updateRefusal } from '../helpers/updates.js';
import { saleInput, searchAttribute, useSaleHarness } from './harness.js';

const h = useSaleHarness();

/** What a till sends, in any SDK: the input to start the sale with, and again to check a sale found. */
function tillCall(input: SaleInput) {
  const workflowId = saleWorkflowId(input.businessId, input.traderInvoiceNumber);
  return h.client.workflow.executeUpdateWithStart(awaitReceiptUpdate, {
    args: [{ wait: '30 seconds', input }],
    startWorkflowOperation: new WithStartWorkflowOperation(SALE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: h.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    }),
  });
}

describe('awaitReceipt by update-with-start', () => {
  it('answers the receipt values of a sale that signs at once; the same call again answers the same, with one sale filed', async () => {
    const input = saleInput({ options: { refundWindowDays: 1 } });
    const answer = await tillCall(input);
    expect(answer.signed).toBe(true);
    expect(answer.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
    expect(answer.receipt?.signature).toBeTruthy();

    // The sale closes once signed and handed over: Temporal starts no sale of a spent invoice number again, and the
    // client answers from the closed sale's result, the same receipt, in one call.
    await h.client.workflow.getHandle(saleWorkflowId(input.businessId, input.traderInvoiceNumber)).result();
    await expect(tillCall(input)).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
    const sales = new SalesClient(h.client, { taskQueue: h.taskQueue });
    const again = await sales.startAndAwaitReceipt(input);
    expect(again.receipt).toEqual(answer.receipt);
    const filed = await h.sandbox.inspector.documents({
      businessId: input.businessId,
      traderInvoiceNumber: input.traderInvoiceNumber,
    });
    expect(filed).toHaveLength(1);
    expect(filed[0]?.sale.receipt?.cuInvoiceNo).toBe(answer.receipt?.cuInvoiceNo);

    const other = { ...input, lines: [...input.lines, { itemId: input.lines[0]!.itemId, quantity: 1, unitPrice: 10 }] };
    const conflict = await sales.startAndAwaitReceipt(other).catch((err: unknown) => err);
    expect(conflict).toBeInstanceOf(SaleInputConflictError);
    expect(conflict).toMatchObject({ fields: ['lines'] });
    expect(
      await h.sandbox.inspector.documents({
        businessId: input.businessId,
        traderInvoiceNumber: input.traderInvoiceNumber,
      }),
    ).toHaveLength(1);
  });

  it('refuses a bad input naming the field, and the sale it started ends at once with nothing sent', async () => {
    const input = saleInput();
    const { lines: _lines, ...withoutLines } = input;
    const problem = await updateRefusal(tillCall(withoutLines as SaleInput));
    expect(problem.type).toBe(FAILURE_TYPES.invalidInput);
    expect(problem.message).toBe('invalid sale input: lines is required');

    const handle = h.client.workflow.getHandle(saleWorkflowId(input.businessId, input.traderInvoiceNumber));
    const end = await handle.result().then(
      () => undefined,
      (err: unknown) => err as { cause?: ApplicationFailure },
    );
    expect(end?.cause?.type).toBe(FAILURE_TYPES.invalidInput);
    expect((await handle.describe()).status.name).toBe('FAILED');
    expect(await searchAttribute(handle, FiscalStatus)).toBe('invalid_input');
    expect(await searchAttribute(handle, AttentionReason)).toBe('invalid_input');
    expect(
      await h.sandbox.inspector.documents({
        businessId: input.businessId,
        traderInvoiceNumber: input.traderInvoiceNumber,
      }),
    ).toEqual([]);
  });
});

import { creditNoteIdempotencyKey } from '../keys.js';
import type { RefundRequest, RefundResult } from '../../src/contracts/sale.js';
import type { SaleContext } from './context.js';
import { settleDocument } from './documents.js';
import { handOverStock, restocking } from './stock.js';

/** Reverses the signed sale with a credit note, then hands the goods back to the branch's stock. */
export async function issueRefund(ctx: SaleContext, request: RefundRequest): Promise<RefundResult> {
  const { input, record, api } = ctx;
  const sale = record.state.sale!;
  record.enter('refunding');
  const key = creditNoteIdempotencyKey(input.businessId, input.traderInvoiceNumber, request.traderInvoiceNumber);
  const creditNote = await settleDocument(ctx, 'credit note', () =>
    api.createCreditNote({
      businessId: input.businessId,
      workflowId: ctx.workflowId,
      saleId: sale.id,
      traderInvoiceNumber: request.traderInvoiceNumber,
      returnDate: request.returnDate,
      reason: request.reason,
      idempotencyKey: key,
    }),
  );
  record.refunded(creditNote);
  const returned = restocking(ctx, key, request);
  record.state.stockMovements.push(...returned);
  // The sale closes once its refund is issued: nobody to tell which movement put the goods back.
  await handOverStock(ctx, returned, false);
  return { creditNote, stockMovements: returned.map((m) => record.movement(m.referenceId)!) };
}

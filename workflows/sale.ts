import { CancellationScope, allHandlersFinished, condition, workflowInfo } from '@temporalio/workflow';
import { checkSaleInput } from '../src/contracts/sale-input.js';
import type { SaleInput, SaleState } from '../src/contracts/sale.js';
import { saleIdempotencyKey, stockReferenceId } from './keys.js';
import { openDocumentProcess, type DocumentContext } from './sale/context.js';
import { settleDocument } from './sale/documents.js';
import { fileWithItemsChecked, type StockSigned } from './sale/items.js';
import { handleSaleMessages, handleTemporalCancellation, refuseInput } from './sale/messages.js';
import { OperatorCancelled } from './sale/operator.js';
import { handOverStock, movement, stockLines } from './sale/stock.js';
import { placeWhenServed } from './sale/unserved.js';

/**
 * One sale from start to signed receipt and its stock handed to the branch's ledger; what the worker cannot fix parks.
 * It closes then: its result is the signed record a refund (refundWorkflow) reads.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks: nothing unusable goes further.
  const checked = checkSaleInput(input);
  if (!checked.ok) refuseInput(input, checked.problems);
  const sale = openDocumentProcess('sale', input);
  handleSaleMessages(sale, input);
  // Temporal's own cancellation is an operator's word, not a kill: the process runs on, and the sale decides.
  CancellationScope.current().cancelRequested.catch(() => handleTemporalCancellation(sale));
  return CancellationScope.nonCancellable(() => runSale(sale, input));
}

async function runSale(sale: DocumentContext, input: SaleInput): Promise<SaleState> {
  try {
    await placeSale(sale);
    await handOverDeductions(sale, await signSale(sale, input));
    sale.record.closed();
  } catch (err) {
    if (!(err instanceof OperatorCancelled)) throw err;
    sale.record.cancelled(err.message);
  }
  await condition(allHandlersFinished);
  return sale.record.state;
}

/** Before anything is sent: calls spend the serving application's budget; an unserved business is waited for. */
async function placeSale(sale: DocumentContext): Promise<void> {
  sale.route = await placeWhenServed(sale);
}

/** Signed at once, its stock goes to the ledger from the signing activity: a till's answer waits for no hand-over. */
async function signSale(sale: DocumentContext, input: SaleInput) {
  const { record } = sale;
  const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
  const deductions = input.lines.map((line, index) =>
    movement(stockReferenceId(saleKey, index, 'DEDUCT'), { ...line, action: 'DEDUCT' }),
  );
  const handOver = { taskQueue: sale.taskQueue, lines: stockLines(sale, deductions) };
  const filing = {
    businessId: input.businessId,
    workflowId: sale.workflowId,
    request: {
      traderInvoiceNumber: input.traderInvoiceNumber,
      saleDate: input.saleDate,
      lines: input.lines,
      ...(input.branchId ? { branchId: input.branchId } : {}),
      ...(input.paymentTypeCode ? { paymentTypeCode: input.paymentTypeCode } : {}),
      ...(input.customer ? { customer: input.customer } : {}),
    },
    idempotencyKey: saleKey,
    // Every attempt of the filing, by any activity or worker, sends the same callback URL: the body is fingerprinted.
    callbackAnchorMs: workflowInfo().startTime.getTime(),
  };
  // Undefined `ledgerWorkflowId`: the signing activity did not hand over, the sale does.
  const stock: StockSigned = { tracked: new Set(), ledgerWorkflowId: undefined };
  record.enter('creating_sale');
  const signed = await settleDocument(sale, () => fileWithItemsChecked(sale, filing, handOver, stock));
  record.signed(signed, sale.settings.refundWindowMs);
  return { deductions, ...stock };
}

async function handOverDeductions(
  sale: DocumentContext,
  { deductions, tracked, ledgerWorkflowId }: Awaited<ReturnType<typeof signSale>>,
): Promise<void> {
  const { record } = sale;
  record.enter('reporting_stock');
  record.state.stockMovements = deductions.filter((m) => tracked.has(m.itemId));
  await handOverStock(sale, record.state.stockMovements, ledgerWorkflowId);
}

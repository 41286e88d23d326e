import { ApplicationFailure, allHandlersFinished, condition, patched, workflowInfo } from '@temporalio/workflow';
import type { CreateSaleInput, SubmissionResult } from '../activities/types.js';
import { parseDuration } from '../src/contracts/duration.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { type SaleInput, type SaleState } from '../src/contracts/sale.js';
import { saleIdempotencyKey } from './keys.js';
import { saleActivities } from './sale/activities.js';
import type { SaleContext, SaleSettings } from './sale/context.js';
import { settleDocument } from './sale/documents.js';
import { ensureItemsRegistered, fileWithItemsChecked } from './sale/items.js';
import { emptyInbox, handleSaleMessages } from './sale/messages.js';
import { OperatorCancelled } from './sale/operator.js';
import { LEAN_SALE_PATH_PATCH } from './sale/patches.js';
import { SaleRecord } from './sale/record.js';
import { issueRefund } from './sale/refund.js';
import { deductions, reportPendingStock } from './sale/stock.js';

/**
 * One sale from start to signed receipt, stock report and refund window. Every fiscal write carries a key
 * derived from business identity, the outcome is always confirmed by reading the document, and anything the
 * worker cannot fix parks with a reason an operator can act on.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  const sale = openSale(input);
  try {
    const { saleKey, stockTracked } = await signSale(sale);
    await reportStock(sale, saleKey, stockTracked);
    if (await refundWindow(sale)) await refund(sale);
    await closeOnceStockSettled(sale);
  } catch (err) {
    if (!(err instanceof OperatorCancelled)) throw err;
    sale.record.cancelled(err.message);
  }
  await condition(allHandlersFinished);
  return sale.record.state;
}

function openSale(input: SaleInput): SaleContext {
  const { workflowId, taskQueue } = workflowInfo();
  const lean = patched(LEAN_SALE_PATH_PATCH);
  const sale: SaleContext = {
    input,
    settings: settingsOf(input),
    workflowId,
    taskQueue,
    record: new SaleRecord(input, lean),
    inbox: emptyInbox(),
    api: saleActivities(input.businessId),
    lean,
  };
  handleSaleMessages(sale);
  return sale;
}

/**
 * Makes sure the items are registered, files the sale with a key derived from its identity and drives it to a
 * signed receipt; returns the key and the sale's stock-tracked items.
 */
async function signSale(sale: SaleContext): Promise<{ saleKey: string; stockTracked: Set<string> }> {
  const { input, record, api } = sale;
  const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
  const filing: CreateSaleInput = { businessId: input.businessId, workflowId: sale.workflowId, request: saleRequest(input), idempotencyKey: saleKey };
  let stockTracked = new Set<string>();
  let submit: () => Promise<SubmissionResult>;
  if (sale.lean) {
    submit = () => fileWithItemsChecked(sale, filing, (tracked) => (stockTracked = tracked));
  } else {
    stockTracked = await ensureItemsRegistered(sale);
    submit = () => api.signing.createSale(filing);
  }
  record.enter('creating_sale');
  record.signed(await settleDocument(sale, 'sale', submit));
  return { saleKey, stockTracked };
}

async function reportStock(sale: SaleContext, saleKey: string, stockTracked: Set<string>): Promise<void> {
  sale.record.enter('reporting_stock');
  sale.record.state.stockMovements = deductions(sale, saleKey, stockTracked);
  await reportPendingStock(sale);
}

/**
 * Open for a refund until the window ends; an operator's re-sent stock movement is acted on meanwhile.
 * True when a refund was asked for.
 */
async function refundWindow(sale: SaleContext): Promise<boolean> {
  const { record, inbox } = sale;
  record.enter('refund_window');
  const deadline = Date.now() + sale.settings.refundWindowMs;
  record.state.refundDeadline = new Date(deadline).toISOString();
  for (;;) {
    const remaining = deadline - Date.now();
    if (inbox.refund === undefined && remaining <= 0) return false;
    await condition(() => inbox.stockWork || inbox.refund !== undefined, Math.max(remaining, 1));
    if (inbox.stockWork) await reportPendingStock(sale);
    if (inbox.refund) return true;
  }
}

/** Issues the refund asked for; a failure goes back to the operator through the refund update. */
async function refund(sale: SaleContext): Promise<void> {
  const asked = sale.inbox.refund!;
  asked.issuing ??= issueRefund(sale, asked.request);
  await asked.issuing.catch(() => undefined);
}

/** Closes only once every stock movement is settled; an operator's re-send is still acted on. */
async function closeOnceStockSettled(sale: SaleContext): Promise<void> {
  const { record, inbox } = sale;
  record.state.refundDeadline = null;
  record.enter('reporting_stock');
  for (;;) {
    await condition(() => inbox.stockWork || record.state.stockMovements.every((m) => m.status !== 'needs_confirmation'));
    if (!inbox.stockWork) break;
    await reportPendingStock(sale);
  }
  record.closed();
}

function settingsOf(input: SaleInput): SaleSettings {
  const outcomeTimeoutMs = optionDuration('outcomeTimeout', input.options?.outcomeTimeout ?? '24 hours');
  const itemFixDeadline = input.options?.itemFixDeadline ?? '7 days';
  // Passed on as text to the registration workflow, but a bad value should fail the sale now.
  optionDuration('itemFixDeadline', itemFixDeadline);
  return {
    refundWindowMs: (input.options?.refundWindowDays ?? 30) * 86_400_000,
    outcomeTimeoutMs,
    itemFixDeadline,
    transientRetryLimit: input.options?.transientRetryLimit ?? 5,
  };
}

/** Starts from plain JSON (the Temporal CLI) skip the client's validation: a bad duration fails the run clearly. */
function optionDuration(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw ApplicationFailure.nonRetryable(`options.${name}: not a duration: ${value}`, FAILURE_TYPES.invalidInput);
  return ms;
}

function saleRequest(input: SaleInput) {
  return {
    traderInvoiceNumber: input.traderInvoiceNumber,
    saleDate: input.saleDate,
    lines: input.lines,
    ...(input.branchId ? { branchId: input.branchId } : {}),
    ...(input.paymentTypeCode ? { paymentTypeCode: input.paymentTypeCode } : {}),
    ...(input.customer ? { customer: input.customer } : {}),
  };
}

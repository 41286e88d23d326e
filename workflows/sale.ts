import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  workflowInfo,
} from '@temporalio/workflow';
import { parseDuration } from '../src/contracts/duration.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { isSigned } from '../src/contracts/compliance-rules.js';
import { checkSaleInput, type InputProblem } from '../src/contracts/sale-input.js';
import { type SaleInput, type SaleState } from '../src/contracts/sale.js';
import { saleIdempotencyKey } from './keys.js';
import { placeOnBudget, unplacedRoute } from './placement.js';
import { saleActivities } from './sale/activities.js';
import { invalidSaleInput } from './sale/arguments.js';
import type { SaleContext, SaleSettings } from './sale/context.js';
import { settleDocument } from './sale/documents.js';
import { fileWithItemsChecked } from './sale/items.js';
import { emptyInbox, handleSaleMessages, handleUnusableInput } from './sale/messages.js';
import { OperatorCancelled, parkOnRefusal } from './sale/operator.js';
import { SaleRecord } from './sale/record.js';
import { issueRefund } from './sale/refund.js';
import { deductions, handOverStock } from './sale/stock.js';

/**
 * One sale from start to signed receipt, stock hand-over and refund window. Every fiscal write carries a key
 * derived from business identity, the outcome is always confirmed by reading the document, and anything the
 * worker cannot fix parks with a reason an operator can act on.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks: nothing unusable goes further.
  const checked = checkSaleInput(input);
  if (!checked.ok) refuseInput(input, checked.problems);
  const sale = openSale(input);
  // Temporal's own cancellation is an operator's word, not a kill: the process runs on, and the sale decides.
  CancellationScope.current().cancelRequested.catch(() => onTemporalCancellation(sale));
  return CancellationScope.nonCancellable(() => runSale(sale));
}

async function runSale(sale: SaleContext): Promise<SaleState> {
  try {
    await placeSale(sale);
    const { saleKey, stockTracked } = await signSale(sale);
    await handOverDeductions(sale, saleKey, stockTracked);
    if (await refundWindow(sale)) await refund(sale);
    sale.record.closed();
  } catch (err) {
    if (!(err instanceof OperatorCancelled)) throw err;
    sale.record.cancelled(err.message);
  }
  await condition(allHandlersFinished);
  return sale.record.state;
}

/**
 * Learns which application serves the business before anything is sent: its calls then spend that application's
 * budget. A business no application serves (never onboarded, or removed) parks the sale with `business_not_served`
 * until an operator retries once it is served, or cancels.
 */
async function placeSale(sale: SaleContext): Promise<void> {
  const route = await parkOnRefusal(sale, () => placeOnBudget(sale.input.businessId, true), {
    cancellable: true,
    asksNoService: true,
  });
  sale.api = saleActivities(route);
}

function openSale(input: SaleInput): SaleContext {
  const { workflowId, taskQueue } = workflowInfo();
  const sale: SaleContext = {
    input,
    settings: settingsOf(input),
    workflowId,
    taskQueue,
    record: new SaleRecord(input),
    inbox: emptyInbox(),
    // Replaced once placed: nothing is called before.
    api: saleActivities(unplacedRoute(input.businessId)),
  };
  handleSaleMessages(sale);
  return sale;
}

/**
 * Ends a sale whose input it cannot use before anything is sent: a non-retryable `invalid_input` naming the fields
 * (details: every problem), never a workflow task failing for ever. Its query and `awaitReceipt` are in place first,
 * so an update-with-start of the same input is refused naming them too.
 */
function refuseInput(input: unknown, problems: [InputProblem, ...InputProblem[]]): never {
  const named =
    typeof input === 'object' && input !== null
      ? (input as Partial<Record<'businessId' | 'traderInvoiceNumber', unknown>>)
      : {};
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  const record = new SaleRecord({
    businessId: text(named.businessId),
    traderInvoiceNumber: text(named.traderInvoiceNumber),
  });
  handleUnusableInput(record, input, problems);
  record.invalidInput(FAILURE_TYPES.invalidInput, problems);
  throw invalidSaleInput(problems);
}

/**
 * The Temporal UI's "Request Cancellation" (or `temporal workflow cancel`): the cancel update's effect while the
 * sale is parked unsigned; otherwise refused, noted in its history and details, and the sale carries on.
 */
function onTemporalCancellation(sale: SaleContext): void {
  const { record, inbox } = sale;
  if (record.isParkedFor('cancel')) {
    inbox.operatorCancel ??= 'cancellation requested through Temporal';
    return;
  }
  record.cancellationRefused(whyNotCancellable(record.state));
}

function whyNotCancellable(state: SaleState): string {
  if (state.step === 'cancelled') return 'the sale is already cancelled';
  if ((state.sale !== null && isSigned(state.sale)) || state.creditNote !== null) {
    return 'the sale is signed: only a refund (a credit note) reverses it';
  }
  if (state.parked) {
    const actions = state.parked.actions.map((a) => `\`${a}\``).join(' or ');
    return `the sale is parked for ${actions} (${state.parked.code}), which a cancel cannot resolve`;
  }
  return `a document is with the service (step ${state.step}): once the sale is parked unsigned, the cancel update ends it`;
}

/**
 * Files the sale with a key derived from its identity, its items checked (and registered first when some are not),
 * and drives it to a signed receipt; returns the key and the sale's stock-tracked items.
 */
async function signSale(sale: SaleContext): Promise<{ saleKey: string; stockTracked: Set<string> }> {
  const { input, record } = sale;
  const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
  const filing = {
    businessId: input.businessId,
    workflowId: sale.workflowId,
    request: saleRequest(input),
    idempotencyKey: saleKey,
  };
  let stockTracked = new Set<string>();
  record.enter('creating_sale');
  const signed = await settleDocument(sale, 'sale', () =>
    fileWithItemsChecked(sale, filing, (tracked) => (stockTracked = tracked)),
  );
  record.signed(signed);
  return { saleKey, stockTracked };
}

/** The branch's stock ledger, its one writer, takes the sale's deductions; the sale does not wait on stock. */
async function handOverDeductions(sale: SaleContext, saleKey: string, stockTracked: Set<string>): Promise<void> {
  sale.record.enter('reporting_stock');
  sale.record.state.stockMovements = deductions(sale, saleKey, stockTracked);
  await handOverStock(sale, sale.record.state.stockMovements, sale.settings.refundWindowMs > 0);
}

/** Open for a refund until the window ends; true when a refund was asked for. */
async function refundWindow(sale: SaleContext): Promise<boolean> {
  const { record, inbox, settings } = sale;
  record.enter('refund_window');
  record.state.refundDeadline = new Date(Date.now() + settings.refundWindowMs).toISOString();
  if (inbox.refund === undefined && settings.refundWindowMs > 0) {
    await condition(() => inbox.refund !== undefined, settings.refundWindowMs);
  }
  return inbox.refund !== undefined;
}

/** Issues the refund asked for; a failure goes back to the operator through the refund update. */
async function refund(sale: SaleContext): Promise<void> {
  const asked = sale.inbox.refund!;
  asked.issuing = issueRefund(sale, asked.request);
  await asked.issuing.catch(() => undefined);
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
  if (ms === undefined)
    throw ApplicationFailure.nonRetryable(`options.${name}: not a duration: ${value}`, FAILURE_TYPES.invalidInput);
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

import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import type { CreateSaleInput, SubmissionResult } from '../activities/types.js';
import { parseDuration } from '../src/contracts/duration.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { isSigned } from '../src/contracts/compliance-rules.js';
import { checkSaleInput, type InputProblem } from '../src/contracts/sale-input.js';
import { type SaleInput, type SaleState } from '../src/contracts/sale.js';
import { saleIdempotencyKey } from './keys.js';
import { saleActivities } from './sale/activities.js';
import type { SaleContext, SaleSettings } from './sale/context.js';
import { settleDocument } from './sale/documents.js';
import { ensureItemsRegistered, fileWithItemsChecked } from './sale/items.js';
import { invalidSaleInput } from './sale/arguments.js';
import { emptyInbox, handleSaleMessages, handleUnusableInput } from './sale/messages.js';
import { OperatorCancelled, parkOnRefusal } from './sale/operator.js';
import { callRouteOf, placeOnBudget } from './placement.js';
import { DOORS_HELD_PATCH, LEAN_SALE_PATH_PATCH, STOCK_LEDGER_PATCH } from './sale/patches.js';
import { SaleRecord } from './sale/record.js';
import { issueRefund } from './sale/refund.js';
import { deductions, handOverStock, reportPendingStock } from './sale/stock.js';

/**
 * One sale from start to signed receipt, stock report and refund window. Every fiscal write carries a key
 * derived from business identity, the outcome is always confirmed by reading the document, and anything the
 * worker cannot fix parks with a reason an operator can act on.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  const lean = patched(LEAN_SALE_PATH_PATCH);
  const doorsHeld = patched(DOORS_HELD_PATCH);
  if (doorsHeld) {
    // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks: nothing unusable goes further.
    const checked = checkSaleInput(input);
    if (!checked.ok) refuseInput(input, checked.problems);
  }
  const sale = openSale(input, lean, doorsHeld);
  if (!doorsHeld) return runSale(sale);
  // Temporal's own cancellation is an operator's word, not a kill: the process runs on, and the sale decides.
  CancellationScope.current().cancelRequested.catch(() => onTemporalCancellation(sale));
  return CancellationScope.nonCancellable(() => runSale(sale));
}

async function runSale(sale: SaleContext): Promise<SaleState> {
  try {
    await placeSale(sale);
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

/**
 * Learns which application serves the business before anything is sent: its calls then spend that application's
 * budget. A business no application serves (never onboarded, or removed) parks the sale with `business_not_served`
 * until an operator retries once it is served, or cancels.
 */
async function placeSale(sale: SaleContext): Promise<void> {
  const placement = await parkOnRefusal(sale, () => placeOnBudget(sale.input.businessId, true), {
    cancellable: true,
    asksNoService: true,
  });
  if (placement) sale.api = saleActivities(callRouteOf(sale.input.businessId, placement));
}

function openSale(input: SaleInput, lean: boolean, doorsHeld: boolean): SaleContext {
  const { workflowId, taskQueue } = workflowInfo();
  const sale: SaleContext = {
    input,
    settings: settingsOf(input),
    workflowId,
    taskQueue,
    record: new SaleRecord(input, lean, doorsHeld),
    inbox: emptyInbox(),
    api: saleActivities({ fairnessKey: input.businessId }),
    refundWindowEnded: false,
    ledger: false,
    lean,
    doorsHeld,
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
  const record = new SaleRecord(
    { businessId: text(named.businessId), traderInvoiceNumber: text(named.traderInvoiceNumber) },
    true,
    true,
  );
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
  if (state.parked)
    return `the sale is parked for ${state.parked.actions.map((a) => `\`${a}\``).join(' or ')} (${state.parked.code}), which a cancel cannot resolve`;
  return `a document is with the service (step ${state.step}): once the sale is parked unsigned, the cancel update ends it`;
}

/**
 * Makes sure the items are registered, files the sale with a key derived from its identity and drives it to a
 * signed receipt; returns the key and the sale's stock-tracked items.
 */
async function signSale(sale: SaleContext): Promise<{ saleKey: string; stockTracked: Set<string> }> {
  const { input, record, api } = sale;
  const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
  const filing: CreateSaleInput = {
    businessId: input.businessId,
    workflowId: sale.workflowId,
    request: saleRequest(input),
    idempotencyKey: saleKey,
  };
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
  // Asked here, not at the start: a sale that never signs records no marker.
  sale.ledger = patched(STOCK_LEDGER_PATCH);
  if (sale.ledger) await handOverStock(sale, sale.record.state.stockMovements, sale.settings.refundWindowMs > 0);
  else await reportPendingStock(sale);
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
  sale.refundWindowEnded = true;
  record.state.refundDeadline = null;
  record.enter('reporting_stock');
  for (;;) {
    await condition(
      () => inbox.stockWork || record.state.stockMovements.every((m) => m.status !== 'needs_confirmation'),
    );
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

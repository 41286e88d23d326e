import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { NON_RESTOCKING_REASONS } from '../src/contracts/compliance-rules.js';
import { parseDuration } from '../src/contracts/duration.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { checkSaleInput } from '../src/contracts/sale-input.js';
import type { ItemRegistrationOutcome } from '../src/contracts/item-registration.js';
import type { OutageSide } from '../src/contracts/outage-watch.js';
import type { RefundRequest, RefundResult, SaleInput, SaleState, StockMovementState } from '../src/contracts/sale.js';
import type { StockLine } from '../src/contracts/stock-ledger.js';
import { creditNoteIdempotencyKey, saleIdempotencyKey, stockReferenceId } from './keys.js';
import { placeOnBudget, unplacedRoute } from './placement.js';
import { saleActivities } from './sale/activities.js';
import { settleDocument } from './sale/documents.js';
import { fileWithItemsChecked, type StockSigned } from './sale/items.js';
import { handleSaleMessages, handleTemporalCancellation, refuseInput } from './sale/messages.js';
import { OperatorCancelled, parkOnRefusal } from './sale/operator.js';
import { RIDE_OUTAGES_PATCH } from './sale/outage.js';
import { SaleRecord } from './sale/record.js';

/** One sale from start to signed receipt, stock hand-over and refund window; what the worker cannot fix parks. */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  // Starts in plain JSON (the Temporal CLI, another SDK) skip the client's checks: nothing unusable goes further.
  const checked = checkSaleInput(input);
  if (!checked.ok) refuseInput(input, checked.problems);
  const sale = openSale(input);
  handleSaleMessages(sale);
  // Temporal's own cancellation is an operator's word, not a kill: the process runs on, and the sale decides.
  CancellationScope.current().cancelRequested.catch(() => handleTemporalCancellation(sale));
  return CancellationScope.nonCancellable(() => runSale(sale));
}

async function runSale(sale: SaleContext): Promise<SaleState> {
  try {
    await placeSale(sale);
    await handOverDeductions(sale, await signSale(sale));
    if (await refundWindow(sale)) {
      const asked = sale.inbox.refund!;
      // A failure goes back to the operator through the refund update.
      asked.issuing = issueRefund(sale, asked.request);
      await asked.issuing.catch(() => undefined);
    }
    sale.record.closed();
  } catch (err) {
    if (!(err instanceof OperatorCancelled)) throw err;
    sale.record.cancelled(err.message);
  }
  await condition(allHandlersFinished);
  return sale.record.state;
}

/** What the steps of one sale share. */
function openSale(input: SaleInput) {
  const { workflowId, taskQueue } = workflowInfo();
  return {
    input,
    settings: settingsOf(input),
    workflowId,
    taskQueue,
    record: new SaleRecord(input),
    /** What the message handlers recorded for the process to act on; handlers never act themselves. */
    inbox: {
      /** Result callbacks received: each is a hint to read the document again. */
      callbackHints: 0,
      registrations: new Map<string, ItemRegistrationOutcome>(),
      operatorRetry: false,
      operatorCancel: undefined as string | undefined,
      /** What the application's outage watch last told this sale: probe (try once now) or over (go). */
      outageNews: undefined as 'probe' | 'over' | undefined,
      /** The refund asked for, and once the process took it, its issuing (which the update awaits). */
      refund: undefined as { request: RefundRequest; issuing?: Promise<RefundResult> } | undefined,
    },
    // Replaced once placed: nothing is called before.
    api: saleActivities(unplacedRoute(input.businessId), false),
    /** Where its compliance calls go once placed: names its application's outage watch. */
    route: unplacedRoute(input.businessId),
    tries: { one: false },
    /** The outage watch this sale waits on, and whether its next try is the watch's probe. */
    outageWatch: undefined as { side: OutageSide; probing: boolean } | undefined,
  };
}

export type SaleContext = ReturnType<typeof openSale>;

/** Before anything is sent: calls spend the serving application's budget; an unserved business parks the sale. */
async function placeSale(sale: SaleContext): Promise<void> {
  const route = await parkOnRefusal(sale, () => placeOnBudget(sale.input.businessId, true), true, true);
  sale.route = route;
  sale.api = saleActivities(route, sale.settings.ridesOutages, sale.tries);
}

/** Signed at once, its stock goes to the ledger from the signing activity: a till's answer waits for no hand-over. */
async function signSale(sale: SaleContext) {
  const { input, record } = sale;
  const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
  const deductions = input.lines.map((line, index) =>
    movement(stockReferenceId(saleKey, index, 'DEDUCT'), { ...line, action: 'DEDUCT' }),
  );
  // Always offered: an execution whose recorded signing result names no ledger (an older worker's) hands over itself.
  const handOver = { taskQueue: sale.taskQueue, lines: stockLines(sale, deductions, sale.settings.refundWindowMs > 0) };
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
  const signed = await settleDocument(sale, 'sale', () => fileWithItemsChecked(sale, filing, handOver, stock));
  record.signed(signed);
  return { deductions, ...stock };
}

async function handOverDeductions(
  sale: SaleContext,
  { deductions, tracked, ledgerWorkflowId }: Awaited<ReturnType<typeof signSale>>,
): Promise<void> {
  const { record, settings } = sale;
  record.enter('reporting_stock');
  record.state.stockMovements = deductions.filter((m) => tracked.has(m.itemId));
  await handOverStock(sale, record.state.stockMovements, settings.refundWindowMs > 0, ledgerWorkflowId);
  if (ledgerWorkflowId !== undefined) record.carriedEarly();
}

/** Open for a refund until the window ends; true when a refund was asked for. */
async function refundWindow(sale: SaleContext): Promise<boolean> {
  const { record, inbox, settings } = sale;
  record.enter('refund_window');
  record.state.refundDeadline = new Date(Date.now() + settings.refundWindowMs).toISOString();
  if (inbox.refund === undefined && settings.refundWindowMs > 0)
    await condition(() => inbox.refund !== undefined, settings.refundWindowMs);
  return inbox.refund !== undefined;
}

async function issueRefund(sale: SaleContext, request: RefundRequest): Promise<RefundResult> {
  const { input, record, api } = sale;
  record.enter('refunding');
  const key = creditNoteIdempotencyKey(input.businessId, input.traderInvoiceNumber, request.traderInvoiceNumber);
  const callbackAnchorMs = Date.now();
  const creditNote = await settleDocument(sale, 'credit note', () =>
    api.createCreditNote({
      businessId: input.businessId,
      workflowId: sale.workflowId,
      saleId: record.state.sale!.id,
      traderInvoiceNumber: request.traderInvoiceNumber,
      returnDate: request.returnDate,
      reason: request.reason,
      idempotencyKey: key,
      callbackAnchorMs,
    }),
  );
  record.refunded(creditNote);
  // Goods come back on the shelf unless they were damaged or wasted.
  const restock = (request.restock ?? true) && !NON_RESTOCKING_REASONS.includes(request.reason);
  const returned = restock
    ? record.state.stockMovements
        .filter((m) => m.action === 'DEDUCT')
        .map((m, index) => movement(stockReferenceId(key, index, 'ADD'), { ...m, action: 'ADD' }))
    : [];
  record.state.stockMovements.push(...returned);
  // The sale closes once its refund is issued: nobody to tell which movement put the goods back.
  await handOverStock(sale, returned, false);
  return { creditNote, stockMovements: returned.map((m) => record.movement(m.referenceId)!) };
}

function movement(
  referenceId: string,
  { itemId, action, quantity, unitPrice }: Pick<StockMovementState, 'itemId' | 'action' | 'quantity' | 'unitPrice'>,
): StockMovementState {
  return { referenceId, itemId, action, quantity, unitPrice, status: 'pending' };
}

/** To the branch's stock ledger unless `ledgerWorkflowId` has them; a sale `stayingOpen` hears `stockCarried`. */
async function handOverStock(
  sale: SaleContext,
  movements: StockMovementState[],
  stayingOpen: boolean,
  ledgerWorkflowId?: string,
): Promise<void> {
  if (movements.length === 0) return;
  const { input } = sale;
  ledgerWorkflowId ??= (
    await sale.api.handOverStock({
      businessId: input.businessId,
      ...(input.branchId ? { branchId: input.branchId } : {}),
      lines: stockLines(sale, movements, stayingOpen),
      taskQueue: sale.taskQueue,
    })
  ).ledgerWorkflowId;
  for (const m of movements) {
    m.status = 'handed_over';
    m.ledger = ledgerWorkflowId;
  }
}

function stockLines(sale: SaleContext, movements: StockMovementState[], stayingOpen: boolean): StockLine[] {
  return movements.map((m) => ({
    ...(stayingOpen ? { tellSale: true } : {}),
    lineId: m.referenceId,
    saleWorkflowId: sale.workflowId,
    itemId: m.itemId,
    action: m.action,
    quantity: m.quantity,
    unitPrice: m.unitPrice,
  }));
}

function settingsOf(input: SaleInput) {
  const ridesOutages = patched(RIDE_OUTAGES_PATCH);
  const outageLimit = input.options?.outageLimit;
  const outcomeTimeoutMs = optionDuration('outcomeTimeout', input.options?.outcomeTimeout ?? '24 hours');
  const itemFixDeadline = input.options?.itemFixDeadline ?? '7 days';
  // Passed on as text to the registration workflow, but a bad value should fail the sale now.
  optionDuration('itemFixDeadline', itemFixDeadline);
  return {
    refundWindowMs: (input.options?.refundWindowDays ?? 30) * 86_400_000,
    outcomeTimeoutMs,
    // Parks when no outcome comes in time, else waits that out: a limit the caller set is theirs, the default one
    // is an outage like any other.
    outcomeTimeoutParks: !ridesOutages || input.options?.outcomeTimeout !== undefined,
    itemFixDeadline,
    /** Transient authority failures retried before parking; undefined: as long as the outage lasts. */
    transientRetryLimit: input.options?.transientRetryLimit ?? (ridesOutages ? undefined : 5),
    /** How long an outage is waited out before parking; undefined: as long as it lasts. */
    outageLimitMs: outageLimit === undefined ? undefined : optionDuration('outageLimit', outageLimit),
    /** Outages are waited out in the sale's state (the `ride-outages` patch); false in sales started before it. */
    ridesOutages,
  };
}

function optionDuration(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw ApplicationFailure.nonRetryable(`options.${name}: not a duration: ${value}`, FAILURE_TYPES.invalidInput);
  return ms;
}

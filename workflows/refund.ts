import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { FoundSale } from '../activities/types.js';
import { NON_RESTOCKING_REASONS, isSigned } from '../src/contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  DEFAULT_REFUND_WINDOW_DAYS,
  getRefundInputQuery,
  refundUpdate,
  type RefundInput,
} from '../src/contracts/refund.js';
import { checkInput, describeProblems, saleInputDifferences, saleSchemas } from '../src/contracts/sale-input.js';
import type { RefundResult, StockMovementState } from '../src/contracts/sale.js';
import { handleProcessMessages, hold, refuseOtherRequest } from './document/messages.js';
import { DocumentProcess, applicationFailure, movement } from './document/process.js';
import { Submission } from './document/settle.js';
import { creditNoteIdempotencyKey, stockReferenceId } from './keys.js';
import { placeOnBudget } from './placement.js';
import { refuse, required } from './update-arguments.js';

/**
 * One refund of one signed sale: a credit note reversing it in full, filed, signed and its goods put back through the
 * branch's stock ledger, by the same steps as the sale's own document. Refused (the workflow fails, so a corrected
 * refund can start again) when the sale is not signed or its refund window is over.
 */
export async function refundWorkflow(input: RefundInput): Promise<RefundResult> {
  const checked = checkInput(saleSchemas().refundInput, input);
  if (!checked.ok) refuse(describeProblems('refund input', checked.problems), checked.problems);
  const request = checked.value;
  const { businessId, traderInvoiceNumber } = request;
  const refund = new DocumentProcess('refund', { businessId, traderInvoiceNumber, lines: [] });
  let outcome: RefundOutcome | undefined;
  handleRefundMessages(refund, request, () => outcome);
  // Nothing to cancel: a credit note once asked for is the way back to the books, and it goes on until signed.
  try {
    outcome = { result: await CancellationScope.nonCancellable(() => runRefund(refund, request)) };
    refund.record.closed();
  } catch (err) {
    const refused = refusalOf(err);
    if (refused === undefined) throw err;
    outcome = { refused };
    refund.record.refused(refused.message);
  }
  await condition(allHandlersFinished);
  if ('refused' in outcome) throw outcome.refused;
  return outcome.result;
}

/** How the refund ended, for the `refund` update to answer. */
type RefundOutcome = { result: RefundResult } | { refused: ApplicationFailure };

/** `refund` answers with the credit note once issued; the same request again joins it, another is refused. */
function handleRefundMessages(refund: DocumentProcess, request: RefundInput, outcome: () => RefundOutcome | undefined) {
  handleProcessMessages(refund);
  setHandler(getRefundInputQuery, () => request);
  setHandler(
    refundUpdate,
    async () => {
      await hold(() => outcome() !== undefined);
      const ended = outcome()!;
      if ('refused' in ended) throw ended.refused;
      return ended.result;
    },
    {
      validator: (argument) => {
        const asked = required(
          'refund',
          '{"reason": "01".."06", "returnDate": "YYYY-MM-DD", "traderInvoiceNumber": "…", "restock"?: true}',
          saleSchemas().refundRequest,
          argument,
        );
        refuseOtherRequest(
          FAILURE_TYPES.alreadyCredited,
          `sale ${request.traderInvoiceNumber} is already refunded with another request`,
          saleInputDifferences(request.request, asked),
        );
      },
    },
  );
}

async function runRefund(refund: DocumentProcess, { businessId, traderInvoiceNumber, request }: RefundInput) {
  const { record, api } = refund;
  record.enter('finding_sale');
  const found = await api.findSignedSale({ businessId, traderInvoiceNumber });
  // Every refusal the record allows comes before anything is asked of the budget or the service.
  if (found.found === 'refused')
    refused(found.reason, found.openForRefund ? FAILURE_TYPES.saleOpenForRefund : FAILURE_TYPES.invalidOperation);
  if (found.found === 'no_record' && request.saleId === undefined)
    refused(
      "the sale's workflow is not found (never started, or past the namespace's retention): " +
        "give the service's sale id as saleId to refund it from the service's record",
    );
  const known = found.found === 'record' ? withinWindow(found) : undefined;
  // The tail of a sale's work, not new work: an application being offboarded still serves it.
  refund.route = await refund.parkOnRefusal(() => placeOnBudget(businessId, false), true);
  const sale = known ?? withinWindow(await readFromService(refund, request.saleId!, request.branchId));
  record.reverses(sale);
  refund.reverses(sale.lines, sale.branchId);

  record.enter('refunding');
  const key = creditNoteIdempotencyKey(businessId, traderInvoiceNumber, request.traderInvoiceNumber);
  const creditNote = await new Submission(refund).settle(() =>
    api.createCreditNote({
      businessId,
      workflowId: refund.workflowId,
      saleId: sale.sale.id,
      traderInvoiceNumber: request.traderInvoiceNumber,
      returnDate: request.returnDate,
      reason: request.reason,
      idempotencyKey: key,
      callbackAnchorMs: workflowInfo().startTime.getTime(),
    }),
  );
  record.refunded(creditNote);
  await refund.enterDayBook(creditNote);
  // Goods come back on the shelf unless they were damaged or wasted.
  const restock = (request.restock ?? true) && !NON_RESTOCKING_REASONS.includes(request.reason);
  const returned = restock
    ? sale.stockMovements
        .filter((m) => m.action === 'DEDUCT')
        .map((m, index) => movement(stockReferenceId(key, index, 'ADD'), { ...m, action: 'ADD' }))
    : [];
  record.state.stockMovements = returned;
  record.enter('reporting_stock');
  await refund.handOverStock(returned);
  return { creditNote, stockMovements: returned };
}

const REFUSALS: ReadonlySet<string> = new Set([
  FAILURE_TYPES.invalidOperation,
  FAILURE_TYPES.saleOpenForRefund,
  FAILURE_TYPES.alreadyCredited,
]);

/** This refund's own refusals, and the service's: the sale was credited already (by another credit note). */
function refusalOf(err: unknown): ApplicationFailure | undefined {
  const failure = applicationFailure(err);
  return REFUSALS.has(failure?.type ?? '') ? failure : undefined;
}

function refused(reason: string, type: string = FAILURE_TYPES.invalidOperation): never {
  throw ApplicationFailure.create({ type, message: reason, nonRetryable: true });
}

/** Past the sale's workflow retention, the service's own record: the sale's lines, its stock-tracked items. */
type SignedRecord = Extract<FoundSale, { found: 'record' }>;

/** The record with its deadline: the sale's own, or the default window from its signed date; refused past it. */
function withinWindow(sale: SignedRecord): SignedRecord {
  const deadline = sale.refundDeadline ?? windowFrom(sale.signedAt);
  if (deadline === null) refused('the signed date of the sale is not known, so neither is its refund window');
  if (Date.now() >= Date.parse(deadline)) refused(`the refund window of the sale ended at ${deadline}`);
  return { ...sale, refundDeadline: deadline };
}

async function readFromService(
  refund: DocumentProcess,
  saleId: string,
  branchId: string | undefined,
): Promise<SignedRecord> {
  const { subject, api } = refund;
  const { document, saleDate, lines } = await refund.call(() =>
    api.readSaleRecord({ businessId: subject.businessId, documentId: saleId }),
  );
  if (document.type !== 'sale' || document.traderInvoiceNumber !== subject.traderInvoiceNumber)
    refused(`document ${saleId} is not sale ${subject.traderInvoiceNumber}`);
  if (!isSigned(document)) refused(`sale ${saleId} is not signed (status ${document.status})`);
  const itemIds = [...new Set(lines.map((l) => l.itemId))];
  const { items } = await refund.call(() => api.checkItems({ businessId: subject.businessId, itemIds }));
  const tracked = new Set(items.filter((i) => i.stockTracked).map((i) => i.itemId));
  // What the sale took off the shelf; the ADD lines that put it back are keyed by the credit note.
  const stockMovements: StockMovementState[] = lines
    .filter((l) => tracked.has(l.itemId))
    .map((l, index) => movement(`${saleId}:${index}`, { ...l, action: 'DEDUCT' }));
  return {
    found: 'record',
    sale: document,
    lines,
    signedAt: signedDateOf(document.receipt?.scuDate ?? null) ?? saleDate,
    refundDeadline: null,
    ...(branchId ? { branchId } : {}),
    stockMovements,
  };
}

/** The receipt prints `DD/MM/YYYY`. */
function signedDateOf(scuDate: string | null): string | null {
  const [, day, month, year] = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(scuDate ?? '') ?? [];
  return year ? `${year}-${month}-${day}` : null;
}

function windowFrom(signedAt: string | null): string | null {
  const start = Date.parse(signedAt ?? '');
  return Number.isNaN(start) ? null : new Date(start + DEFAULT_REFUND_WINDOW_DAYS * 86_400_000).toISOString();
}

import { ApplicationFailure, CancellationScope, setHandler } from '@temporalio/workflow';
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
  const refund = new Refund(checked.value);
  refund.handleMessages();
  return refund.run();
}

/** How the refund ended, for the `refund` update to answer. */
type RefundOutcome = { result: RefundResult } | { refused: ApplicationFailure };

class Refund extends DocumentProcess {
  private outcome: RefundOutcome | undefined;

  constructor(private readonly request: RefundInput) {
    super('refund', { businessId: request.businessId, traderInvoiceNumber: request.traderInvoiceNumber, lines: [] });
  }

  /** `refund` answers with the credit note once issued; the same request again joins it, another is refused. */
  handleMessages(): void {
    const { request } = this;
    handleProcessMessages(this);
    setHandler(getRefundInputQuery, () => request);
    setHandler(
      refundUpdate,
      async () => {
        await hold(() => this.outcome !== undefined);
        return this.answer(this.outcome!);
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

  /** Refused (the workflow fails, so a corrected refund can start again), or the credit note and the goods back. */
  async run(): Promise<RefundResult> {
    // Nothing to cancel: a credit note once asked for is the way back to the books, and it goes on until signed.
    try {
      this.outcome = { result: await CancellationScope.nonCancellable(() => this.reverseSale()) };
      this.record.closed();
    } catch (err) {
      const refused = refusalOf(err);
      if (refused === undefined) throw err;
      this.outcome = { refused };
      this.record.refused(refused.message);
    }
    await this.handlersFinished();
    return this.answer(this.outcome);
  }

  private answer(outcome: RefundOutcome): RefundResult {
    if ('refused' in outcome) throw outcome.refused;
    return outcome.result;
  }

  private async reverseSale(): Promise<RefundResult> {
    const { record, api } = this;
    const { businessId, traderInvoiceNumber, request } = this.request;
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
    this.route = await this.parkOnRefusal(() => placeOnBudget(businessId, false), true);
    const sale = known ?? withinWindow(await this.readFromService(request.saleId!, request.branchId));
    record.reverses(sale);
    this.subject = { ...this.subject, lines: sale.lines, branchId: sale.branchId };

    record.enter('refunding');
    const key = creditNoteIdempotencyKey(businessId, traderInvoiceNumber, request.traderInvoiceNumber);
    const creditNote = await new Submission(this).settle(() =>
      api.createCreditNote({
        businessId,
        workflowId: this.workflowId,
        saleId: sale.sale.id,
        traderInvoiceNumber: request.traderInvoiceNumber,
        returnDate: request.returnDate,
        reason: request.reason,
        idempotencyKey: key,
        callbackAnchorMs: this.startedMs,
      }),
    );
    record.refunded(creditNote);
    await this.enterDayBook(creditNote);
    // Goods come back on the shelf unless they were damaged or wasted.
    const restock = (request.restock ?? true) && !NON_RESTOCKING_REASONS.includes(request.reason);
    const returned = restock
      ? sale.stockMovements
          .filter((m) => m.action === 'DEDUCT')
          .map((m, index) => movement(stockReferenceId(key, index, 'ADD'), { ...m, action: 'ADD' }))
      : [];
    record.state.stockMovements = returned;
    record.enter('reporting_stock');
    await this.handOverStock(returned);
    return { creditNote, stockMovements: returned };
  }

  /** Past the sale's workflow retention, the service's own record: the sale's lines, its stock-tracked items. */
  private async readFromService(saleId: string, branchId: string | undefined): Promise<SignedRecord> {
    const { api, businessId } = this;
    const { traderInvoiceNumber } = this.request;
    const { document, saleDate, lines } = await this.call(() => api.readSaleRecord({ businessId, documentId: saleId }));
    if (document.type !== 'sale' || document.traderInvoiceNumber !== traderInvoiceNumber)
      refused(`document ${saleId} is not sale ${traderInvoiceNumber}`);
    if (!isSigned(document)) refused(`sale ${saleId} is not signed (status ${document.status})`);
    const itemIds = [...new Set(lines.map((l) => l.itemId))];
    const { items } = await this.call(() => api.checkItems({ businessId, itemIds }));
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

/** A signed sale as its workflow's record or the service's tells it. */
type SignedRecord = Extract<FoundSale, { found: 'record' }>;

/** The record with its deadline: the sale's own, or the default window from its signed date; refused past it. */
function withinWindow(sale: SignedRecord): SignedRecord {
  const signed = Date.parse(sale.signedAt ?? '');
  const fromSigned = Number.isNaN(signed)
    ? null
    : new Date(signed + DEFAULT_REFUND_WINDOW_DAYS * 86_400_000).toISOString();
  const deadline = sale.refundDeadline ?? fromSigned;
  if (deadline === null) refused('the signed date of the sale is not known, so neither is its refund window');
  if (Date.now() >= Date.parse(deadline)) refused(`the refund window of the sale ended at ${deadline}`);
  return { ...sale, refundDeadline: deadline };
}

/** The receipt prints `DD/MM/YYYY`. */
function signedDateOf(scuDate: string | null): string | null {
  const [, day, month, year] = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(scuDate ?? '') ?? [];
  return year ? `${year}-${month}-${day}` : null;
}

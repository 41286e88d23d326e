import { condition } from '@temporalio/workflow';
import type { CreateSaleInput, SubmissionResult } from '../../activities/types.js';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { SaleInput, SaleState, StockMovementState } from '../../src/contracts/sale.js';
import { DocumentProcess, OperatorCancelled, applicationFailure, movement } from '../document/process.js';
import { Submission } from '../document/settle.js';
import { placeOnBudget } from '../placement.js';
import { saleIdempotencyKey, stockReferenceId } from '../keys.js';

// A worker tells waiting sales when a reload serves more businesses (businessServed); the timer is for a telling that
// visibility's lag or another worker's older tenants made come to nothing.
const FIRST_RETRY_MS = 5_000;
const LONGEST_RETRY_MS = 5 * 60_000;

/**
 * One sale filed with its items checked and its stock handed over by the signing activity, so a till's answer waits
 * for no hand-over; what that activity could not do (items to register, stock to hand over) the sale does after.
 */
export class Sale extends DocumentProcess<SaleInput> {
  private readonly deductions: StockMovementState[];
  private readonly filing: CreateSaleInput;
  /** The stock-tracked items, as the last filing found them. */
  private tracked = new Set<string>();
  /** The ledger the signing activity handed the lines to; undefined: the sale hands them over. */
  private ledgerWorkflowId: string | undefined;
  /** Whether the signing activity counted the sale in its day book. */
  private dayEntered = false;

  constructor(input: SaleInput) {
    super('sale', input);
    const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
    this.deductions = input.lines.map((line, index) =>
      movement(stockReferenceId(saleKey, index, 'DEDUCT'), { ...line, action: 'DEDUCT' }),
    );
    this.filing = {
      businessId: input.businessId,
      workflowId: this.workflowId,
      request: {
        traderInvoiceNumber: input.traderInvoiceNumber,
        saleDate: input.saleDate,
        lines: input.lines,
        ...(input.branchId ? { branchId: input.branchId } : {}),
        ...(input.paymentTypeCode ? { paymentTypeCode: input.paymentTypeCode } : {}),
        ...(input.customer ? { customer: input.customer } : {}),
      },
      idempotencyKey: saleKey,
      // Every attempt of the filing sends the same callback URL: the body is fingerprinted.
      callbackAnchorMs: this.startedMs,
    };
  }

  /** Placed, signed, its stock handed over: closed, or cancelled by an operator while it could be. */
  async run(): Promise<SaleState> {
    const { record } = this;
    try {
      // Before anything is sent: calls spend the serving application's budget.
      this.route = await this.placeWhenServed();
      await this.sign();
      await this.handOverDeductions();
      record.closed();
    } catch (err) {
      if (!(err instanceof OperatorCancelled)) throw err;
      record.cancelled(err.message);
    }
    await this.handlersFinished();
    return record.state;
  }

  /** Parked unsigned, or waiting for its business: what a cancel ends. */
  get cancelOpen(): boolean {
    return this.record.isParkedFor('cancel') || this.record.state.step === 'awaiting_business';
  }

  /** Temporal's cancellation: the cancel update's effect while parked unsigned; otherwise refused and noted. */
  cancelledByTemporal(): void {
    if (this.cancelOpen) this.inbox.operatorCancel ??= 'cancellation requested through Temporal';
    else this.record.cancellationRefused(whyNotCancellable(this.record.state));
  }

  /**
   * On the budget of the application serving its business. A business none serves yet (its tenants entry not
   * reloaded on this worker) is waited for, sending nothing, until a reload serves it or the sale is cancelled.
   */
  private async placeWhenServed() {
    const { record, inbox, businessId } = this;
    for (;;) {
      try {
        const route = await placeOnBudget(businessId, true);
        record.businessServed();
        return route;
      } catch (err) {
        const failure = applicationFailure(err);
        if (failure?.type !== FAILURE_TYPES.businessNotServed) throw err;
        const { attempts } = record.awaitingBusiness(failure.message);
        const told = inbox.businessServed;
        const retryMs = Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), LONGEST_RETRY_MS);
        await condition(() => inbox.businessServed !== told || inbox.operatorCancel !== undefined, retryMs);
        if (inbox.operatorCancel !== undefined) throw new OperatorCancelled(inbox.operatorCancel);
      }
    }
  }

  private async sign(): Promise<void> {
    const { record, settings } = this;
    record.enter('creating_sale');
    const signed = await new Submission(this).settle(() => this.fileWithItemsChecked());
    record.signed(signed, settings.refundWindowMs);
    if (!this.dayEntered) await this.enterDayBook(signed);
  }

  private async handOverDeductions(): Promise<void> {
    const { record } = this;
    record.enter('reporting_stock');
    record.state.stockMovements = this.deductions.filter((m) => this.tracked.has(m.itemId));
    await this.handOverStock(record.state.stockMovements, this.ledgerWorkflowId);
  }

  /** One activity files it with its items checked; unregistered items are registered, then it files again. */
  private async fileWithItemsChecked(): Promise<SubmissionResult> {
    const { record, api, outage, taskQueue } = this;
    const checked = await api.signSale({
      ...this.filing,
      itemIds: this.itemIds(),
      handOver: { taskQueue, lines: this.stockLines(this.deductions) },
      dayBook: { taskQueue },
    });
    this.tracked = new Set(checked.items.filter((i) => i.stockTracked).map((i) => i.itemId));
    this.ledgerWorkflowId = checked.handedOver?.ledgerWorkflowId;
    this.dayEntered = checked.dayBook !== undefined;
    if (checked.submission) return checked.submission;
    await outage.serviceAnswered();
    record.enter('registering_items');
    await this.registerItems(checked.items.filter((i) => !i.registered).map((i) => i.itemId));
    record.enter('creating_sale');
    return api.createSale(this.filing);
  }
}

export const signed = (state: SaleState) => state.sale !== null && isSigned(state.sale);

function whyNotCancellable(state: SaleState): string {
  if (state.step === 'cancelled') return 'the sale is already cancelled';
  if (signed(state) || state.creditNote !== null)
    return 'the sale is signed: only a refund (a credit note) reverses it';
  if (state.parked) {
    const actions = state.parked.actions.map((a) => `\`${a}\``).join(' or ');
    return `the sale is parked for ${actions} (${state.parked.code}), which a cancel cannot resolve`;
  }
  return (
    `a document is with the service (step ${state.step}): ` +
    'once the sale is parked unsigned, the cancel update ends it'
  );
}

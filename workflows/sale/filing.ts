import { workflowInfo } from '@temporalio/workflow';
import type { CreateSaleInput, SubmissionResult } from '../../activities/types.js';
import type { SaleInput, StockMovementState } from '../../src/contracts/sale.js';
import { movement, type DocumentProcess } from '../document/process.js';
import { Submission } from '../document/settle.js';
import { saleIdempotencyKey, stockReferenceId } from '../keys.js';

/**
 * The sale filed with its items checked and its stock handed over by the signing activity, so a till's answer waits
 * for no hand-over; what that activity could not do (items to register, stock to hand over) the sale does after.
 */
export class SaleFiling {
  private readonly deductions: StockMovementState[];
  private readonly filing: CreateSaleInput;
  /** The stock-tracked items, as the last filing found them. */
  private tracked = new Set<string>();
  /** The ledger the signing activity handed the lines to; undefined: the sale hands them over. */
  private ledgerWorkflowId: string | undefined;
  /** Whether the signing activity counted the sale in its day book. */
  private dayEntered = false;

  constructor(private readonly sale: DocumentProcess<SaleInput>) {
    const input = sale.subject;
    const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
    this.deductions = input.lines.map((line, index) =>
      movement(stockReferenceId(saleKey, index, 'DEDUCT'), { ...line, action: 'DEDUCT' }),
    );
    this.filing = {
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
  }

  async sign(): Promise<void> {
    const { record, settings } = this.sale;
    record.enter('creating_sale');
    const signed = await new Submission(this.sale).settle(() => this.fileWithItemsChecked());
    record.signed(signed, settings.refundWindowMs);
    if (!this.dayEntered) await this.sale.enterDayBook(signed);
  }

  async handOverDeductions(): Promise<void> {
    const { record } = this.sale;
    record.enter('reporting_stock');
    record.state.stockMovements = this.deductions.filter((m) => this.tracked.has(m.itemId));
    await this.sale.handOverStock(record.state.stockMovements, this.ledgerWorkflowId);
  }

  /** One activity files it with its items checked; unregistered items are registered, then it files again. */
  private async fileWithItemsChecked(): Promise<SubmissionResult> {
    const { record, api, outage, taskQueue } = this.sale;
    const checked = await api.signSale({
      ...this.filing,
      itemIds: this.sale.itemIds(),
      handOver: { taskQueue, lines: this.sale.stockLines(this.deductions) },
      dayBook: { taskQueue },
    });
    this.tracked = new Set(checked.items.filter((i) => i.stockTracked).map((i) => i.itemId));
    this.ledgerWorkflowId = checked.handedOver?.ledgerWorkflowId;
    this.dayEntered = checked.dayBook !== undefined;
    if (checked.submission) return checked.submission;
    await outage.serviceAnswered();
    record.enter('registering_items');
    const unregistered = checked.items.filter((i) => !i.registered).map((i) => i.itemId);
    await this.sale.registerItems(unregistered);
    record.enter('creating_sale');
    return api.createSale(this.filing);
  }
}

/**
 * The typed API other services use to start and operate sales. Every input is validated here first (a
 * `SaleInputError` naming the field; nothing is sent), and Temporal's errors become `SaleOperationError`s
 * that say which sale and what went wrong.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { BusinessId, FiscalStatus, NeedsAttention, TraderInvoiceNumber } from '../contracts/search-attributes.js';
import { cancelUpdate, confirmStockMovementUpdate, getSaleStateQuery, itemFixedUpdate, refundUpdate, resendStockMovementUpdate, retryUpdate, SALE_WORKFLOW_TYPE, saleWorkflowId } from '../contracts/sale.js';
import type { RefundResult, SaleInput, SaleState } from '../contracts/sale.js';
import { SaleOperationError } from './errors.js';
import type { SaleOperation, SaleOperationFailure } from './errors.js';
import {
  parseCancelArgs,
  parseItemFixedArgs,
  parseRefundRequest,
  parseSaleInput,
  parseSaleReference,
  parseStockMovementArgs,
} from './schemas.js';
import { runOperation, TaskQueueClient, type StartOrFindResult, type TaskQueueClientOptions } from './start-or-find.js';
import { saleDetails, saleSummary } from './summary.js';

/** The workflow type the worker registers for a sale. */
export { SALE_WORKFLOW_TYPE };

type SaleWorkflow = (input: SaleInput) => Promise<unknown>;

/** `taskQueue`: the one the sale workflows run on (default `sales`). */
export type SalesClientOptions = TaskQueueClientOptions;

/** `runId` is the run that holds the sale; `started` is false when the sale was already running or had already finished. */
export type StartSaleResult = StartOrFindResult;

export interface OperationOptions {
  /**
   * Update id to use instead of the derived one, e.g. an operator console's request id: the same id twice
   * applies the operation once and returns the first answer.
   */
  updateId?: string;
}

export class SalesClient extends TaskQueueClient {
  /**
   * Starts the sale's workflow, or finds the one already started for the same business and trader invoice
   * number: running (conflict policy USE_EXISTING) or finished (reuse policy REJECT_DUPLICATE: a finished
   * sale is never filed again).
   */
  async startSale(input: unknown): Promise<StartSaleResult> {
    const sale = parseSaleInput(input);
    return this.startOrFind<SaleWorkflow>(SALE_WORKFLOW_TYPE, {
      workflowId: saleWorkflowId(sale.businessId, sale.traderInvoiceNumber),
      args: [sale],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: BusinessId, value: sale.businessId },
        { key: TraderInvoiceNumber, value: sale.traderInvoiceNumber },
        { key: FiscalStatus, value: 'pending' },
        { key: NeedsAttention, value: false },
      ],
      staticSummary: saleSummary(sale),
      staticDetails: saleDetails(sale),
      // The sale's workflow tasks queue fairly between businesses, as its API calls do (budgetShare).
      priority: { fairnessKey: sale.businessId },
    });
  }

  /** The whole state of the sale (step, documents, parked reason, stock movements, API calls). */
  async getState(businessId: string, traderInvoiceNumber: string): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    return this.run('getState', handle.workflowId, () => handle.query(getSaleStateQuery));
  }

  /**
   * Refunds a signed sale with a credit note; answers once the credit note is signed. The update id is
   * derived from the credit note's trader invoice number, so repeating the same refund (e.g. after a
   * timeout) returns the first answer instead of being refused as a second refund.
   */
  async refund(businessId: string, traderInvoiceNumber: string, request: unknown, options: OperationOptions = {}): Promise<RefundResult> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const refund = parseRefundRequest(request);
    const updateId = options.updateId ?? `refund:${refund.traderInvoiceNumber}`;
    return this.run('refund', handle.workflowId, () => handle.executeUpdate(refundUpdate, { args: [refund], updateId }), updateId);
  }

  /** Submits a parked sale again. */
  async retry(businessId: string, traderInvoiceNumber: string, options: OperationOptions = {}): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const updateId = options.updateId ?? (await this.situationalUpdateId('retry', handle, 'retry'));
    return this.run('retry', handle.workflowId, () => handle.executeUpdate(retryUpdate, { updateId }), updateId);
  }

  /** Gives up on a sale that is not signed; the reason is recorded in its history. A sale is cancelled once. */
  async cancel(businessId: string, traderInvoiceNumber: string, reason: string, options: OperationOptions = {}): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseCancelArgs(reason);
    const updateId = options.updateId ?? 'cancel';
    return this.run('cancel', handle.workflowId, () => handle.executeUpdate(cancelUpdate, { args: [args], updateId }), updateId);
  }

  /** An operator fixed the item in the dashboard: the sale tries to register it again. */
  async itemFixed(businessId: string, traderInvoiceNumber: string, itemId: string, options: OperationOptions = {}): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseItemFixedArgs(itemId);
    const updateId = options.updateId ?? (await this.situationalUpdateId('itemFixed', handle, `item-fixed:${args.itemId}`));
    const call = () => handle.executeUpdate(itemFixedUpdate, { args: [args], updateId });
    return this.run('itemFixed', handle.workflowId, call, updateId);
  }

  /** The operator checked that an ambiguous stock movement did reach the service: it is not sent again. */
  async confirmStockMovement(
    businessId: string,
    traderInvoiceNumber: string,
    referenceId: string,
    options: OperationOptions = {},
  ): Promise<SaleState> {
    return this.decideStockMovement('confirmStockMovement', businessId, traderInvoiceNumber, referenceId, options);
  }

  /** The operator checked that an ambiguous stock movement did NOT reach the service: send it again. */
  async resendStockMovement(
    businessId: string,
    traderInvoiceNumber: string,
    referenceId: string,
    options: OperationOptions = {},
  ): Promise<SaleState> {
    return this.decideStockMovement('resendStockMovement', businessId, traderInvoiceNumber, referenceId, options);
  }

  private async decideStockMovement(
    operation: 'confirmStockMovement' | 'resendStockMovement',
    businessId: string,
    traderInvoiceNumber: string,
    referenceId: string,
    options: OperationOptions,
  ): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseStockMovementArgs(referenceId);
    const update = operation === 'confirmStockMovement' ? confirmStockMovementUpdate : resendStockMovementUpdate;
    // A confirmation settles the movement for good; a re-sent movement can need the operator again.
    const updateId =
      options.updateId ??
      (operation === 'confirmStockMovement'
        ? `confirm-stock:${args.referenceId}`
        : await this.situationalUpdateId(operation, handle, `resend-stock:${args.referenceId}`));
    return this.run(operation, handle.workflowId, () => handle.executeUpdate(update, { args: [args], updateId }), updateId);
  }

  // -------------------------------------------------------------------------------------------------------

  private saleHandle(businessId: string, traderInvoiceNumber: string): WorkflowHandle {
    const ref = parseSaleReference(businessId, traderInvoiceNumber);
    return this.client.workflow.getHandle(saleWorkflowId(ref.businessId, ref.traderInvoiceNumber));
  }

  /**
   * Update id of an action an operator may need more than once in a sale's life (retry, item fixed, re-send):
   * a fixed id would make the second one return the first one's answer without running. The id names the
   * situation the operator acted on (the sale's latest history entry), so two clicks on the same situation
   * act once, and the same action on a later situation acts again.
   */
  private async situationalUpdateId(operation: SaleOperation, handle: WorkflowHandle, action: string): Promise<string> {
    const state = await this.run(operation, handle.workflowId, () => handle.query(getSaleStateQuery));
    const latest = state.history.at(-1);
    return `${action}:${state.history.length}@${latest?.at ?? 'start'}`;
  }

  private async run<T>(operation: SaleOperation, workflowId: string, call: () => Promise<T>, updateId?: string): Promise<T> {
    return runOperation(call, (failure, reason, cause) => {
      const message = failureMessage(operation, workflowId, failure, reason, updateId);
      return new SaleOperationError(operation, workflowId, failure, message, { cause, updateId });
    });
  }
}

/** Says which sale and what went wrong; for a timeout, how to get the update's answer after all. */
function failureMessage(operation: SaleOperation, workflowId: string, failure: SaleOperationFailure, reason: string, updateId?: string): string {
  switch (failure) {
    case 'rejected':
      return `${operation} of ${workflowId} was refused: ${reason}`;
    case 'not_found':
      return `${operation}: sale ${workflowId} not found or already finished (${reason})`;
    case 'timed_out': {
      const again = updateId === undefined ? '' : `; repeat it with updateId '${updateId}' to get its answer`;
      return `${operation} of ${workflowId} got no answer in time and may still complete${again}`;
    }
  }
}

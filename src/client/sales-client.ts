/**
 * The typed API other services use to start and operate sales. Every input is validated here first (a
 * `SaleInputError` naming the field; nothing is sent), and Temporal's errors become `SaleOperationError`s
 * that say which sale and what went wrong.
 */
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  awaitReceiptUpdate,
  cancelUpdate,
  getSaleStateQuery,
  itemFixedUpdate,
  refundUpdate,
  retryUpdate,
  saleWorkflowId,
} from '../contracts/sale.js';
import type { AwaitReceiptRequest, ReceiptAnswer, RefundResult, SaleState } from '../contracts/sale.js';
import { SaleOperationError } from './errors.js';
import type { SaleOperation, SaleOperationFailure } from './errors.js';
import { answerFromState, conflictOf, parseWait, type AwaitReceiptOptions, type SaleReceiptAnswer } from './receipt.js';
import { assertStartedWith, SALE_WORKFLOW_TYPE, saleStartOptions, type SaleWorkflow } from './sale-start.js';
import {
  parseCancelArgs,
  parseItemFixedArgs,
  parseRefundRequest,
  parseSaleInput,
  parseSaleReference,
} from './schemas.js';
import { runOperation, TaskQueueClient, type StartOrFindResult, type TaskQueueClientOptions } from './start-or-find.js';

/** The workflow type the worker registers for a sale. */
export { SALE_WORKFLOW_TYPE };
export type { AwaitReceiptOptions, SaleReceiptAnswer };

/** `taskQueue`: the one the sale workflows run on (default `sales`). */
export type SalesClientOptions = TaskQueueClientOptions;

/**
 * `runId` is the run that holds the sale; `started` is false when the sale was already running or had already
 * finished with the same input (another input is a `SaleInputConflictError`).
 */
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
   * sale is never filed again). Found with another input, it throws `SaleInputConflictError` naming the differing
   * fields: the new input is not used, and a caller must not read that as success.
   */
  async startSale(input: unknown): Promise<StartSaleResult> {
    const sale = parseSaleInput(input);
    const result = await this.startOrFind<SaleWorkflow>(SALE_WORKFLOW_TYPE, saleStartOptions(sale));
    if (!result.started) await assertStartedWith(this.client, result.workflowId, result.runId, sale);
    return result;
  }

  /**
   * Starts the sale (or finds it) and waits up to `wait` for its signed receipt, in ONE call: Temporal's
   * update-with-start of `awaitReceipt`, carrying the input so that a sale found under the same invoice number with
   * another input is refused (`SaleInputConflictError`) rather than answered with someone else's receipt. A sale
   * that has already closed is answered from its final state. `signed: false` means not signed within the wait:
   * `state` says why (in flight, parked, cancelled).
   */
  async startAndAwaitReceipt(input: unknown, options: AwaitReceiptOptions = {}): Promise<SaleReceiptAnswer> {
    const sale = parseSaleInput(input);
    const wait = parseWait(options.wait);
    const start = saleStartOptions(sale);
    const { workflowId } = start;
    const request: AwaitReceiptRequest = { ...(wait === undefined ? {} : { wait }), input: sale };
    const startWorkflowOperation = new WithStartWorkflowOperation<SaleWorkflow>(SALE_WORKFLOW_TYPE, {
      ...start,
      taskQueue: this.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const call = async () => {
      try {
        const answer = await this.client.workflow.executeUpdateWithStart(awaitReceiptUpdate, {
          args: [request],
          startWorkflowOperation,
          ...(options.updateId === undefined ? {} : { updateId: options.updateId }),
        });
        return { workflowId, ...answer };
      } catch (err) {
        // REJECT_DUPLICATE refused the start: the sale has closed, and an update cannot reach it.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw conflictOf(err, workflowId) ?? err;
        await assertStartedWith(this.client, workflowId, undefined, sale);
        const closed = await this.closedAnswer(workflowId);
        if (closed === undefined) throw err;
        return closed;
      }
    };
    return this.run('awaitReceipt', workflowId, call, options.updateId);
  }

  /**
   * Waits up to `wait` for the signed receipt of a sale already started; a sale that has already closed is answered
   * from its final state. `signed: false` means not signed within the wait: `state` says why.
   */
  async awaitReceipt(
    businessId: string,
    traderInvoiceNumber: string,
    options: AwaitReceiptOptions = {},
  ): Promise<SaleReceiptAnswer> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const wait = parseWait(options.wait);
    const { workflowId } = handle;
    const call = async () => {
      try {
        // By name: the handle's overloads take an update of no arguments or of required ones, not one optional.
        const answer = await handle.executeUpdate<ReceiptAnswer, [AwaitReceiptRequest]>(awaitReceiptUpdate.name, {
          args: [wait === undefined ? {} : { wait }],
          ...(options.updateId === undefined ? {} : { updateId: options.updateId }),
        });
        return { workflowId, ...answer };
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        const closed = await this.closedAnswer(workflowId);
        if (closed === undefined) throw err;
        return closed;
      }
    };
    return this.run('awaitReceipt', workflowId, call, options.updateId);
  }

  /** The whole state of the sale (step, documents, parked reason, stock movements). */
  async getState(businessId: string, traderInvoiceNumber: string): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    return this.run('getState', handle.workflowId, () => handle.query(getSaleStateQuery));
  }

  /**
   * Refunds a signed sale with a credit note; answers once the credit note is signed. The update id is
   * derived from the credit note's trader invoice number, so repeating the same refund (e.g. after a
   * timeout) returns the first answer instead of being refused as a second refund.
   */
  async refund(
    businessId: string,
    traderInvoiceNumber: string,
    request: unknown,
    options: OperationOptions = {},
  ): Promise<RefundResult> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const refund = parseRefundRequest(request);
    const updateId = options.updateId ?? `refund:${refund.traderInvoiceNumber}`;
    return this.run(
      'refund',
      handle.workflowId,
      () => handle.executeUpdate(refundUpdate, { args: [refund], updateId }),
      updateId,
    );
  }

  /** Submits a parked sale again. */
  async retry(businessId: string, traderInvoiceNumber: string, options: OperationOptions = {}): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const updateId = options.updateId ?? (await this.situationalUpdateId('retry', handle, 'retry'));
    return this.run('retry', handle.workflowId, () => handle.executeUpdate(retryUpdate, { updateId }), updateId);
  }

  /** Gives up on a sale that is not signed; the reason is recorded in its history. A sale is cancelled once. */
  async cancel(
    businessId: string,
    traderInvoiceNumber: string,
    reason: string,
    options: OperationOptions = {},
  ): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseCancelArgs(reason);
    const updateId = options.updateId ?? 'cancel';
    return this.run(
      'cancel',
      handle.workflowId,
      () => handle.executeUpdate(cancelUpdate, { args: [args], updateId }),
      updateId,
    );
  }

  /** An operator fixed the item in the dashboard: the sale tries to register it again. */
  async itemFixed(
    businessId: string,
    traderInvoiceNumber: string,
    itemId: string,
    options: OperationOptions = {},
  ): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseItemFixedArgs(itemId);
    const updateId =
      options.updateId ?? (await this.situationalUpdateId('itemFixed', handle, `item-fixed:${args.itemId}`));
    const call = () => handle.executeUpdate(itemFixedUpdate, { args: [args], updateId });
    return this.run('itemFixed', handle.workflowId, call, updateId);
  }

  // -------------------------------------------------------------------------------------------------------

  private saleHandle(businessId: string, traderInvoiceNumber: string): WorkflowHandle {
    const ref = parseSaleReference(businessId, traderInvoiceNumber);
    return this.client.workflow.getHandle(saleWorkflowId(ref.businessId, ref.traderInvoiceNumber));
  }

  /**
   * The receipt answer of a closed sale, from its result (no worker needed) or, for a run that did not complete,
   * its state as the query replays it; undefined when the sale is running or does not exist.
   */
  private async closedAnswer(workflowId: string): Promise<SaleReceiptAnswer | undefined> {
    const handle = this.client.workflow.getHandle(workflowId);
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
    if (status === 'RUNNING') return undefined;
    const state =
      status === 'COMPLETED' ? ((await handle.result()) as SaleState) : await handle.query(getSaleStateQuery);
    return { workflowId, ...answerFromState(state) };
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

  private async run<T>(
    operation: SaleOperation,
    workflowId: string,
    call: () => Promise<T>,
    updateId?: string,
  ): Promise<T> {
    return runOperation(call, (failure, reason, cause) => {
      const message = failureMessage(operation, workflowId, failure, reason, updateId);
      return new SaleOperationError(operation, workflowId, failure, message, { cause, updateId });
    });
  }
}

/** Says which sale and what went wrong; for a timeout, how to get the update's answer after all. */
function failureMessage(
  operation: SaleOperation,
  workflowId: string,
  failure: SaleOperationFailure,
  reason: string,
  updateId?: string,
): string {
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

// Every input is validated before anything is sent; a workflow id names its work, so a second start finds the first.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApplicationFailure,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  Client,
  isGrpcServiceError,
  ServiceError,
  type Workflow,
  type WorkflowHandle,
  type WorkflowOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { WithWorkflowArgs } from '@temporalio/common';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import { FAILURE_TYPES } from '../contracts/failures.js';
import { payloadEncryptionFromEnv } from '../codec/data-converter.js';
import type { Env } from '../config/env.js';
import { connectClient, GRPC, loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { tracingPlugins } from '../temporal/tracing.js';
import {
  awaitReceiptUpdate,
  cancelUpdate,
  getSaleStateQuery,
  itemFixedUpdate,
  retryUpdate,
  SALE_WORKFLOW_TYPE,
  saleWorkflowId,
} from '../contracts/sale.js';
import { isSigned } from '../contracts/compliance-rules.js';
import { Application, BusinessId, TraderInvoiceNumber } from '../contracts/search-attributes.js';
import { errorText, mapBounded } from '../tenants/probes.js';
import type { AwaitReceiptRequest, ReceiptAnswer, RefundResult, SaleState } from '../contracts/sale.js';
import { REFUND_WORKFLOW_TYPE, refundUpdate, type RefundInput } from '../contracts/refund.js';
import { saleInputDifferences } from '../contracts/sale-input.js';
import {
  assertStartedWith,
  conflictOf,
  readStartedInput,
  refundStartOptions,
  saleStartOptions,
  type RefundWorkflow,
  type SaleWorkflow,
} from './sale-start.js';
import {
  parseCancelArgs,
  parseItemFixedArgs,
  parseRefundRequest,
  parseSaleInput,
  parseSaleReference,
  parseWait,
  SaleOperationError,
  type OperationFailure,
  type SaleOperation,
  type WorkflowOperationError,
} from './errors.js';
import {
  DEFAULT_PARK_REASON,
  PARKED_SALES_CONCURRENCY,
  notParkedWith,
  parkedSalesQuery,
  parkedWith,
  situationalUpdateId,
  type ParkedSale,
  type ParkedSalesFilter,
  type ParkedSaleView,
  type ResumeOptions,
  type ResumeOutcome,
} from './parked-sales.js';

function openForRefund(err: unknown): boolean {
  return (
    err instanceof WorkflowUpdateFailedError &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === FAILURE_TYPES.saleOpenForRefund
  );
}

/** Memo key holding a random id per start call: how a start tells "I started it" from "it was running". */
const START_REQUEST_MEMO = 'startRequest';

export interface StartOrFindResult {
  workflowId: string;
  /** The run that holds the work: the one just started, or the existing one. */
  runId?: string;
  /** False when the workflow was already running or had already finished: nothing new was started. */
  started: boolean;
}

type StartOrFindOptions<T extends Workflow> = WithWorkflowArgs<
  T,
  Omit<WorkflowOptions, 'taskQueue' | 'workflowIdConflictPolicy' | 'memo'>
>;

export interface TaskQueueClientOptions {
  /** Of the workflow worker (default `sales`). */
  taskQueue?: string;
}

export abstract class TaskQueueClient {
  protected readonly taskQueue: string;

  constructor(
    protected readonly client: Client,
    options: TaskQueueClientOptions = {},
  ) {
    this.taskQueue = options.taskQueue ?? WORKFLOW_TASK_QUEUE;
  }

  /** Finds a running execution, or a closed one the options' reuse policy refuses to start again. */
  protected async startOrFind<T extends Workflow>(
    workflowType: string,
    options: StartOrFindOptions<T>,
  ): Promise<StartOrFindResult> {
    const { workflowId } = options;
    const startRequest = randomUUID();
    // `satisfies` checks the options; the cast only restates the caller's typed `args`, which TypeScript cannot
    // carry through WithWorkflowArgs' conditional type.
    const start = {
      ...options,
      taskQueue: this.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      memo: { [START_REQUEST_MEMO]: startRequest },
    } satisfies WorkflowOptions;
    try {
      const handle = await this.client.workflow.start<T>(workflowType, start as WorkflowStartOptions<T>);
      const runId = handle.firstExecutionRunId;
      // The server answers USE_EXISTING with the running execution's run id, and the SDK does not pass on
      // whether it started one: the memo written by the start that won tells.
      const { memo: written } = await this.client.workflow.getHandle(workflowId, runId).describe();
      return { workflowId, runId, started: written?.[START_REQUEST_MEMO] === startRequest };
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      const { runId } = await this.client.workflow.getHandle(workflowId).describe();
      return { workflowId, runId, started: false };
    }
  }
}

/**
 * How long an update the server refuses because the workflow's last task failed is asked again. Such a task is done
 * again at once when its cause passes (a continue-as-new met by signals that came meanwhile: a day book taking a
 * burst of entries), so the caller rides it out; a workflow whose tasks keep failing is refused after this.
 */
export const TASK_FAILED_RETRY_MS = 60_000;

/**
 * Temporal's failures as `error`, whose message says what to do; `reason` is the workflow's own for a refusal. An
 * update refused while the workflow's last task failed (FAILED_PRECONDITION) is asked again, for `taskFailedRetryMs`.
 */
export async function runOperation<T, Operation extends string>(
  error: new (...args: ConstructorParameters<typeof WorkflowOperationError<Operation>>) => Error,
  operation: Operation,
  workflowId: string,
  call: () => Promise<T>,
  {
    subject = '',
    updateId,
    taskFailedRetryMs = TASK_FAILED_RETRY_MS,
  }: { subject?: string; updateId?: string; taskFailedRetryMs?: number } = {},
): Promise<T> {
  const failed = (failure: OperationFailure, reason: string, cause: unknown) => {
    const again = updateId === undefined ? '' : `; repeat it with updateId '${updateId}' to get its answer`;
    const message = {
      rejected: `${operation} of ${workflowId} was refused: ${reason}`,
      not_found: `${operation}: ${subject}${workflowId} not found or already finished (${reason})`,
      timed_out: `${operation} of ${workflowId} got no answer in time and may still complete${again}`,
    }[failure];
    return new error(operation, workflowId, failure, message, { cause, updateId });
  };
  const until = Date.now() + taskFailedRetryMs;
  for (let pauseMs = 250; ; pauseMs = Math.min(2 * pauseMs, 5_000)) {
    try {
      return await call();
    } catch (err) {
      if (!(taskFailed(err) && Date.now() + pauseMs <= until)) throw operationFailure(err);
      await sleep(pauseMs);
    }
  }

  function operationFailure(err: unknown): unknown {
    if (err instanceof WorkflowUpdateFailedError) return failed('rejected', err.cause?.message ?? err.message, err);
    if (err instanceof WorkflowNotFoundError) return failed('not_found', err.message, err);
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return failed('timed_out', err.message, err);
    return err;
  }
}

/**
 * The server's refusal of an update while the workflow's last task failed: an update's call only (the SDK's own words
 * for it), so a query of a workflow whose tasks keep failing is answered at once.
 */
function taskFailed(err: unknown): boolean {
  return (
    err instanceof ServiceError &&
    /^(Workflow Update|Update-With-Start) failed$/.test(err.message) &&
    isGrpcServiceError(err.cause) &&
    err.cause.code === GRPC.FAILED_PRECONDITION
  );
}

export interface AwaitReceiptOptions {
  /** A duration ('30 seconds', '2m'); default '30 seconds', at most '10 minutes'. */
  wait?: string;
  /** The same id again returns the first answer without waiting again. */
  updateId?: string;
}

export interface SaleReceiptAnswer extends ReceiptAnswer {
  workflowId: string;
}

export type SalesClientOptions = TaskQueueClientOptions;
export type StartSaleResult = StartOrFindResult;

export interface OperationOptions {
  /** Instead of the derived one: the same id twice applies the operation once and returns the first answer. */
  updateId?: string;
}

export class SalesClient extends TaskQueueClient {
  /** Starts the sale, or finds it; found with another input, a `SaleInputConflictError` (never a success). */
  async startSale(input: unknown): Promise<StartSaleResult> {
    const sale = parseSaleInput(input);
    const result = await this.startOrFind<SaleWorkflow>(SALE_WORKFLOW_TYPE, saleStartOptions(sale));
    if (!result.started) await assertStartedWith(this.client, result.workflowId, result.runId, sale);
    return result;
  }

  /** Carries the input: a sale found with another input is refused, never answered with its receipt. */
  async startAndAwaitReceipt(input: unknown, options: AwaitReceiptOptions = {}): Promise<SaleReceiptAnswer> {
    const sale = parseSaleInput(input);
    const wait = parseWait(options.wait);
    const start = saleStartOptions(sale);
    const { workflowId } = start;
    const request: AwaitReceiptRequest = { ...(wait === undefined ? {} : { wait }), input: sale };
    // One per call: the SDK takes a with-start operation once, and a refused call is asked again.
    const startWorkflowOperation = () =>
      new WithStartWorkflowOperation<SaleWorkflow>(SALE_WORKFLOW_TYPE, {
        ...start,
        taskQueue: this.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    const call = async () => {
      try {
        const answer = await this.client.workflow.executeUpdateWithStart(awaitReceiptUpdate, {
          args: [request],
          startWorkflowOperation: startWorkflowOperation(),
          ...(options.updateId === undefined ? {} : { updateId: options.updateId }),
        });
        return { workflowId, ...answer };
      } catch (err) {
        // REJECT_DUPLICATE refused the start: the sale has closed, and an update cannot reach it.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw conflictOf(err, workflowId) ?? err;
        await assertStartedWith(this.client, workflowId, undefined, sale);
        return this.closedAnswer(workflowId, err);
      }
    };
    return this.run('awaitReceipt', workflowId, call, options.updateId);
  }

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
        return this.closedAnswer(workflowId, err);
      }
    };
    return this.run('awaitReceipt', workflowId, call, options.updateId);
  }

  async getState(businessId: string, traderInvoiceNumber: string): Promise<SaleState> {
    return this.stateOf(this.saleHandle(businessId, traderInvoiceNumber));
  }

  /**
   * The refund workflow of the sale, started or found by an update-with-start: the same request again (after a
   * timeout, or once it closed) answers with the same credit note; another request is refused.
   */
  async refund(
    businessId: string,
    traderInvoiceNumber: string,
    request: unknown,
    options: OperationOptions = {},
  ): Promise<RefundResult> {
    const ref = parseSaleReference(businessId, traderInvoiceNumber);
    const input: RefundInput = { ...ref, request: parseRefundRequest(request) };
    const start = refundStartOptions(input);
    const { workflowId } = start;
    const updateId = options.updateId ?? `refund:${input.request.traderInvoiceNumber}`;
    // One per call: the SDK takes a with-start operation once, and a refused call is asked again.
    const startWorkflowOperation = () =>
      new WithStartWorkflowOperation<RefundWorkflow>(REFUND_WORKFLOW_TYPE, {
        ...start,
        taskQueue: this.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
    const call = async () => {
      try {
        return await this.client.workflow.executeUpdateWithStart(refundUpdate, {
          args: [input.request],
          startWorkflowOperation: startWorkflowOperation(),
          updateId,
        });
      } catch (err) {
        if (openForRefund(err)) return this.refundOpenSale(workflowId, input, updateId);
        // The refund has completed: its result is the answer to the same request, and a refusal to another.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        const started = (await readStartedInput(this.client, workflowId, undefined)) as RefundInput;
        const fields = saleInputDifferences(started.request, input.request);
        if (fields.length > 0)
          throw new SaleOperationError(
            'refund',
            workflowId,
            'rejected',
            `refund of ${workflowId} was refused: the sale is already refunded with another request ` +
              `(${fields.join(', ')} differ${fields.length === 1 ? 's' : ''})`,
            { cause: err },
          );
        return (await this.client.workflow.getHandle(workflowId).result()) as RefundResult;
      }
    };
    return this.run('refund', workflowId, call, updateId);
  }

  /**
   * A sale that holds a refund window of its own (step `refund_window`) takes its refund itself. This path, with
   * `saleOpenForRefund` and its check in activities/refund.ts, can go once no running sale is in that step: each
   * closes when its window does.
   */
  private refundOpenSale(
    refundId: string,
    { businessId, traderInvoiceNumber, request }: RefundInput,
    updateId: string,
  ) {
    const { saleId: _saleId, branchId: _branchId, ...asked } = request;
    return this.client.workflow
      .getHandle(saleWorkflowId(businessId, traderInvoiceNumber))
      .executeUpdate<RefundResult, [typeof asked]>('refund', { args: [asked], updateId })
      .catch((err: unknown) => {
        throw new SaleOperationError('refund', refundId, 'rejected', `refund of ${refundId}: ${errorText(err)}`, {
          cause: err,
        });
      });
  }

  async retry(businessId: string, traderInvoiceNumber: string, options: OperationOptions = {}): Promise<SaleState> {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const updateId = options.updateId ?? situationalUpdateId('retry', await this.stateOf(handle, 'retry'));
    return this.run('retry', handle.workflowId, () => handle.executeUpdate(retryUpdate, { updateId }), updateId);
  }

  async cancel(businessId: string, traderInvoiceNumber: string, reason: string, options: OperationOptions = {}) {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseCancelArgs(reason);
    const updateId = options.updateId ?? 'cancel';
    const call = () => handle.executeUpdate(cancelUpdate, { args: [args], updateId });
    return this.run('cancel', handle.workflowId, call, updateId);
  }

  async itemFixed(businessId: string, traderInvoiceNumber: string, itemId: string, options: OperationOptions = {}) {
    const handle = this.saleHandle(businessId, traderInvoiceNumber);
    const args = parseItemFixedArgs(itemId);
    const updateId =
      options.updateId ?? situationalUpdateId(`item-fixed:${args.itemId}`, await this.stateOf(handle, 'itemFixed'));
    const call = () => handle.executeUpdate(itemFixedUpdate, { args: [args], updateId });
    return this.run('itemFixed', handle.workflowId, call, updateId);
  }

  /** Visibility lags the sales by a few seconds; a filter value no query can match is refused. */
  async findParkedSales(filter: ParkedSalesFilter): Promise<{ query: string; sales: ParkedSale[] }> {
    const query = parkedSalesQuery(this.taskQueue, filter);
    const sales: ParkedSale[] = [];
    for await (const execution of this.client.workflow.list({ query })) {
      const attributes = execution.typedSearchAttributes;
      sales.push({
        workflowId: execution.workflowId,
        businessId: attributes.get(BusinessId) ?? null,
        traderInvoiceNumber: attributes.get(TraderInvoiceNumber) ?? null,
        application: attributes.get(Application) ?? null,
      });
    }
    return { query, sales };
  }

  /** Nothing is sent: what each sale's state says now (a worker answers the query), or why it cannot be read. */
  viewParkedSales(sales: readonly ParkedSale[], options: ResumeOptions = {}): Promise<ParkedSaleView[]> {
    const reason = options.reason ?? DEFAULT_PARK_REASON;
    return mapBounded(sales, PARKED_SALES_CONCURRENCY, async (sale) => {
      try {
        const state = await this.stateOf(this.client.workflow.getHandle(sale.workflowId));
        const parked = parkedWith(state, reason);
        return {
          ...sale,
          step: state.step,
          parkedSince: parked?.since ?? null,
          message: parked?.message ?? null,
          ...(parked ? {} : { note: `would be refused: ${notParkedWith(state, reason)}` }),
        };
      } catch (err) {
        return { ...sale, step: null, parkedSince: null, message: null, note: `state not read: ${errorText(err)}` };
      }
    });
  }

  /** One retry update per sale, one outcome each, in order: a sale that moved on is refused, never retried blindly. */
  resumeParkedSales(sales: readonly ParkedSale[], options: ResumeOptions = {}): Promise<ResumeOutcome[]> {
    const reason = options.reason ?? DEFAULT_PARK_REASON;
    return mapBounded(sales, PARKED_SALES_CONCURRENCY, async ({ workflowId }): Promise<ResumeOutcome> => {
      const handle = this.client.workflow.getHandle(workflowId);
      try {
        // Visibility may be behind: a sale parked since for another reason is not the operator's to retry here.
        const state = await this.stateOf(handle);
        if (!parkedWith(state, reason)) return { workflowId, outcome: 'refused', reason: notParkedWith(state, reason) };
        // The id `npm run sales -- retry` derives too: a retry of the same park by both acts once.
        const updateId = situationalUpdateId('retry', state);
        const call = () => handle.executeUpdate(retryUpdate, { updateId });
        const after = await this.run('retry', workflowId, call, updateId);
        return { workflowId, outcome: 'resumed', step: after.step };
      } catch (err) {
        // Refused by the validator (parked no longer), or finished meanwhile: the sale is not parked, no failure.
        if (err instanceof SaleOperationError && (err.failure === 'rejected' || err.failure === 'not_found'))
          return { workflowId, outcome: 'refused', reason: err.message };
        return { workflowId, outcome: 'failed', error: errorText(err) };
      }
    });
  }

  private saleHandle(businessId: string, traderInvoiceNumber: string): WorkflowHandle {
    const ref = parseSaleReference(businessId, traderInvoiceNumber);
    return this.client.workflow.getHandle(saleWorkflowId(ref.businessId, ref.traderInvoiceNumber));
  }

  /** From its result (no worker needed) or, for a run that did not complete, its replayed state; else `err`. */
  private async closedAnswer(workflowId: string, err: unknown): Promise<SaleReceiptAnswer> {
    const handle = this.client.workflow.getHandle(workflowId);
    const status = await handle.describe().then(
      (description) => description.status.name,
      (describeErr: unknown) => {
        throw describeErr instanceof WorkflowNotFoundError ? err : describeErr;
      },
    );
    if (status === 'RUNNING') throw err;
    const state =
      status === 'COMPLETED' ? ((await handle.result()) as SaleState) : await handle.query(getSaleStateQuery);
    const signed = state.sale !== null && isSigned(state.sale);
    // The workflow says why a running sale is not signed; a run that ended unsigned will not be.
    const run = status === 'COMPLETED' ? '' : `, its run ${status.toLowerCase()}`;
    const reason = signed ? null : `the sale ended unsigned (step ${state.step}${run})`;
    return { workflowId, signed, receipt: signed ? state.sale!.receipt : null, reason, state };
  }

  private stateOf(handle: WorkflowHandle, operation: SaleOperation = 'getState'): Promise<SaleState> {
    return this.run(operation, handle.workflowId, () => handle.query(getSaleStateQuery));
  }

  private run<T>(operation: SaleOperation, workflowId: string, call: () => Promise<T>, updateId?: string): Promise<T> {
    return runOperation(SaleOperationError, operation, workflowId, call, { subject: 'sale ', updateId });
  }
}

export type ConnectedSalesClient = Awaited<ReturnType<typeof connectSalesClient>>;

/** Connected as the Temporal CLI connects (envconfig), payloads encrypted with the workers' keys. */
export async function connectSalesClient(
  options: SalesClientOptions & { env?: Env; settings?: TemporalSettings } = {},
) {
  const env = options.env ?? process.env;
  const settings = options.settings ?? loadTemporalSettings(env);
  const { dataConverter } = payloadEncryptionFromEnv(env);
  const connection = await connectClient(settings);
  const client = new Client({ connection, namespace: settings.namespace, dataConverter, plugins: tracingPlugins() });
  return { sales: new SalesClient(client, options), client, settings, close: () => connection.close() };
}

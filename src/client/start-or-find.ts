// What the typed clients share: a workflow id names the thing it does, so a second start finds the first.
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
  type Workflow,
  type WorkflowOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { WithWorkflowArgs } from '@temporalio/common';
import { WORKFLOW_TASK_QUEUE } from '../contracts/task-queues.js';
import type { OperationFailure, WorkflowOperationError } from './errors.js';

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
    const memo = { [START_REQUEST_MEMO]: startRequest };
    // `satisfies` checks the options; the cast only restates the caller's typed `args`, which TypeScript cannot
    // carry through WithWorkflowArgs' conditional type.
    const start = {
      ...options,
      taskQueue: this.taskQueue,
      workflowIdConflictPolicy: 'USE_EXISTING',
      memo,
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

/** Temporal's failures as `error`, whose message says what to do; `reason` is the workflow's own for a refusal. */
export async function runOperation<T, Operation extends string>(
  error: new (...args: ConstructorParameters<typeof WorkflowOperationError<Operation>>) => Error,
  operation: Operation,
  workflowId: string,
  call: () => Promise<T>,
  options: { subject?: string; updateId?: string } = {},
): Promise<T> {
  const { subject = '', updateId } = options;
  const failed = (failure: OperationFailure, reason: string, cause: unknown) => {
    const again = updateId === undefined ? '' : `; repeat it with updateId '${updateId}' to get its answer`;
    const message = {
      rejected: `${operation} of ${workflowId} was refused: ${reason}`,
      not_found: `${operation}: ${subject}${workflowId} not found or already finished (${reason})`,
      timed_out: `${operation} of ${workflowId} got no answer in time and may still complete${again}`,
    }[failure];
    return new error(operation, workflowId, failure, message, { cause, updateId });
  };
  try {
    return await call();
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw failed('rejected', err.cause?.message ?? err.message, err);
    if (err instanceof WorkflowNotFoundError) throw failed('not_found', err.message, err);
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) throw failed('timed_out', err.message, err);
    throw err;
  }
}

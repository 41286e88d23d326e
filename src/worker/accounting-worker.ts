import type { DataConverter } from '@temporalio/common';
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createAccountingActivities } from '../../activities/accounting.js';
import type { AccountingClient } from '../accounting/client.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { SALE_TASK_QUEUE, accountingTaskQueue } from '../contracts/task-queues.js';

export interface AccountingWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  accounting: AccountingClient;
  logger: Logger;
  /**
   * The task queue of the workflows that call the accounting service (default `sales`); the worker polls the
   * queue derived from it, `accountingTaskQueue(taskQueue)`, which is where those workflows send the calls.
   */
  taskQueue?: string;
  /** Fleet-wide activity starts per second on the accounting queue (enforced by the server). */
  activitiesPerSecond: number;
  /** Payload encryption: the same converter as the workflow workers'. */
  dataConverter?: DataConverter;
}

/**
 * The worker of every accounting API call. Its own queue with its own server-side limit keeps the accounting
 * service's load to a fleet-wide budget, whatever the number of worker processes, and never takes from the
 * compliance queue's budget.
 */
export async function createAccountingWorker(options: AccountingWorkerOptions): Promise<Worker> {
  const taskQueue = accountingTaskQueue(options.taskQueue ?? SALE_TASK_QUEUE);
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue,
    activities: createAccountingActivities({ accounting: options.accounting, logger: options.logger }),
    maxTaskQueueActivitiesPerSecond: options.activitiesPerSecond,
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    plugins: tracingPlugins(),
  });
  options.logger.info({ taskQueue, activitiesPerSecond: options.activitiesPerSecond }, 'accounting worker ready');
  return worker;
}

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection} from '@temporalio/worker';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../../activities/index.js';
import { ItemRegistry } from '../../activities/item-registry.js';
import { createReconciliationActivities } from '../../activities/reconciliation.js';
import { createAccountingWorker } from './accounting-worker.js';
import type { AccountingClient } from '../accounting/client.js';
import type { CallbackUrlMinter } from '../callbacks/tokens.js';
import type { ComplianceClient } from '../compliance/client.js';
import type { PurchaseEventSink } from '../purchases/sink.js';
import { tracingPlugins } from '../temporal/tracing.js';
import { SALE_TASK_QUEUE, complianceTaskQueue } from '../contracts/task-queues.js';

/** The workflow sources, as TypeScript under tsx or as compiled JavaScript. */
export function workflowsPath(): string {
  for (const candidate of ['../../workflows/index.ts', '../../workflows/index.js']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('workflows/index.(ts|js) not found next to src/');
}

export interface SaleWorkersOptions {
  connection: NativeConnection;
  namespace: string;
  /** Temporal client the registration activity uses to start item-registration workflows. */
  client: Client;
  compliance: ComplianceClient;
  callbackUrls?: CallbackUrlMinter;
  logger: Logger;
  /** Fleet-wide activity starts per second on the compliance queue (enforced by the server). */
  complianceActivitiesPerSecond: number;
  taskQueue?: string;
  /** A prebuilt bundle (tests build one per file); default: bundle workflowsPath() at start. */
  workflowBundle?: WorkflowBundle;
  /** Payload encryption (src/codec): every payload the workers write goes through it. */
  dataConverter?: DataConverter;
  /** Where the purchases sync delivers its events (PURCHASES_SINK); without it a delivery fails, non-retryable. */
  purchasesSink?: PurchaseEventSink;
  /** The accounting service, on its own queue: sync batches, and the reconciliation's companies and bill payments. */
  accounting: AccountingClient;
  /** Fleet-wide activity starts per second on the accounting queue (ACCOUNTING_ACTIVITIES_PER_SECOND). */
  accountingActivitiesPerSecond: number;
}

export interface SaleWorkers {
  sales: Worker;
  compliance: Worker;
  accounting: Worker;
  /** Runs all three until shutdown() or a fatal error. */
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * Three workers: the sale queue runs every workflow and the Temporal-side activities; the compliance queue runs
 * every compliance API call and the accounting queue every accounting call, so each queue's server-side rate
 * limit caps the whole fleet's load on its service whatever the number of workers.
 */
export async function createSaleWorkers(options: SaleWorkersOptions): Promise<SaleWorkers> {
  const taskQueue = options.taskQueue ?? SALE_TASK_QUEUE;
  const activities = createActivities({
    compliance: options.compliance,
    itemRegistry: new ItemRegistry(options.compliance),
    temporal: { client: options.client },
    logger: options.logger,
    ...(options.callbackUrls ? { callbackUrls: options.callbackUrls } : {}),
    ...(options.purchasesSink ? { purchasesSink: options.purchasesSink } : {}),
  });
  const common = {
    connection: options.connection,
    namespace: options.namespace,
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    // Tracing (src/temporal/tracing.ts) when configured: interceptors and the workflow span sink.
    plugins: tracingPlugins(),
  };
  const sales = await Worker.create({
    ...common,
    taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: workflowsPath() }),
    // Temporal-side work and the purchases sink: neither spends the compliance rate budget.
    activities: { requestItemRegistration: activities.requestItemRegistration, deliverPurchaseEvents: activities.deliverPurchaseEvents },
  });
  // The reconciliation's compliance requests (its link check and purchases pages); its accounting ones are the accounting worker's.
  const reconciliation = createReconciliationActivities({ compliance: options.compliance, logger: options.logger });
  const compliance = await Worker.create({
    ...common,
    taskQueue: complianceTaskQueue(taskQueue),
    activities: { ...activities, ...reconciliation },
    maxTaskQueueActivitiesPerSecond: options.complianceActivitiesPerSecond,
  });
  const accounting = await createAccountingWorker({
    connection: options.connection,
    namespace: options.namespace,
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    accounting: options.accounting,
    logger: options.logger,
    taskQueue,
    activitiesPerSecond: options.accountingActivitiesPerSecond,
  });
  const workers = [sales, compliance, accounting];
  return {
    sales,
    compliance,
    accounting,
    run: async () => {
      await Promise.all(workers.map((w) => w.run()));
    },
    shutdown: () => {
      for (const w of workers) w.shutdown();
    },
  };
}

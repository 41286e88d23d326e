/**
 * The product assembled as a worker process assembles it, for the system test stacks (test/workflows/sale-stack.ts,
 * test/purchases/stack.ts): resolveServices with neither service configured, so the embedded sandbox stands in for
 * both over HTTP as on a local stack, and WorkerProcess.start on a fresh task queue of a Temporal server. One worker
 * process runs at a time; `replaceWorker` stops it and starts another on the same queues, as a crash or a deploy
 * would. No vitest here: tools (the benchmark, the history recorder) run the stacks too.
 */
import { STOCK_LEDGER_WORKFLOW_TYPE } from '../../src/contracts/stock-ledger.js';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { NativeConnection, WorkflowBundle } from '@temporalio/worker';
import { pino } from 'pino';
import type { ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { Sandbox } from '../../sandbox/server.js';
import type { PurchasesConfig } from '../../src/config/purchases.js';
import { resolveServices } from '../../src/services/endpoints.js';
import type { StockReportingOf } from '../../src/config/stock-reporting.js';
import { WorkerProcess, type WorkerProcessOptions } from '../../src/worker/process.js';
import { singleKeyTestTenants } from './worker-settings.js';
import type { StockInSettings } from '../../src/contracts/stock-in.js';
import { testWorkerSettings } from './worker-settings.js';

/** Where a stack's workers and clients reach Temporal. */
export interface TemporalAccess {
  client: Client;
  nativeConnection: NativeConnection;
  namespace: string;
}

type ProcessOptions = WorkerProcessOptions;

export interface WorkerStackOptions {
  /** The embedded sandbox's compliance world. */
  fixture: ComplianceFixtureInput;
  /** Start of the stack's fresh task queue name (`<prefix>-<uuid>`). */
  taskQueuePrefix: string;
  /**
   * Receive result callbacks: the process starts the real callback receiver and mints URLs (default false: the
   * compliance service gets no loopback URL and the workflows poll, as against the real service).
   */
  callbacks?: boolean;
  /** The compliance queue's server-side rate limit (default 50 per second). */
  activitiesPerSecond?: number;
  /** The purchases sync (default: off, no schedules). */
  purchases?: PurchasesConfig;
  /** How each business's stock is reported (default: DEFAULT_STOCK_REPORTING). */
  stockReporting?: StockReportingOf;
  /** Each business's stock-in settings (default: none takes stock in). */
  stockIn?: (businessId: string) => StockInSettings | undefined;
  /** What each process gets of its own, opened again on every start (the purchases sink and its sync options). */
  perProcess?: () => Promise<Pick<ProcessOptions, 'purchasesSink' | 'purchasesSyncOptions'>>;
}

export interface WorkerStack {
  sandbox: Sandbox;
  client: Client;
  taskQueue: string;
  /** The worker process running now. */
  readonly worker: WorkerProcess;
  /** Stops the worker process and starts another on the same queues. */
  replaceWorker(): Promise<void>;
  /** Stops the worker process, then the services (the embedded sandbox with them). */
  close(): Promise<void>;
}

/**
 * A stock ledger (one per business and branch in the namespace) runs on the task queue of the sale that started it:
 * ended with its stack, so the next file's sales, on a queue of their own with a sandbox of their own, start their own.
 */
async function endStockLedgers(client: WorkerStack['client'], taskQueue: string): Promise<void> {
  const query = `WorkflowType = '${STOCK_LEDGER_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
  for await (const ledger of client.workflow.list({ query })) {
    await client.workflow
      .getHandle(ledger.workflowId, ledger.runId)
      .terminate('the test stack is closing')
      .catch(() => undefined);
  }
}

export async function startWorkerStack(
  temporal: TemporalAccess,
  bundle: WorkflowBundle,
  options: WorkerStackOptions,
): Promise<WorkerStack> {
  const { client } = temporal;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const embedded = await resolveServices(
    { compliance: undefined, accounting: undefined, logLevel: logger.level },
    logger,
    {
      sandboxFixture: { compliance: options.fixture },
    },
  );
  const sandbox = embedded.sandbox as Sandbox;
  // Without loopback callbacks the process gets no receiver and the workflows poll.
  const services = options.callbacks
    ? embedded
    : { ...embedded, compliance: { ...embedded.compliance, allowLoopbackCallbacks: false } };
  const taskQueue = `${options.taskQueuePrefix}-${randomUUID()}`;
  const settings = testWorkerSettings({
    worker: { complianceRequestsPerMinute: (options.activitiesPerSecond ?? 50) * 60, complianceRateHeadroom: 0 },
    ...(options.purchases ? { purchases: options.purchases } : {}),
  });
  if (options.stockReporting) settings.stockReporting = options.stockReporting;
  if (options.stockIn) settings.stockIn = options.stockIn;

  const startProcess = async () => {
    const started = await WorkerProcess.start(settings, {
      brought: { connection: temporal.nativeConnection, client, tenants: singleKeyTestTenants(services, settings) },
      logger,
      taskQueue,
      workflowBundle: bundle,
      ...(options.perProcess ? await options.perProcess() : {}),
    });
    const running = started.run();
    // Its build is current before the test starts anything: a new workflow is never routed to the old process's.
    await started.routing.catch(async (err: unknown) => {
      started.shutdown();
      await running.catch(() => undefined);
      await started.close();
      throw err;
    });
    return { worker: started, running };
  };
  const stopProcess = async ({ worker, running }: Awaited<ReturnType<typeof startProcess>>) => {
    worker.shutdown();
    await running;
    await worker.close();
  };
  let current = await startProcess();

  return {
    sandbox,
    client,
    taskQueue,
    get worker() {
      return current.worker;
    },
    async replaceWorker() {
      await stopProcess(current);
      current = await startProcess();
    },
    async close() {
      await endStockLedgers(client, taskQueue);
      await stopProcess(current);
      await services.close();
    },
  };
}

/**
 * The fast layer of workflow tests for the scheduled processes (the purchases sync, the reconciliation, the sync
 * batch), beside the sale's (logic-harness.ts): the real workflows on the time-skipping test server, with stub
 * activities that answer what each test says and record every call. Each activity is registered on the queue
 * its contract declares (`activityTaskQueue`, ACTIVITY_QUEUES), as the worker does, so a call scheduled on the
 * wrong queue is never answered and its test times out.
 *
 * Each test runs in `harness.run(stubs, body)`: the workflows it starts with `s.start` (and their continued runs)
 * have their activities answered by its stubs, and whatever of them still runs when the body ends is terminated,
 * so nothing is left to hold the test server's clock. The habits of logic-harness.ts apply: stubs answer at once,
 * and after a signal or an update a test lets the work settle in real time (`s.waitFor`) before it skips time.
 * What the workflows record through their metrics sink is kept per workflow: `s.metrics` reads the test's own.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import {
  WorkflowNotFoundError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, type Workflow } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AccountingActivities } from '../../activities/accounting.js';
import type { PurchasesActivities } from '../../activities/purchases.js';
import type { createPurchasesBookActivities } from '../../activities/purchases-book.js';
import type { ReconciliationActivities } from '../../activities/reconciliation.js';
import type { createStockInActivities } from '../../activities/stock-in.js';
import type { createFiscalDayActivities } from '../../activities/fiscal-day.js';
import { eventually } from '../helpers/eventually.js';
import { recordingMetrics, type MetricReadings, type RecordingMetrics } from '../helpers/metrics.js';
import { createTimeSkippingEnv, terminateKeepingClock } from '../helpers/time-skipping.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';
import { startQueueWorkers, useWorld } from '../helpers/time-skipping-world.js';

type StockInActivities = ReturnType<typeof createStockInActivities>;
type FiscalDayActivities = ReturnType<typeof createFiscalDayActivities>;
type PurchasesBookActivities = ReturnType<typeof createPurchasesBookActivities>;

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** The activities of the three processes, as their workflows schedule them. */
export type ProcessActivities = PurchasesActivities &
  Pick<StockInActivities, 'tellStockIn'> &
  PurchasesBookActivities &
  ReconciliationActivities &
  AccountingActivities &
  Pick<FiscalDayActivities, 'deliverFiscalDay' | 'findTillSales' | 'recoverFiscalDay'>;
export type ProcessActivityName = keyof ProcessActivities;
export type ProcessActivityInput<N extends ProcessActivityName> = Parameters<ProcessActivities[N]>[0];
export type Stubs = Partial<ProcessActivities>;

/** Every activity of the three processes (a record, so the compiler finds one missing). */
const PROCESS_ACTIVITIES: Record<ProcessActivityName, true> = {
  pullPurchases: true,
  listPurchasesPage: true,
  deliverPurchaseEvents: true,
  tellStockIn: true,
  readPurchaseBooks: true,
  writePurchaseBooks: true,
  checkReconciliationBusiness: true,
  listReconciliationPurchases: true,
  checkReconciliationCompany: true,
  listReconciliationBillPayments: true,
  processSyncBatch: true,
  listBillPaymentsPage: true,
  deliverFiscalDay: true,
  findTillSales: true,
  recoverFiscalDay: true,
};
const ACTIVITY_NAMES = Object.keys(PROCESS_ACTIVITIES) as ProcessActivityName[];

export interface ProcessCall<N extends ProcessActivityName = ProcessActivityName> {
  name: N;
  input: ProcessActivityInput<N>;
  attempt: number;
  /** Server time (skipped time included) at which this activity was scheduled: the first attempt's, for a retry. */
  scheduledAtMs: number;
  /** Server time at which this attempt ran (a retry's backoff included). */
  ranAtMs: number;
  taskQueue: string;
  workflowId: string;
  runId: string;
  priorityKey: number | undefined;
  heartbeatTimeoutMs: number | undefined;
}

export interface ProcessScenario {
  env: TestWorkflowEnvironment;
  /** The workflow queue (the file's); the services' activities run on the queues derived from it. */
  taskQueue: string;
  /** A fresh id for this test, to build workflow ids and business ids from. */
  id: string;
  /** Starts a workflow whose activities this test's stubs answer, continued runs included. */
  start<W extends Workflow>(
    workflowType: string,
    workflowId: string,
    args: Parameters<W>,
  ): Promise<WorkflowHandleWithFirstExecutionRunId<W>>;
  /** Every stub call so far, in order, retried attempts included. */
  calls: ProcessCall[];
  /** The calls of one activity, in order. */
  callsOf<N extends ProcessActivityName>(name: N): Array<ProcessCall<N>>;
  /** Inputs of the calls of one activity, in order. */
  inputs<N extends ProcessActivityName>(name: N): Array<ProcessActivityInput<N>>;
  /** Reads (in real time: the clock does not skip meanwhile) until `done` accepts the value. */
  waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs?: number): Promise<T>;
  /** What the workflows this test started recorded through their metrics sink, continued runs included. */
  metrics: MetricReadings;
  /** The execution's current details in the Temporal UI. */
  currentDetails(handle: WorkflowHandle): Promise<string>;
  /** The summaries of the activities the execution scheduled, in order, as the Temporal UI shows them. */
  activitySummaries(handle: WorkflowHandle): Promise<string[]>;
}

export interface ProcessHarness {
  readonly env: TestWorkflowEnvironment;
  run<T>(stubs: Stubs, body: (s: ProcessScenario) => Promise<T>): Promise<T>;
}

interface World {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  /** The stubs of the test that started each workflow id. */
  stubsByWorkflow: Map<string, Stubs>;
  calls: Map<string, ProcessCall[]>;
  metrics: RecordingMetrics;
  /** Rejects if a worker stops before close(). */
  running: Promise<void>;
  close(): Promise<void>;
}

/** One worker per queue, each with the activities the contract puts there; the workflow queue runs the workflows too. */
async function createWorld(): Promise<World> {
  const [env, bundle] = await Promise.all([createTimeSkippingEnv(), workflowBundle()]);
  const taskQueue = `process-logic-${randomUUID().slice(0, 8)}`;
  const stubsByWorkflow = new Map<string, Stubs>();
  const calls = new Map<string, ProcessCall[]>();
  const metrics = recordingMetrics();
  const dispatch = (name: ProcessActivityName) => async (input: never) => {
    const { info } = Context.current();
    const workflowId = info.workflowExecution?.workflowId ?? '';
    const stub = stubsByWorkflow.get(workflowId)?.[name] as ((input: never) => Promise<unknown>) | undefined;
    if (!stub)
      throw ApplicationFailure.create({
        type: 'no_stub',
        message: `no test answers ${name} for ${workflowId}`,
        nonRetryable: true,
      });
    calls.get(workflowId)?.push({
      name,
      input,
      attempt: info.attempt,
      scheduledAtMs: info.scheduledTimestampMs,
      ranAtMs: await env.currentTimeMs(),
      taskQueue: info.taskQueue,
      workflowId,
      runId: info.workflowExecution?.runId ?? '',
      priorityKey: info.priority?.priorityKey,
      heartbeatTimeoutMs: info.heartbeatTimeoutMs,
    });
    return stub(input);
  };
  // Placement (a local activity, workflows/placement.ts) answers as a single-key worker does; it is not a call of the process.
  const placeBusiness = async ({ businessId }: { businessId: string }) => ({
    application: 'default',
    fairnessKey: businessId,
  });
  const workers = await startQueueWorkers(
    env,
    taskQueue,
    bundle,
    { ...Object.fromEntries(ACTIVITY_NAMES.map((name) => [name, dispatch(name)])), placeBusiness },
    metrics,
  );
  return {
    env,
    taskQueue,
    stubsByWorkflow,
    calls,
    metrics,
    running: workers.running,
    async close() {
      await workers.close();
      await env.teardown();
    },
  };
}

export function useProcessHarness(): ProcessHarness {
  const world = useWorld(createWorld);
  return {
    get env() {
      return world.env;
    },
    run: async (stubs, body) => runScenario(await world.current(), stubs, body),
  };
}

async function runScenario<T>(world: World, stubs: Stubs, body: (s: ProcessScenario) => Promise<T>): Promise<T> {
  const { env, taskQueue } = world;
  const client = env.client;
  const calls: ProcessCall[] = [];
  const started: string[] = [];
  const scenario: ProcessScenario = {
    env,
    taskQueue,
    id: randomUUID().slice(0, 8),
    async start<W extends Workflow>(workflowType: string, workflowId: string, args: Parameters<W>) {
      world.stubsByWorkflow.set(workflowId, stubs);
      world.calls.set(workflowId, calls);
      started.push(workflowId);
      const handle = await client.workflow.start<Workflow>(workflowType, { taskQueue, workflowId, args });
      return handle as WorkflowHandleWithFirstExecutionRunId<W>;
    },
    calls,
    callsOf: <N extends ProcessActivityName>(name: N) => calls.filter((c): c is ProcessCall<N> => c.name === name),
    inputs: <N extends ProcessActivityName>(name: N) => scenario.callsOf(name).map((c) => c.input),
    metrics: world.metrics.of((workflowId) => started.includes(workflowId)),
    waitFor: (read, done, timeoutMs = 10_000) => eventually(read, done, { timeoutMs, intervalMs: 10 }),
    async currentDetails(handle) {
      return (
        (await handle.query<{ currentDetails?: string | null }>('__temporal_workflow_metadata')).currentDetails ?? ''
      );
    },
    async activitySummaries(handle) {
      const { events } = await handle.fetchHistory();
      return (events ?? []).flatMap((e) => {
        if (!e.activityTaskScheduledEventAttributes) return [];
        const summary = e.userMetadata?.summary;
        return [summary?.data ? String(defaultPayloadConverter.fromPayload(summary)) : ''];
      });
    },
  };
  try {
    return await Promise.race([body(scenario), world.running.then(() => new Promise<T>(() => {}))]);
  } finally {
    for (const workflowId of started) {
      const handle = client.workflow.getHandle(workflowId);
      const status = await handle.describe().then(
        (d) => d.status.name,
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
          throw err;
        },
      );
      if (status === 'RUNNING') await terminateKeepingClock(env, handle);
      world.stubsByWorkflow.delete(workflowId);
      world.calls.delete(workflowId);
    }
  }
}

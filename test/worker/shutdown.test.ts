/**
 * SIGTERM in the middle of sales, as Kubernetes stops a pod: the worker process (`npm run worker`, a real child
 * process) takes no new task, lets the calls in flight run for its SHUTDOWN_GRACE_TIME, fails back to the server the
 * ones the grace cut off, and exits within the grace and its margin; a second process, started at that moment,
 * finishes the sales. No attempt waits out a heartbeat timeout, and every sale is signed exactly once.
 */
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { saleWorkflowId, type SaleState } from '../../src/contracts/sale.js';
import { STOCK_LEDGER_WORKFLOW_TYPE } from '../../src/contracts/stock-ledger.js';
import { EXIT_MARGIN_MS } from '../../src/worker/process.js';
import { freePort } from '../../tools/free-port.js';
import { eventually } from '../helpers/eventually.js';
import { fastFixture } from '../helpers/fast-fixture.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';
import { sandboxWorkerEnv, spawnWorker, type WorkerChild } from '../helpers/worker-child.js';
import { saleInput } from '../workflows/sale-stack.js';

const GRACE_MS = 3_000;
const SALES = 6;
/** The first sales' filings take longer than the grace: cut off, they must be failed back and retried. */
const CUT_OFF = 3;
const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
const HEARTBEAT = proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT;

let sandbox: Sandbox;
const children: WorkerChild[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ fixture: { compliance: fastFixture() } });
});

afterAll(async () => {
  await Promise.all(children.map((child) => child.kill()));
  await sandbox?.close();
  await closeTestEnv();
});

async function workerEnv(taskQueue: string): Promise<Record<string, string>> {
  return {
    ...sandboxWorkerEnv(sandbox),
    // The sales' calls are not held to the demo's 2 a second: this test is about the stop, not the budget.
    COMPLIANCE_REQUESTS_PER_MINUTE: '3000',
    PAYLOAD_ENCRYPTION: 'off',
    WORKFLOW_TASK_QUEUE: taskQueue,
    WORKER_MAKE_CURRENT: 'true',
    SHUTDOWN_GRACE_TIME: `${GRACE_MS / 1000}s`,
    HEALTH_BIND_ADDRESS: `127.0.0.1:${await freePort()}`,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  };
}

function started(env: Record<string, string>): WorkerChild {
  const child = spawnWorker(env);
  children.push(child);
  return child;
}

/** Whether the sale's filing (signSale) runs on a worker now, or has already been answered. */
async function filingBegan(handle: WorkflowHandle): Promise<boolean> {
  const pending = (await handle.describe()).raw.pendingActivities ?? [];
  if (pending.some((a) => a.state === STARTED && a.activityType?.name === 'signSale')) return true;
  return (await filingAttempts(handle)).length > 0;
}

/** The sale's filing (signSale): its last attempt's number and worker, and how the one before it ended. */
async function filingAttempts(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'signSale')
      .map((e) => String(e.eventId)),
  );
  return events.flatMap((event) => {
    const started = event.activityTaskStartedEventAttributes;
    if (!started || !scheduled.has(String(started.scheduledEventId))) return [];
    return [{ attempt: started.attempt ?? 1, identity: started.identity ?? '', lastFailure: started.lastFailure }];
  });
}

/** How each retried activity's previous attempt ended, as its last started event records it. */
async function previousAttemptFailures(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((event) => {
    const started = event.activityTaskStartedEventAttributes;
    return started && (started.attempt ?? 1) > 1 && started.lastFailure ? [started.lastFailure] : [];
  });
}

describe('a worker process stopped by SIGTERM mid-sales', () => {
  it(
    'exits within its grace, fails back what the grace cut off, and every sale is signed once',
    { timeout: 90_000 },
    async () => {
      const { client } = await getTestEnv();
      const taskQueue = uniqueTaskQueue('shutdown');
      try {
        // Every filing takes long enough to be caught in flight, but less than the grace; the first ones far more.
        await sandbox.inspector.addFault({
          service: 'compliance',
          method: 'POST',
          path: '/v1/sales',
          kind: 'latency',
          delayMs: GRACE_MS - 1_000,
        });
        await sandbox.inspector.addFault({
          service: 'compliance',
          method: 'POST',
          path: '/v1/sales',
          kind: 'latency',
          delayMs: 2 * GRACE_MS,
          times: CUT_OFF,
        });
        const first = started(await workerEnv(taskQueue));
        await first.waitFor('this build made itself current');

        const inputs = Array.from({ length: SALES }, () => saleInput());
        const handles = await Promise.all(
          inputs.map((input) =>
            client.workflow.start('saleWorkflow', {
              taskQueue,
              workflowId: saleWorkflowId(input.businessId, input.traderInvoiceNumber),
              args: [input],
            }),
          ),
        );
        // Every sale's filing has begun on the first worker (some may be done: the signal must find the long ones).
        await eventually(
          () => Promise.all(handles.map(filingBegan)),
          (began) => began.every(Boolean),
          { timeoutMs: 20_000, what: "every sale's filing begun" },
        );

        const signalledAt = Date.now();
        first.signal('SIGTERM');
        const second = started(await workerEnv(taskQueue));
        const exit = await first.exited;
        const exitMs = exit.atMs - signalledAt;
        expect(exit.code, first.output()).toBe(0);
        expect(exitMs).toBeLessThan(GRACE_MS + EXIT_MARGIN_MS);
        // The grace was given: the filings under it finished on the first worker, the others were cut off at its end.
        expect(exitMs).toBeGreaterThanOrEqual(GRACE_MS);

        const results = (await Promise.all(handles.map((handle) => handle.result()))) as SaleState[];
        const finishedAt = Date.now();
        expect(results.map((state) => state.sale?.status)).toEqual(inputs.map(() => 'completed'));

        // Each filing ran first on the first worker: those under the grace finished there, the others on the second.
        const filings = (await Promise.all(handles.map(filingAttempts))).flat();
        const cutOff = filings.filter((f) => f.attempt > 1);
        expect(cutOff).toHaveLength(CUT_OFF);
        for (const filing of cutOff) {
          expect(filing.identity).toContain(`${second.pid}@`);
          expect(filing.lastFailure?.applicationFailureInfo?.type).toBe('WorkerShutdown');
        }
        for (const filing of filings.filter((f) => f.attempt === 1)) expect(filing.identity).toContain(`${first.pid}@`);

        const failures = (await Promise.all(handles.map(previousAttemptFailures))).flat();
        const heartbeatTimeouts = failures.filter((f) => f.timeoutFailureInfo?.timeoutType === HEARTBEAT);
        expect(heartbeatTimeouts).toEqual([]);
        const histories = await Promise.all(handles.map((handle) => handle.fetchHistory()));
        const timedOut = histories.flatMap((h) =>
          (h.events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes),
        );
        expect(timedOut).toEqual([]);
        // The cut-off attempts were reported failed by the stopping worker, and retried on the second one.
        const shutdownFailures = failures.filter((f) => f.applicationFailureInfo?.type === 'WorkerShutdown');
        expect(shutdownFailures).toHaveLength(CUT_OFF);

        for (const input of inputs) {
          const documents = await sandbox.inspector.documents({ traderInvoiceNumber: input.traderInvoiceNumber });
          expect(documents, input.traderInvoiceNumber).toHaveLength(1);
          expect(documents[0]?.sale.status).toBe('completed');
        }
        console.log(
          `[shutdown] first worker exited ${exitMs} ms after SIGTERM (grace ${GRACE_MS} ms); ` +
            `sales finished ${finishedAt - signalledAt} ms after it`,
        );

        const stopAt = Date.now();
        second.signal('SIGTERM');
        const secondExit = await second.exited;
        expect(secondExit.code, second.output()).toBe(0);
        expect(secondExit.atMs - stopAt).toBeLessThan(GRACE_MS + EXIT_MARGIN_MS);
      } finally {
        await sandbox.inspector.clearFaults();
        await endStockLedgers(taskQueue);
      }
    },
  );
});

/** The ledgers the sales started live on this test's queue: ended with it. */
async function endStockLedgers(taskQueue: string): Promise<void> {
  const { client } = await getTestEnv();
  const query = `WorkflowType = '${STOCK_LEDGER_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
  for await (const ledger of client.workflow.list({ query })) {
    await client.workflow
      .getHandle(ledger.workflowId, ledger.runId)
      .terminate('the test is over')
      .catch(() => undefined);
  }
}

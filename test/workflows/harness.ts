import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, type SearchAttributeType } from '@temporalio/common';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, expect } from 'vitest';
import { workflowsPath } from '../../src/worker.js';
import type { AnySearchAttributeKey } from '../../src/temporal/search-attributes.js';
import { forwardTo } from '../helpers/forward.js';
import { closeTestEnv, getTestEnv, testLogger } from '../helpers/temporal.js';
import { startSaleStack, type SaleStack, type SaleStackOptions } from './sale-stack.js';

export { DEMO, addItemCopy, fastFixture, invoiceNumber, saleInput, windowOfSeconds } from './sale-stack.js';

export type SaleHarness = SaleStack;

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The real workflows, bundled once per test file. */
export function saleBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: testLogger });
  return bundle;
}

/**
 * A real sale stack for one test file: the sandbox over HTTP, real workers on the shared dev server (own task
 * queues), and optionally the real callback receiver.
 */
export async function startSaleHarness(options: SaleStackOptions = {}): Promise<SaleHarness> {
  const env = await getTestEnv();
  return startSaleStack({ client: env.client, nativeConnection: env.nativeConnection, namespace: env.namespace ?? 'default' }, await saleBundle(), options);
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

export async function historyEvents(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/** Names of the signals the execution received, in order. */
export async function signalNames(handle: WorkflowHandle): Promise<string[]> {
  return (await historyEvents(handle)).flatMap((e) => (e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName ?? ''] : []));
}

/** Activity types the execution scheduled, in order. */
export async function scheduledActivities(handle: WorkflowHandle): Promise<string[]> {
  return (await historyEvents(handle)).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? ''] : []));
}

/** Results of the execution's completed activities, decoded, in order. */
export async function activityResults(handle: WorkflowHandle): Promise<unknown[]> {
  return (await historyEvents(handle)).flatMap((e) => {
    const payloads = e.activityTaskCompletedEventAttributes?.result?.payloads;
    return payloads ? payloads.map((p) => defaultPayloadConverter.fromPayload(p)) : [];
  });
}

export async function searchAttribute<T extends SearchAttributeType>(handle: WorkflowHandle, key: AnySearchAttributeKey & { type: T }) {
  return (await handle.describe()).typedSearchAttributes.get(key);
}

/** Polls until `read` gives a value `done` accepts; fails with the last value after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`not reached in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An update the workflow's validator (or handler) refused: WorkflowUpdateFailedError with an invalid_operation cause. */
export async function expectUpdateRefused(update: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await update.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('invalid_operation');
  expect((cause as ApplicationFailure).message).toMatch(message);
}

/** One sale stack for the test file, started before its tests and closed after them. */
export function useSaleHarness(options: Parameters<typeof startSaleHarness>[0] = {}): SaleHarness {
  let current: SaleHarness | undefined;
  beforeAll(async () => {
    current = await startSaleHarness(options);
  });
  afterAll(async () => {
    await current?.close();
    await closeTestEnv();
  });
  return forwardTo(() => current);
}

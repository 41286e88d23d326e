import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type SearchAttributeType } from '@temporalio/common';
import { afterAll, beforeAll } from 'vitest';
import type { AnySearchAttributeKey } from '../../src/contracts/search-attributes.js';
import { forwardTo } from '../helpers/forward.js';
import { workflowBundle } from '../helpers/workflow-bundle.js';
import { closeTestEnv, getTestEnv } from '../helpers/temporal.js';
import { startSaleStack, type SaleStack, type SaleStackOptions } from './sale-stack.js';

export { DEMO, addItemCopy, fastFixture, invoiceNumber, saleInput, windowOfSeconds } from './sale-stack.js';
export { eventually } from '../helpers/eventually.js';
export { expectUpdateRefused } from '../helpers/updates.js';

export type SaleHarness = SaleStack;

/**
 * A real sale stack for one test file: the sandbox over HTTP, real workers on the shared dev server (own task
 * queues), and optionally the real callback receiver.
 */
export async function startSaleHarness(options: SaleStackOptions = {}): Promise<SaleHarness> {
  const env = await getTestEnv();
  return startSaleStack(
    { client: env.client, nativeConnection: env.nativeConnection, namespace: env.namespace ?? 'default' },
    await workflowBundle(),
    options,
  );
}

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

export async function historyEvents(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

/** Names of the signals the execution received, in order. */
export async function signalNames(handle: WorkflowHandle): Promise<string[]> {
  return (await historyEvents(handle)).flatMap((e) =>
    e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName ?? ''] : [],
  );
}

/** Activity types the execution scheduled, in order. */
export async function scheduledActivities(handle: WorkflowHandle): Promise<string[]> {
  return (await historyEvents(handle)).flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? ''] : [],
  );
}

/** Results of the execution's completed activities, decoded, in order. */
export async function activityResults(handle: WorkflowHandle): Promise<unknown[]> {
  return (await historyEvents(handle)).flatMap((e) => {
    const payloads = e.activityTaskCompletedEventAttributes?.result?.payloads;
    return payloads ? payloads.map((p) => defaultPayloadConverter.fromPayload(p)) : [];
  });
}

export async function searchAttribute<T extends SearchAttributeType>(
  handle: WorkflowHandle,
  key: AnySearchAttributeKey & { type: T },
) {
  return (await handle.describe()).typedSearchAttributes.get(key);
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

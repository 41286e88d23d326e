import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistrationActivities } from '../../activities/registration.js';
import { ITEM_REGISTRATION_WORKFLOW_TYPE } from '../../src/contracts/item-registration.js';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { closeTestEnv, getTestEnv, uniqueTaskQueue } from '../helpers/temporal.js';
import { failureOf, runActivity, silentLogger } from './helpers.js';

/**
 * requestItemRegistration against the run's real Temporal dev server. No worker polls these task queues, so
 * the registration workflows stay as signal-with-start left them: started once, with every waiter signalled.
 */
const started: WorkflowHandle[] = [];

afterAll(async () => {
  await Promise.allSettled(started.map((handle) => handle.terminate('test finished')));
  await closeTestEnv();
});

function decode(payloads: Payload[] | null | undefined): unknown[] {
  return (payloads ?? []).map((payload) => defaultPayloadConverter.fromPayload(payload));
}

async function registrationOf(businessId: string, itemId: string) {
  const env = await getTestEnv();
  const handle = env.client.workflow.getHandle(itemRegistrationWorkflowId(businessId, itemId));
  started.push(handle);
  const description = await handle.describe();
  const { events } = await handle.fetchHistory();
  const starts = (events ?? []).flatMap((e) =>
    e.workflowExecutionStartedEventAttributes ? [e.workflowExecutionStartedEventAttributes] : [],
  );
  const signals = (events ?? []).flatMap((e) =>
    e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes] : [],
  );
  return {
    description,
    starts: starts.map((s) => ({ taskQueue: s.taskQueue?.name, args: decode(s.input?.payloads) })),
    signals: signals.map((s) => ({ name: s.signalName, args: decode(s.input?.payloads) })),
  };
}

const ids = () => ({ businessId: `biz_${randomUUID().slice(0, 8)}`, itemId: `itm_${randomUUID().slice(0, 8)}` });

describe('requestItemRegistration', () => {
  it("starts one registration per business and item, on the caller's queue, and adds every sale as a waiter", async () => {
    const env = await getTestEnv();
    const { requestItemRegistration } = createRegistrationActivities({
      temporal: { client: env.client },
      logger: silentLogger,
    });
    const { businessId, itemId } = ids();
    const taskQueue = uniqueTaskQueue('registration');

    await runActivity(requestItemRegistration, {
      businessId,
      itemId,
      branchId: 'br_1',
      fixDeadline: '1 hour',
      waiterWorkflowId: 'sale:a',
      taskQueue,
    });
    await runActivity(requestItemRegistration, {
      businessId,
      itemId,
      fixDeadline: '1 hour',
      waiterWorkflowId: 'sale:b',
      taskQueue,
    });

    const { description, starts, signals } = await registrationOf(businessId, itemId);
    expect(description).toMatchObject({
      type: ITEM_REGISTRATION_WORKFLOW_TYPE,
      taskQueue,
      status: { name: 'RUNNING' },
    });
    expect(starts).toEqual([{ taskQueue, args: [{ businessId, itemId, branchId: 'br_1', fixDeadline: '1 hour' }] }]);
    expect(signals).toEqual([
      { name: 'addWaiter', args: [{ workflowId: 'sale:a' }] },
      { name: 'addWaiter', args: [{ workflowId: 'sale:b' }] },
    ]);
  });

  it('uses WORKFLOW_TASK_QUEUE when the caller names no queue', async () => {
    const env = await getTestEnv();
    const plain = createRegistrationActivities({ temporal: { client: env.client }, logger: silentLogger });
    const second = ids();
    await runActivity(plain.requestItemRegistration, { ...second, waiterWorkflowId: 'sale:d' });
    expect((await registrationOf(second.businessId, second.itemId)).starts).toEqual([
      { taskQueue: WORKFLOW_TASK_QUEUE, args: [second] },
    ]);
  });

  it('fails for good, saying why, when the worker has no Temporal client', async () => {
    const { requestItemRegistration } = createRegistrationActivities({ logger: silentLogger });
    const failure = await failureOf(runActivity(requestItemRegistration, { ...ids(), waiterWorkflowId: 'sale:e' }));
    expect(failure).toMatchObject({ type: 'not_configured', nonRetryable: true });
    expect(failure.message).toContain('Temporal client');
  });
});

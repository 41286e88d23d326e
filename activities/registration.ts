/** Signal-with-start of an item's registration workflow: concurrent sales needing an item converge on one. */
import {
  ITEM_REGISTRATION_WORKFLOW_TYPE,
  addRegistrationWaiterSignal,
  itemRegistrationWorkflowId,
  type ItemRegistrationInput,
} from '../src/contracts/item-registration.js';
import { WORKFLOW_TASK_QUEUE } from '../src/contracts/task-queues.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';
import type { RequestItemRegistrationInput } from './types.js';

/** The item's registration workflow started if none runs, and the waiter signalled in: safe to repeat. */
export async function requestRegistration(
  deps: Pick<ActivityDeps, 'temporal' | 'logger'>,
  activity: string,
  input: RequestItemRegistrationInput,
): Promise<void> {
  const client = temporalClientOf(deps, activity);
  const { waiterWorkflowId, taskQueue, ...registration } = input;
  const workflowId = itemRegistrationWorkflowId(input.businessId, input.itemId);
  const handle = await client.workflow.signalWithStart(ITEM_REGISTRATION_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: taskQueue ?? WORKFLOW_TASK_QUEUE,
    args: [registration satisfies ItemRegistrationInput],
    signal: addRegistrationWaiterSignal,
    signalArgs: [{ workflowId: waiterWorkflowId }],
  });
  deps.logger.info(
    { workflowId, runId: handle.signaledRunId, waiter: waiterWorkflowId, itemId: input.itemId },
    'item registration requested',
  );
}

export function createRegistrationActivities(deps: Pick<ActivityDeps, 'temporal' | 'logger'>) {
  return {
    requestItemRegistration: (input: RequestItemRegistrationInput) =>
      requestRegistration(deps, 'requestItemRegistration', input),
  };
}

import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { callbackReceivedSignal } from '../contracts/sale.js';
import type { CallbackSignal } from './handler.js';

/** Signals `callbackReceivedSignal` to the workflow's current run; an unknown or closed execution is 'not_found'. */
export function temporalSignaller(client: Client): CallbackSignal {
  return async (workflowId, hint) => {
    try {
      await client.workflow.getHandle(workflowId).signal(callbackReceivedSignal, hint);
      return 'signalled';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'not_found';
      throw err;
    }
  };
}

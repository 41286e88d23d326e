import {
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  setHandler,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { saleSchemas } from '../../src/contracts/sale-input.js';
import {
  callbackReceivedSignal,
  getSaleStateQuery,
  itemFixedUpdate,
  itemRegistrationSettledSignal,
  retryUpdate,
} from '../../src/contracts/sale.js';
import { itemFixedSignal, itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { outageNewsSignal } from '../../src/contracts/outage-watch.js';
import { refuse, required } from '../update-arguments.js';
import type { DocumentProcess } from './process.js';

export function assertAllowed(condition: boolean, message: string): void {
  if (!condition) throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
}

/** A handler's wait that Temporal's cancellation does not break: that is refused, or becomes a cancel. */
export const hold = (done: () => boolean, timeoutMs?: number) =>
  CancellationScope.nonCancellable(() => condition(done, timeoutMs));

/**
 * What a sale and a refund both hear: callbacks, the outage watch, item registrations, the ledger, an operator's retry
 * or item fix. Validators refuse what the process cannot do now; handlers only record into the inbox, and it acts.
 */
export function handleProcessMessages(process: DocumentProcess): void {
  const { record, inbox } = process;
  const { state } = record;

  setHandler(getSaleStateQuery, () => state);
  setHandler(callbackReceivedSignal, () => void inbox.callbackHints++);
  setHandler(outageNewsSignal, ({ news }) => process.outage.hear(news));
  setHandler(itemRegistrationSettledSignal, (outcome) => void inbox.registrations.set(outcome.itemId, outcome));

  setHandler(
    retryUpdate,
    async () => {
      // Answered once the process has taken it; a repeat before then joins this one, after it is refused.
      const parkedThen = state.parked;
      inbox.operatorRetry = true;
      await hold(() => state.parked !== parkedThen);
      return state;
    },
    {
      validator: (...args: unknown[]) => {
        const argument = args[0];
        const empty =
          typeof argument === 'object' && !Array.isArray(argument) && Object.keys(argument ?? {}).length === 0;
        if (argument !== undefined && !empty)
          refuse(
            `retry takes no data (send nothing, or {}): got ${
              Array.isArray(argument) ? 'a list' : typeof argument === 'object' ? 'fields' : `a ${typeof argument}`
            }`,
            [{ field: '(input)', reason: 'must be empty' }],
          );
        assertAllowed(
          record.isParkedFor('retry'),
          'retry is possible only while the sale is parked for a retryable reason',
        );
      },
    },
  );
  setHandler(
    itemFixedUpdate,
    async ({ itemId }) => {
      // Passed on to the item's registration workflow, which tries again and tells every sale waiting on it.
      try {
        await getExternalWorkflowHandle(itemRegistrationWorkflowId(process.businessId, itemId)).signal(itemFixedSignal);
      } catch (err) {
        throw ApplicationFailure.nonRetryable(
          `could not reach the registration of item ${itemId}: ${String(err)}`,
          FAILURE_TYPES.invalidOperation,
        );
      }
      record.note(`operator reported item ${itemId} fixed`);
      return state;
    },
    {
      validator: (argument) => {
        const { itemId } = required('itemFixed', '{"itemId": "…"}', saleSchemas().itemFixedArgs, argument);
        assertAllowed(
          record.isParkedFor('itemFixed') && (state.parked?.itemIds ?? []).includes(itemId),
          `item ${itemId} is not waiting for a fix`,
        );
      },
    },
  );
}

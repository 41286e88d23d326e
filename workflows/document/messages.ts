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

/** A request other than the one the process was started with: the differing fields are named, never their values. */
export function refuseOtherRequest(type: string, refusal: string, fields: string[]): void {
  if (fields.length === 0) return;
  throw ApplicationFailure.create({
    type,
    message: `${refusal}: ${fields.join(', ')} differ${fields.length === 1 ? 's' : ''}`,
    nonRetryable: true,
    details: [{ fields }],
  });
}

/**
 * What a sale and a refund both hear: callbacks, the outage watch, item registrations, the ledger, an operator's retry
 * or item fix. Validators refuse what the process cannot do now; handlers only record into the inbox, and it acts.
 */
export function handleProcessMessages(process: DocumentProcess): void {
  const { record, inbox } = process;
  const { state } = record;

  setHandler(getSaleStateQuery, () => state);
  setHandler(callbackReceivedSignal, () => void inbox.callbackHints++);
  setHandler(outageNewsSignal, ({ news }) => void (process.outage.news = news));
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
        const kind = Array.isArray(argument)
          ? 'a list'
          : typeof argument === 'object'
            ? 'fields'
            : `a ${typeof argument}`;
        if (argument !== undefined && (kind !== 'fields' || Object.keys(argument ?? {}).length > 0))
          refuse(`retry takes no data (send nothing, or {}): got ${kind}`, [
            { field: '(input)', reason: 'must be empty' },
          ]);
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

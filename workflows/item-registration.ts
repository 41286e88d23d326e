import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from './activity-options.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { placeOnBudget } from './placement.js';
import { Attention } from './attention.js';
import { parseDuration } from '../src/contracts/duration.js';
import {
  addRegistrationWaiterSignal,
  getItemRegistrationStateQuery,
  itemFixedSignal,
  type ItemRegistrationInput,
  type ItemRegistrationOutcome,
  type ItemRegistrationState,
} from '../src/contracts/item-registration.js';
import { itemRegistrationSettledSignal } from '../src/contracts/sale.js';

/** One per business and item: sales signal themselves in as waiters, converge on it and each hear the outcome. */
export async function itemRegistrationWorkflow(input: ItemRegistrationInput): Promise<ItemRegistrationState> {
  const person = new Attention();
  const attention = (needed: boolean) => person.write(needed, needed ? 'item_needs_fixing' : '');
  const state: ItemRegistrationState = {
    itemId: input.itemId,
    status: 'registering',
    needs: null,
    waiters: [],
    attempts: 0,
  };
  let latest: ItemRegistrationOutcome | undefined;
  let fixed = false;

  const notify = async (waiter: string, outcome: ItemRegistrationOutcome) => {
    try {
      await getExternalWorkflowHandle(waiter).signal(itemRegistrationSettledSignal, outcome);
    } catch (err) {
      // A waiter that has closed no longer needs the answer.
      log.warn('could not notify a waiting sale', { waiter, error: String(err) });
    }
  };
  const publish = async (outcome: ItemRegistrationOutcome) => {
    latest = outcome;
    await Promise.all(state.waiters.map((waiter) => notify(waiter, outcome)));
  };

  setHandler(getItemRegistrationStateQuery, () => state);
  setHandler(itemFixedSignal, () => void (fixed = true));
  setHandler(addRegistrationWaiterSignal, async ({ workflowId }) => {
    if (state.waiters.includes(workflowId)) return;
    state.waiters.push(workflowId);
    if (latest) await notify(workflowId, latest);
  });

  const route = await placeOnBudget(input.businessId, false);
  const { registerItem } = proxyActivities<ActivitiesOn<'compliance'>>({
    taskQueue: route.complianceQueue,
    startToCloseTimeout: '60 seconds',
    // The call heartbeats while it waits: one lost with a killed worker is sent again in seconds, not a minute.
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
    // No overall limit: an outage is waited out in the activity's retries (a refusal is not retried).
    retry: API_RETRY,
    // Signing sales comes first when the rate budget is contended.
    priority: { priorityKey: PRIORITY.bookkeeping, fairnessKey: route.fairnessKey },
  });
  const deadline = Date.now() + (parseDuration(input.fixDeadline ?? '7 days') ?? parseDuration('7 days')!);
  for (;;) {
    state.status = 'registering';
    state.attempts = (state.attempts ?? 0) + 1;
    const result = await registerItem.executeWithOptions({ summary: `item ${input.itemId}` }, [
      { businessId: input.businessId, itemId: input.itemId, ...(input.branchId ? { branchId: input.branchId } : {}) },
    ]);
    if (result.outcome === 'registered') {
      state.status = 'registered';
      state.needs = null;
      attention(false);
      await publish({ itemId: input.itemId, status: 'registered' });
      break;
    }
    state.status = 'needs_fixing';
    state.needs = result.needs;
    attention(true);
    await publish({ itemId: input.itemId, status: 'needs_fixing', needs: result.needs });
    fixed = false;
    const remaining = deadline - Date.now();
    if (remaining <= 0 || !(await condition(() => fixed, remaining))) {
      state.status = 'failed';
      await publish({ itemId: input.itemId, status: 'failed', reason: 'item was not fixed before the deadline' });
      break;
    }
  }
  // Waiters still being notified by the signal handler get their answer before the run closes.
  await condition(allHandlersFinished);
  log.info('item registration settled', {
    itemId: input.itemId,
    status: state.status,
    workflowId: workflowInfo().workflowId,
  });
  return state;
}

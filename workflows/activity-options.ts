import type { Priority } from '@temporalio/common';
import { proxyActivities, workflowInfo, type ActivityInterfaceFor, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { ACTIVITY_QUEUES, activityTaskQueue, isActivityName } from '../src/contracts/task-queues.js';

/**
 * Activity options without a queue: each activity's queue is the contract's (ACTIVITY_QUEUES), never the caller's;
 * but the compliance calls of a rate window with a queue of its own go to that queue (workflows/placement.ts).
 */
export type RoutedActivityOptions = Omit<ActivityOptions, 'taskQueue'> & { complianceQueue?: string | undefined };

/** Every API call: transient faults retried with backoff; a 429 sets its own delay from `Retry-After`. */
export const API_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/** Priority keys on the rate-limited compliance queue: when the budget is contended, lower goes first. */
export const PRIORITY = {
  /** Sales and credit notes: a customer is waiting at the till. */
  signing: 1,
  /** Reading an outcome the authority has not given yet. */
  polling: 2,
  /** Catalogue and stock calls. */
  bookkeeping: 3,
  /** The scheduled supplier-invoice sync: catching up can wait for any till. */
  purchases: 4,
  /** Reports nobody waits for (the scheduled reconciliation): only what the others leave of the budget. */
  background: 5,
} as const;

/**
 * The one-line summary an operator sees next to an activity in the Temporal UI, from the identifiers its input
 * carries (documents, invoice numbers, items, stock actions); never customer data.
 */
export function activitySummary(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const i = input as Record<string, unknown>;
  const request = typeof i.request === 'object' && i.request !== null ? (i.request as Record<string, unknown>) : {};
  if (typeof request.traderInvoiceNumber === 'string') return `sale ${request.traderInvoiceNumber}`;
  if (typeof i.saleId === 'string' && typeof i.traderInvoiceNumber === 'string')
    return `credit note ${i.traderInvoiceNumber} reversing ${i.saleId}`;
  if (typeof i.action === 'string' && typeof i.itemId === 'string')
    return `${i.action} ${String(i.quantity)} × ${i.itemId}`;
  if (typeof i.documentId === 'string') return `document ${i.documentId}`;
  if (Array.isArray(i.itemIds)) return `items ${i.itemIds.join(', ')}`;
  if (typeof i.itemId === 'string') return `item ${i.itemId}`;
  return undefined;
}

/**
 * Activity proxies that schedule each activity on the task queue the contract declares for it, relative to this
 * workflow's own queue, so no workflow names a queue.
 */
export function routedActivities(routed: RoutedActivityOptions): ActivityInterfaceFor<Activities> {
  const { complianceQueue, ...options } = routed;
  const proxies = new Map<string, ActivityInterfaceFor<Activities>>();
  return new Proxy({} as ActivityInterfaceFor<Activities>, {
    get(_target, name) {
      if (typeof name !== 'string' || !isActivityName(name)) return undefined;
      const taskQueue =
        complianceQueue !== undefined && ACTIVITY_QUEUES[name] === 'compliance'
          ? complianceQueue
          : activityTaskQueue(name, workflowInfo().taskQueue);
      let proxy = proxies.get(taskQueue);
      if (proxy === undefined) {
        proxy = proxyActivities<Activities>({ ...options, taskQueue });
        proxies.set(taskQueue, proxy);
      }
      return proxy[name];
    },
  });
}

/** Routed activity proxies whose every call carries its summary. */
export function summarisedActivities(options: RoutedActivityOptions): ActivityInterfaceFor<Activities> {
  const proxy = routedActivities(options);
  return new Proxy(proxy, {
    get(target, name) {
      const activity = target[name as keyof Activities];
      if (typeof name !== 'string' || activity === undefined) return activity;
      return (input: unknown) => {
        const summary = activitySummary(input);
        return activity.executeWithOptions(summary === undefined ? {} : { summary }, [input as never]);
      };
    },
  });
}

/**
 * Where a call stands on the compliance budget: its priority key (tills first), and its fairness key, which the
 * compliance queue holds to its own rate: the application whose window it spends (workflows/placement.ts), or for
 * one application the business, so one business flooding the queue cannot starve another of the same priority.
 */
export function budgetShare(priorityKey: number, fairnessKey: string): Priority {
  return { priorityKey, fairnessKey };
}

/**
 * Activities that call a service, retried with backoff for as long as `scheduleToCloseTimeout`; compliance calls on
 * `complianceQueue` when their window has one.
 */
export function apiActivities(priority: Priority, scheduleToCloseTimeout: string | number, complianceQueue?: string) {
  return summarisedActivities({
    startToCloseTimeout: '60 seconds',
    scheduleToCloseTimeout,
    retry: API_RETRY,
    priority,
    ...(complianceQueue === undefined ? {} : { complianceQueue }),
  });
}

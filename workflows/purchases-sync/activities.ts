import { proxyActivities } from '@temporalio/workflow';
import { PURCHASE_DELIVERY_FAILURES } from '../../src/contracts/purchases-sync.js';
import { API_RETRY, PRIORITY, type ActivitiesOn } from '../activity-options.js';
import type { CallRoute } from '../placement.js';
import type { PurchasesSyncSettings } from './settings.js';

/** The activity proxies of one sync, by where they run and how they are retried. */
export function purchasesSyncActivities({ complianceQueue, fairnessKey }: CallRoute, settings: PurchasesSyncSettings) {
  return {
    /** Every call of the sync is one activity on the rate-limited compliance queue, behind any till's sale. */
    compliance: proxyActivities<ActivitiesOn<'compliance'>>({
      taskQueue: complianceQueue,
      startToCloseTimeout: '60 seconds',
      scheduleToCloseTimeout: '30 minutes',
      retry: API_RETRY,
      priority: { priorityKey: PRIORITY.purchases, fairnessKey },
    }),
    /** Delivery spends none of the compliance budget: it runs on the workflow queue. */
    sink: proxyActivities<ActivitiesOn<'workflow'>>({
      startToCloseTimeout: '10 minutes',
      // Above the sink's 10 s per event; heartbeats (throttled to 0.8 × this) carry the resume point.
      heartbeatTimeout: '15 seconds',
      retry: {
        initialInterval: settings.deliveryRetryInterval,
        backoffCoefficient: 2,
        maximumInterval: '30 seconds',
        maximumAttempts: settings.deliveryAttempts,
        nonRetryableErrorTypes: [PURCHASE_DELIVERY_FAILURES.refused, PURCHASE_DELIVERY_FAILURES.notConfigured],
      },
    }),
  };
}

export type PurchasesSyncActivities = ReturnType<typeof purchasesSyncActivities>;

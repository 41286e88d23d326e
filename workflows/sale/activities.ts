import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { API_RETRY, PRIORITY, apiActivities, budgetShare, summarisedActivities } from '../activity-options.js';
import type { CallRoute } from '../placement.js';

/**
 * The activity proxies of one sale, by how they are retried and where they stand on the budget: the route its
 * placement gave (workflows/placement.ts), or the business on the shared queue for a sale started before placement.
 */
export function saleActivities({ fairnessKey, complianceQueue }: CallRoute) {
  return {
    signing: apiActivities(budgetShare(PRIORITY.signing, fairnessKey), '2 hours', complianceQueue),
    bookkeeping: apiActivities(budgetShare(PRIORITY.bookkeeping, fairnessKey), '2 hours', complianceQueue),
    /**
     * Stock movements, one attempt per activity: the service does not de-duplicate them, and an attempt whose
     * worker died may have sent one. The process retries only what provably was not taken (stock.ts).
     */
    stockWrites: summarisedActivities({
      startToCloseTimeout: '60 seconds',
      retry: { maximumAttempts: 1 },
      priority: budgetShare(PRIORITY.bookkeeping, fairnessKey),
      complianceQueue,
    }),
    /**
     * Since 0.8 the hand-over of stock lines to the branch's ledger: a signal-with-start, one history event as a
     * local activity; the ledger takes a line once, so an attempt made again after a lost answer is harmless.
     */
    ledger: proxyLocalActivities<Pick<Activities, 'handOverStock'>>({
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
    }),
    /** Talks to Temporal, not to a service (its queue is the workflow queue). */
    coordination: summarisedActivities({ startToCloseTimeout: '30 seconds', retry: API_RETRY }),
    /** Polling through activity retries: the history gains no events per poll. */
    poller: (timeoutMs: number) =>
      summarisedActivities({
        startToCloseTimeout: '60 seconds',
        scheduleToCloseTimeout: Math.max(1000, timeoutMs),
        retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
        priority: budgetShare(PRIORITY.polling, fairnessKey),
        complianceQueue,
      }),
  };
}

export type SaleActivities = ReturnType<typeof saleActivities>;

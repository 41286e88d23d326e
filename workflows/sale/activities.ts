import { API_RETRY, PRIORITY, budgetShare, complianceActivities, summarisedActivities } from '../activity-options.js';
import { complianceTaskQueue } from '../definitions.js';

/** The activity proxies of one sale; the compliance queue is derived from the sale's own queue. */
export function saleActivities(saleTaskQueue: string, businessId: string) {
  return {
    signing: complianceActivities(saleTaskQueue, budgetShare(PRIORITY.signing, businessId), '2 hours'),
    bookkeeping: complianceActivities(saleTaskQueue, budgetShare(PRIORITY.bookkeeping, businessId), '2 hours'),
    /**
     * Stock movements, one attempt per activity: the service does not de-duplicate them, and an attempt whose
     * worker died may have sent one. The process retries only what provably was not taken (stock.ts).
     */
    stockWrites: summarisedActivities({
      taskQueue: complianceTaskQueue(saleTaskQueue),
      startToCloseTimeout: '60 seconds',
      retry: { maximumAttempts: 1 },
      priority: budgetShare(PRIORITY.bookkeeping, businessId),
    }),
    /** Runs on the sale's own queue: it talks to Temporal, not to the compliance service. */
    coordination: summarisedActivities({ startToCloseTimeout: '30 seconds', retry: API_RETRY }),
    /** Polling through activity retries: the history gains no events per poll. */
    poller: (timeoutMs: number) =>
      summarisedActivities({
        taskQueue: complianceTaskQueue(saleTaskQueue),
        startToCloseTimeout: '60 seconds',
        scheduleToCloseTimeout: Math.max(1000, timeoutMs),
        retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
        priority: budgetShare(PRIORITY.polling, businessId),
      }),
  };
}

export type SaleActivities = ReturnType<typeof saleActivities>;

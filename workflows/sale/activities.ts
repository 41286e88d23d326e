import { API_RETRY, PRIORITY, apiActivities, budgetShare, summarisedActivities } from '../activity-options.js';

/** The activity proxies of one sale, by how they are retried and where they stand on the business's budget. */
export function saleActivities(businessId: string) {
  return {
    signing: apiActivities(budgetShare(PRIORITY.signing, businessId), '2 hours'),
    bookkeeping: apiActivities(budgetShare(PRIORITY.bookkeeping, businessId), '2 hours'),
    /**
     * Stock movements, one attempt per activity: the service does not de-duplicate them, and an attempt whose
     * worker died may have sent one. The process retries only what provably was not taken (stock.ts).
     */
    stockWrites: summarisedActivities({
      startToCloseTimeout: '60 seconds',
      retry: { maximumAttempts: 1 },
      priority: budgetShare(PRIORITY.bookkeeping, businessId),
    }),
    /** Talks to Temporal, not to a service (its queue is the workflow queue). */
    coordination: summarisedActivities({ startToCloseTimeout: '30 seconds', retry: API_RETRY }),
    /** Polling through activity retries: the history gains no events per poll. */
    poller: (timeoutMs: number) =>
      summarisedActivities({
        startToCloseTimeout: '60 seconds',
        scheduleToCloseTimeout: Math.max(1000, timeoutMs),
        retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
        priority: budgetShare(PRIORITY.polling, businessId),
      }),
  };
}

export type SaleActivities = ReturnType<typeof saleActivities>;

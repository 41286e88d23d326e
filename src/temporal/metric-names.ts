/**
 * The worker's own metrics, named once: workflow code, activities and the callback receiver emit them through
 * the Temporal runtime's meter, so they appear on the same Prometheus endpoint as the SDK's (prefix `temporal_`
 * added by the runtime). Plain constants: workflow code imports this file.
 */
export const METRICS = {
  salesSigned: 'etims_sales_signed',
  salesParked: 'etims_sales_parked',
  salesFailed: 'etims_sales_failed',
  salesCancelled: 'etims_sales_cancelled',
  creditNotesSigned: 'etims_credit_notes_signed',
  stockMovementsNeedingOperator: 'etims_stock_movements_needing_operator',
  /** Every compliance API call made by an activity attempt, by outcome (`ok` or the failure type); the SDK adds `activityType`. */
  apiCalls: 'etims_api_calls',
  /** Answers 429 from the compliance service. */
  apiRateLimited: 'etims_api_rate_limited',
  /** Gauge: the compliance queue's rate budget, activity starts per second fleet-wide (`task_queue`). */
  complianceRateBudget: 'etims_compliance_rate_budget',
  /** Every HTTP request this worker's compliance client sends, counted as it goes out, by `operation`. */
  complianceRequests: 'etims_compliance_requests',
  /** Gauge: the last `X-RateLimit-Remaining` the compliance service answered with. */
  complianceRateLimitRemaining: 'etims_compliance_rate_limit_remaining',
  /** Result callbacks answered by the receiver, by verdict (accepted, duplicate, throttled, ignored, or the error code). */
  callbacks: 'etims_callbacks',
} as const;

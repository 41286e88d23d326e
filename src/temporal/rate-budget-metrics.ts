/**
 * "Rate budget in use" on the worker's Prometheus endpoint: the compliance queue's budget as a gauge, and
 * the compliance requests this worker sends as a counter, so a dashboard divides the fleet's request rate by
 * the budget (deploy/grafana/etims-worker.json); plus the service's own view, the last
 * `X-RateLimit-Remaining` it answered with.
 */
import { parseRateLimit } from '../http/rate-limit.js';
import type { HttpObserver } from '../http/transport.js';
import type { MetricsRecorder } from '../metrics/recorder.js';

/** Sets the budget gauge once and returns the observer that counts the compliance client's traffic. */
export function complianceRateBudgetMetrics(metrics: MetricsRecorder, budget: { activitiesPerSecond: number }): HttpObserver {
  metrics.set('etims_compliance_rate_budget_per_second', budget.activitiesPerSecond, {});
  return {
    requestSent: (request) => metrics.count('etims_compliance_requests', { operation: request.operation }),
    responseReceived: (response) => {
      const left = parseRateLimit(response.headers).remaining;
      if (left !== undefined) metrics.set('etims_compliance_rate_limit_remaining', left, {});
    },
  };
}

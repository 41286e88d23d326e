/**
 * "Rate budget in use" on the worker's Prometheus endpoint: the compliance queue's budget as a gauge, and
 * the compliance requests this worker sends as a counter, so a dashboard divides the fleet's request rate by
 * the budget (deploy/grafana/etims-worker.json); plus the service's own view, the last
 * `X-RateLimit-Remaining` it answered with.
 */
import type { MetricMeter } from '@temporalio/common';
import { parseRateLimit } from '../http/rate-limit.js';
import type { HttpObserver } from '../http/transport.js';
import { METRICS } from './metric-names.js';

/** Sets the budget gauge once and returns the observer that counts the compliance client's traffic. */
export function complianceRateBudgetMetrics(meter: MetricMeter, budget: { taskQueue: string; activitiesPerSecond: number }): HttpObserver {
  meter
    .createGauge(METRICS.complianceRateBudget, 'float', '1/s', 'compliance queue activity starts allowed per second, fleet-wide')
    .set(budget.activitiesPerSecond, { task_queue: budget.taskQueue });
  const requests = meter.createCounter(METRICS.complianceRequests, undefined, 'compliance API requests sent by this worker');
  const remaining = meter.createGauge(METRICS.complianceRateLimitRemaining, 'int', undefined, 'last X-RateLimit-Remaining of the compliance service');
  return {
    requestSent: (request) => requests.add(1, { operation: request.operation }),
    responseReceived: (response) => {
      const left = parseRateLimit(response.headers).remaining;
      if (left !== undefined) remaining.set(left);
    },
  };
}

// A dashboard divides the fleet's request rate by the budget (deploy/grafana/etims-worker.json).
import { parseRateLimit } from '../http/rate-limit.js';
import type { HttpObserver } from '../http/transport.js';
import type { MetricsRecorder } from '../metrics/recorder.js';

export function complianceRateBudgetMetrics(
  metrics: MetricsRecorder,
  budget: { activitiesPerSecond: number },
): HttpObserver {
  metrics.set('etims_compliance_rate_budget_per_second', budget.activitiesPerSecond, {});
  return complianceTrafficMetrics(metrics);
}

export function complianceTrafficMetrics(metrics: MetricsRecorder): HttpObserver {
  return {
    requestSent: (request) => metrics.count('etims_compliance_requests', { operation: request.operation }),
    responseReceived: (response) => {
      const left = parseRateLimit(response.headers).remaining;
      if (left !== undefined) metrics.set('etims_compliance_rate_limit_remaining', left, {});
    },
  };
}

export function bothObservers(...observers: ReadonlyArray<HttpObserver | undefined>): HttpObserver {
  const present = observers.filter((o): o is HttpObserver => o !== undefined);
  return {
    requestSent: (request) => present.forEach((o) => o.requestSent?.(request)),
    responseReceived: (response, request) => present.forEach((o) => o.responseReceived?.(response, request)),
  };
}

/** Its budget gauge is set where the queue's budgets are. */
export function applicationRateMetrics(metrics: MetricsRecorder, application: string): HttpObserver {
  return {
    requestSent: () => metrics.count('etims_application_requests', { application }),
    responseReceived: (response) => {
      if (response.status === 429) metrics.count('etims_application_rate_limited', { application });
      const left = parseRateLimit(response.headers).remaining;
      if (left !== undefined) metrics.set('etims_application_rate_limit_remaining', left, { application });
    },
  };
}

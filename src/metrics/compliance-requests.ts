import { parseRateLimit } from '../http/rate-limit.js';
import type { HttpObserver } from '../http/transport.js';
import type { MetricsRecorder } from './recorder.js';

/** An application's requests, counted under its name as well as the fleet's; its budget gauge is set elsewhere. */
export function complianceRequestMetrics(metrics: MetricsRecorder, application: string): HttpObserver {
  return {
    requestSent: (request) => {
      metrics.count('etims_compliance_requests', { operation: request.operation });
      metrics.count('etims_application_requests', { application });
    },
    responseReceived: (response) => {
      if (response.status === 429) metrics.count('etims_application_rate_limited', { application });
      const left = parseRateLimit(response.headers).remaining;
      if (left === undefined) return;
      metrics.set('etims_compliance_rate_limit_remaining', left, {});
      metrics.set('etims_application_rate_limit_remaining', left, { application });
    },
  };
}

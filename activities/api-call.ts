/**
 * How every compliance activity makes its one API call: inside the activity's context (so Temporal's
 * cancellation aborts the HTTP request) and with every error turned into the failure the workflow expects.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure, type ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../src/logger.js';
import { ACTIVITY_QUEUES, isActivityName } from '../src/contracts/task-queues.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { toActivityFailure } from './failures.js';

/**
 * How long this attempt waited in its task queue before a worker started it (server's scheduling time against this
 * machine's clock: NTP-synchronised clocks are within milliseconds, far under what it is compared with).
 */
export function queuedMs(): number {
  return Math.max(0, Date.now() - Context.current().info.currentAttemptScheduledTimestampMs);
}

export interface ApiCallSpec<T> {
  /** Whether repeating the call cannot duplicate its effect; see FailureOptions.idempotent. */
  idempotent: boolean;
  /** Turns an error that is a business outcome (a 422 carrying a document) into a result. */
  recover?: (err: unknown) => T | undefined;
  logger: Logger;
  /** The worker's metrics (absent: nothing recorded). */
  metrics?: MetricsRecorder | undefined;
}

export async function callApi<T>(spec: ApiCallSpec<T>, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  const service = serviceOf(context.info.activityType);
  const counted = (outcome: string) => spec.metrics?.count('etims_api_calls', { service, outcome });
  try {
    const result = await call(context.cancellationSignal);
    counted('ok');
    return result;
  } catch (err) {
    // Cancelled (or timed out) by Temporal: report the cancellation itself, not the aborted request.
    const reason: unknown = context.cancellationSignal.reason;
    if (context.cancellationSignal.aborted && reason instanceof CancelledFailure) throw reason;
    const recovered = spec.recover?.(err);
    if (recovered !== undefined) {
      counted('answered_with_outcome');
      return recovered;
    }
    const failure = toActivityFailure(err, context.info.attempt, { idempotent: spec.idempotent });
    counted(failure.type ?? 'error');
    if (failure.type === FAILURE_TYPES.rateLimited) spec.metrics?.count('etims_api_rate_limited', { service });
    logFailure(spec.logger, context, failure);
    throw failure;
  }
}

/** The service an activity calls, from its queue in the contract (`other` for one that is not listed). */
function serviceOf(activityType: string): string {
  return isActivityName(activityType) ? ACTIVITY_QUEUES[activityType] : 'other';
}

function logFailure(logger: Logger, context: Context, failure: ApplicationFailure): void {
  const fields = {
    activity: context.info.activityType,
    workflowId: context.info.workflowExecution?.workflowId,
    attempt: context.info.attempt,
    failureType: failure.type,
    nonRetryable: failure.nonRetryable === true,
  };
  // Retryable failures are routine (429s, a flaky network); the rest need a decision by the workflow.
  if (failure.nonRetryable) logger.warn(fields, failure.message);
  else logger.debug(fields, failure.message);
}

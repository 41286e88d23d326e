/**
 * How every compliance activity makes its one API call: inside the activity's context (so Temporal's
 * cancellation aborts the HTTP request) and with every error turned into the failure the workflow expects.
 */
import { Context } from '@temporalio/activity';
import { CancelledFailure, type ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../src/logger.js';
import { METRICS } from '../src/temporal/metric-names.js';
import { FAILURE_TYPES, toActivityFailure } from './failures.js';

/** The attempt number of the running activity (1 on the first try): each attempt made one API call. */
export function currentAttempt(): number {
  return Context.current().info.attempt;
}

export interface ApiCallSpec<T> {
  /** Whether repeating the call cannot duplicate its effect; see FailureOptions.idempotent. */
  idempotent: boolean;
  /** Turns an error that is a business outcome (a 422 carrying a document) into a result. */
  recover?: (err: unknown) => T | undefined;
  logger: Logger;
}

export async function callApi<T>(spec: ApiCallSpec<T>, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  const calls = context.metricMeter.createCounter(METRICS.apiCalls);
  try {
    const result = await call(context.cancellationSignal);
    calls.add(1, { outcome: 'ok' });
    return result;
  } catch (err) {
    // Cancelled (or timed out) by Temporal: report the cancellation itself, not the aborted request.
    const reason: unknown = context.cancellationSignal.reason;
    if (context.cancellationSignal.aborted && reason instanceof CancelledFailure) throw reason;
    const recovered = spec.recover?.(err);
    if (recovered !== undefined) {
      calls.add(1, { outcome: 'answered_with_outcome' });
      return recovered;
    }
    const failure = toActivityFailure(err, context.info.attempt, { idempotent: spec.idempotent });
    calls.add(1, { outcome: failure.type ?? 'error' });
    if (failure.type === FAILURE_TYPES.rateLimited) context.metricMeter.createCounter(METRICS.apiRateLimited).add(1);
    logFailure(spec.logger, context, failure);
    throw failure;
  }
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

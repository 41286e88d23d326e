/** An activity's one API call: Temporal's cancellation aborts it, and errors become the failures workflows expect. */
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { Logger } from '../src/logger.js';
import { ACTIVITY_QUEUES, isActivityName } from '../src/contracts/task-queues.js';
import type { MetricsRecorder } from '../src/metrics/recorder.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { toActivityFailure } from './failures.js';
import { holdDuringOutage, observeCall, type OutageBoard } from './outage-gate.js';

/** How long this attempt waited in its queue (the server's clock against ours: NTP keeps them milliseconds apart). */
export function queuedMs(): number {
  return Math.max(0, Date.now() - Context.current().info.currentAttemptScheduledTimestampMs);
}

/**
 * `idempotent`: see toActivityFailure; `recover` turns an error that is a business outcome (a 422 carrying a
 * document) into a result; `outages`: the fleet's view, a call to a side known down is not sent.
 */
export async function callApi<T>(
  spec: CallSpec<T>,
  idempotent: boolean,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const context = Context.current();
  const { activityType, attempt, workflowExecution } = context.info;
  const service = isActivityName(activityType) ? ACTIVITY_QUEUES[activityType] : 'other';
  const counted = (outcome: string) => spec.metrics?.count('etims_api_calls', { service, outcome });
  return whileAlive(async () => {
    await holdDuringOutage(spec.outages).catch((held: unknown) => {
      counted(FAILURE_TYPES.outageKnown);
      throw held;
    });
    try {
      const result = await call(context.cancellationSignal);
      counted('ok');
      observeCall(spec.outages, undefined);
      return result;
    } catch (err) {
      observeCall(spec.outages, err);
      // Cancelled (or timed out) by Temporal: report the cancellation itself, not the aborted request.
      const reason: unknown = context.cancellationSignal.reason;
      if (context.cancellationSignal.aborted && reason instanceof CancelledFailure) throw reason;
      const recovered = spec.recover?.(err);
      if (recovered !== undefined) {
        counted('answered_with_outcome');
        return recovered;
      }
      const failure = toActivityFailure(err, attempt, { idempotent });
      counted(failure.type ?? 'error');
      if (failure.type === FAILURE_TYPES.rateLimited) spec.metrics?.count('etims_api_rate_limited', { service });
      const nonRetryable = failure.nonRetryable === true;
      const fields = {
        activity: activityType,
        workflowId: workflowExecution?.workflowId,
        attempt,
        failureType: failure.type,
        nonRetryable,
      };
      // Retryable failures are routine (429s, a flaky network); the rest need a decision by the workflow.
      if (nonRetryable) spec.logger.warn(fields, failure.message);
      else spec.logger.debug(fields, failure.message);
      throw failure;
    }
  });
}

/**
 * With a heartbeat timeout, an activity waiting on a call (the service's, or Temporal's) says it is alive a third of
 * the timeout apart, so one lost with its worker is retried that soon; without one, it sends nothing.
 */
export async function whileAlive<T>(wait: () => Promise<T>): Promise<T> {
  const context = currentContext();
  // Called as a plain function (a client reading the books): nothing to heartbeat to.
  if (!context) return wait();
  const { heartbeatTimeoutMs } = context.info;
  const alive = heartbeatTimeoutMs ? setInterval(() => context.heartbeat(), heartbeatTimeoutMs / 3) : undefined;
  try {
    return await wait();
  } finally {
    clearInterval(alive);
  }
}

function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

interface CallSpec<T> {
  logger: Logger;
  metrics?: MetricsRecorder | undefined;
  outages?: OutageBoard | undefined;
  recover?: (err: unknown) => T | undefined;
}

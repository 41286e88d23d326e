import { TimeoutType } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, TimeoutFailure, condition, proxyActivities } from '@temporalio/workflow';
import type { AdjustStockInput, AdjustStockResult } from '../../activities/types.js';
import { FAILURE_TYPES, isAmbiguousWrite } from '../../src/contracts/failures.js';
import { SERVICE_DELAY_BOUNDS } from '../../src/http/rate-limit.js';
import { CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from '../activity-options.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { CallRoute } from '../placement.js';

type SendOutcome =
  | { kind: 'answered'; result: AdjustStockResult }
  /** Not started before its deadline: provably never sent. */
  | { kind: 'not_started' }
  /** Provably never sent, and the ledger is leaving for another build: its next run sends it. */
  | { kind: 'not_sent' }
  /** Sent or maybe sent, answer lost. */
  | { kind: 'uncertain'; why: string }
  /** The service said no (`type`: the activity failure's, e.g. `invalid_request` for a 400). */
  | { kind: 'refused'; why: string; type: string | undefined };

/**
 * One attempt at a time: the service does not de-duplicate movements, so only an attempt provably not taken (429,
 * never sent) is made again. `deadlineMs`: the longest it may wait in the queue (the coalescing bound).
 */
export async function sendMovement(
  route: CallRoute,
  { businessId, branchId }: { businessId: string; branchId?: string | undefined },
  m: Pick<AdjustStockInput, 'itemId' | 'action' | 'quantity' | 'unitPrice' | 'referenceId'>,
  urgent: boolean,
  deadlineMs?: number,
  leaving: () => boolean = () => false,
): Promise<SendOutcome> {
  const { itemId, action, quantity, unitPrice, referenceId } = m;
  const movement: AdjustStockInput = {
    ...{ businessId, itemId, action, quantity, unitPrice, referenceId },
    ...(branchId ? { branchId } : {}),
  };
  const { adjustStock } = proxyActivities<ActivitiesOn<'compliance'>>({
    taskQueue: route.complianceQueue,
    startToCloseTimeout: '60 seconds',
    // It heartbeats while it waits for the budget and the service: one lost with its worker is uncertain in seconds,
    // and its item's quantity settles it, instead of its lines waiting out the minute.
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
    ...(deadlineMs === undefined ? {} : { scheduleToStartTimeout: Math.max(1000, Math.round(deadlineMs)) }),
    retry: { maximumAttempts: 1 },
    priority: { priorityKey: urgent ? PRIORITY.signing : PRIORITY.bookkeeping, fairnessKey: route.fairnessKey },
  });
  const summary = `${movement.action} ${movement.quantity} × ${movement.itemId}`;
  for (let attempt = 1; ; attempt++) {
    try {
      return { kind: 'answered', result: await adjustStock.executeWithOptions({ summary }, [movement]) };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const { cause } = err;
      if (cause instanceof TimeoutFailure) {
        if (cause.timeoutType === TimeoutType.SCHEDULE_TO_START) return { kind: 'not_started' };
        return { kind: 'uncertain', why: 'its attempt timed out (the worker may have died after sending it)' };
      }
      if (!(cause instanceof ApplicationFailure))
        return { kind: 'uncertain', why: cause?.message ?? 'unknown failure' };
      if (provablyNotTaken(cause)) {
        // Waiting to try again, it is in flight no more: a ledger leaving goes now, not after the back-off.
        if (await condition(leaving, retryDelayMs(cause, attempt))) return { kind: 'not_sent' };
        continue;
      }
      if (isAmbiguousWrite(cause.type) || !cause.nonRetryable) return { kind: 'uncertain', why: cause.message };
      return { kind: 'refused', why: `${cause.type ?? 'error'}: ${cause.message}`, type: cause.type ?? undefined };
    }
  }
}

/** A 429 (the service took nothing), or a failure the activity reports as never having reached the service. */
function provablyNotTaken(failure: ApplicationFailure): boolean {
  if (failure.nonRetryable) return false;
  if (failure.type === FAILURE_TYPES.rateLimited) return true;
  const detail = failure.details?.[0] as { requestSent?: unknown } | undefined;
  return detail?.requestSent === false;
}

const BACKOFF_MAX_MS = 60_000;
/** The details may come from a worker without these bounds, or from a recorded history: bounded here as well. */
const RETRY_AFTER_MAX_MS = SERVICE_DELAY_BOUNDS.retryAfterSeconds * 1000;

/** A 429's Retry-After (activities/failures.ts puts it in the details), else a doubling backoff up to a minute. */
export function retryDelayMs(failure: ApplicationFailure, attempt: number): number {
  const detail = failure.details?.[0] as { retryAfterSeconds?: unknown } | undefined;
  const retryAfter = detail?.retryAfterSeconds;
  if (typeof retryAfter === 'number' && !Number.isNaN(retryAfter))
    return Math.min(RETRY_AFTER_MAX_MS, Math.max(1, retryAfter) * 1000);
  return Math.min(1000 * 2 ** Math.max(0, attempt - 1), BACKOFF_MAX_MS);
}

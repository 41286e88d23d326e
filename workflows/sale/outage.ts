import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  leaveOutageSignal,
  outageTriedSignal,
  outageWatchWorkflowId,
  type OutageSide,
} from '../../src/contracts/outage-watch.js';
import type { OutageWait } from '../../src/contracts/sale.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { DocumentContext } from './context.js';
import { awaitOperator } from './operator.js';

/** Retryable answers of a service that is up: the call is made again, nothing is waited out. */
const NOT_OUTAGES: ReadonlySet<string> = new Set([
  FAILURE_TYPES.rateLimited,
  'idempotency_in_progress',
  FAILURE_TYPES.unknownBranch,
]);

/** A sale the watch has not told anything for this long joins again: a watch someone terminated starts anew. */
const REJOIN_MS = 10 * 60_000;

/** The cause of a call that failed as an outage, its retries spent; undefined for a refusal or a cancellation. */
function outageCause(err: unknown): string | undefined {
  if (!(err instanceof ActivityFailure) || isCancellation(err)) return undefined;
  const { cause } = err;
  if (cause instanceof TimeoutFailure)
    return cause.cause instanceof ApplicationFailure ? (cause.cause.type ?? 'timeout') : 'timeout';
  if (cause instanceof ApplicationFailure && !cause.nonRetryable) return cause.type ?? 'error';
  // Held back by the fleet, unsent, without spending its tries: the watch already knows this outage.
  if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.outageKnown) return cause.type;
  return undefined;
}

/** Calls the service until it answers: an outage is waited out on the application's watch, anything else thrown. */
export async function rideOutages<T>(ctx: DocumentContext, call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      const result = await call();
      // The authority's outage is over only once a submission goes through, not when the service answers.
      await outageEnded(ctx, 'service');
      return result;
    } catch (err) {
      const cause = outageCause(err);
      if (cause === undefined) {
        // Refused or cancelled: whatever it is, the service is answering again.
        await outageEnded(ctx, 'service');
        throw err;
      }
      // Not an outage but the service's own pacing or a request still being processed: call again at once.
      if (NOT_OUTAGES.has(cause)) continue;
      const failure = err instanceof ActivityFailure ? err.cause : undefined;
      // Held back by the fleet: the side its watch holds sales on (the authority's only holds submissions).
      const held = failure instanceof ApplicationFailure ? (failure.details?.[0] as { side?: unknown }) : undefined;
      const side = held?.side === 'authority' ? 'authority' : 'service';
      await waitOutOutage(ctx, { side, cause, message: failure?.message ?? String(err) });
    }
  }
}

/** Waits on the watch until it says go or asks this sale to probe (one try); past `outageLimit` it parks instead. */
export async function waitOutOutage(
  ctx: DocumentContext,
  seen: Pick<OutageWait, 'side' | 'cause' | 'message'>,
): Promise<void> {
  const outage = ctx.record.waitingOut(seen);
  const limitMs = ctx.settings.outageLimitMs;
  const waitedMs = Date.now() - Date.parse(outage.since);
  if (limitMs !== undefined && waitedMs >= limitMs) {
    await leaveWatch(ctx);
    ctx.record.outageOver(undefined, 'parking');
    const limit = ctx.input.options?.outageLimit ?? '';
    await awaitOperator(
      ctx,
      FAILURE_TYPES.outageLimitReached,
      `the ${outage.side === 'service' ? 'compliance service' : 'tax authority'} has been failing since ` +
        `${outage.since} (${outage.cause}: ${outage.message}); the sale waited ${limit} and ${outage.attempts} tries`,
    );
    // An operator's retry is a probe of its own: sent, whatever the fleet holds back.
    ctx.tries.one = true;
    return;
  }
  const watch = ctx.outageWatch;
  if (watch?.probing) await tellWatch(ctx, false);
  if (watch?.side !== seen.side) await joinWatch(ctx, seen.side);
  ctx.tries.one = false;
  // Sent while its call or its joining was under way, the sale is off the watch's list and no news will come.
  if (ctx.inbox.outageNews !== 'over') ctx.inbox.outageNews = undefined;
  for (;;) {
    const untilLimit = limitMs === undefined ? Infinity : limitMs - (Date.now() - Date.parse(outage.since));
    if (await condition(() => ctx.inbox.outageNews !== undefined, Math.max(1, Math.min(REJOIN_MS, untilLimit)))) break;
    if (untilLimit <= REJOIN_MS) return;
    // Joining again starts a watch that was lost (terminated by someone); a running one just keeps the sale.
    await joinWatch(ctx, seen.side);
  }
  // Either way the next call is one try, which the fleet's hold lets through; once sent, the sale joins anew.
  const sent = ctx.inbox.outageNews === 'over';
  ctx.outageWatch = sent ? undefined : { side: seen.side, probing: true };
  // Said in the task that schedules its call, before the watch sends the next: calls reach the queue in its order.
  if (sent) void signalWatch(ctx, leaveOutageSignal, { workflowId: ctx.workflowId });
  ctx.tries.one = true;
  ctx.inbox.outageNews = undefined;
}

/** The outage (of `side`, when given) is over: the watch hears the side answered and sends every sale waiting. */
export async function outageEnded(ctx: DocumentContext, side?: OutageSide): Promise<void> {
  ctx.record.outageOver(side);
  const watch = ctx.outageWatch;
  if (!watch || (side !== undefined && watch.side !== side)) return;
  await tellWatch(ctx, true);
  ctx.outageWatch = undefined;
  ctx.tries.one = false;
}

/** The document is in flight: a probing sale stays the probe, its outcome telling whether the authority is back. */
export async function submissionInFlight(ctx: DocumentContext): Promise<void> {
  if (ctx.outageWatch?.probing) {
    // Its next call is no probe: a resubmission after a failed outcome waits for the watch like the others.
    ctx.tries.one = false;
    return;
  }
  await leaveWatch(ctx);
}

/** The service answered within a longer step (items to register): a probe says so before what follows waits. */
export async function serviceAnswered(ctx: DocumentContext): Promise<void> {
  if (ctx.outageWatch?.side === 'service') await outageEnded(ctx, 'service');
}

/** The sale stops waiting on the watch without having got through (parked, or its document in flight). */
async function leaveWatch(ctx: DocumentContext): Promise<void> {
  if (!ctx.outageWatch) return;
  ctx.outageWatch = undefined;
  ctx.tries.one = false;
  await signalWatch(ctx, leaveOutageSignal, { workflowId: ctx.workflowId });
}

async function joinWatch(ctx: DocumentContext, side: OutageSide): Promise<void> {
  await ctx.api.joinOutageWatch({
    businessId: ctx.input.businessId,
    workflowId: ctx.workflowId,
    side,
    order: workflowInfo().startTime.getTime(),
    priority:
      ctx.record.state.sale !== null && isSigned(ctx.record.state.sale) ? PRIORITY.bookkeeping : PRIORITY.signing,
    complianceQueue: ctx.route.complianceQueue,
    fairnessKey: ctx.route.fairnessKey,
    taskQueue: ctx.taskQueue,
  });
  ctx.outageWatch = { side, probing: false };
}

async function tellWatch(ctx: DocumentContext, back: boolean): Promise<void> {
  const side = ctx.outageWatch!.side;
  await signalWatch(ctx, outageTriedSignal, { workflowId: ctx.workflowId, side, back });
  ctx.outageWatch = { side, probing: false };
}

/** A watch that closed meanwhile has nobody else waiting: a signal it misses is no loss. */
function signalWatch<T>(ctx: DocumentContext, signal: SignalDefinition<[T]>, arg: T): Promise<void> {
  const { complianceQueue, fairnessKey } = ctx.route;
  return getExternalWorkflowHandle(outageWatchWorkflowId(complianceQueue, fairnessKey))
    .signal(signal, arg)
    .catch(() => undefined);
}

import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
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
import type { CallRoute } from '../placement.js';
import type { DocumentActivities } from './activities.js';
import { SIDE_NAMES, type SaleRecord } from './record.js';

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

/** What an outage ride reads of its process (a DocumentProcess). */
export interface OutageRider {
  readonly workflowId: string;
  readonly taskQueue: string;
  readonly startedMs: number;
  readonly businessId: string;
  readonly route: CallRoute;
  readonly record: SaleRecord;
  readonly api: Pick<DocumentActivities, 'joinOutageWatch'>;
  readonly settings: { outageLimit: { text: string; ms: number } | undefined };
  awaitOperator(code: string, message: string): Promise<void>;
}

/**
 * A process riding out outages on its application's watch: the watch it waits on, whether its next call is one try
 * (the watch's probe, or an operator's retry), and what the watch last said. Why: docs/outages.md.
 */
export class OutageRide {
  /** Read by the process's activities: while set, a call makes one try. */
  readonly tries = { one: false };
  private watch: { side: OutageSide; probing: boolean } | undefined;
  /** What the watch last told this process (its signal): probe (try once now) or over (go). */
  news: 'probe' | 'over' | undefined;

  constructor(private readonly rider: OutageRider) {}

  /** Calls the service until it answers: an outage is waited out on the application's watch, anything else thrown. */
  async ride<T>(call: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const result = await call();
        // The authority's outage is over only once a submission goes through, not when the service answers.
        await this.ended('service');
        return result;
      } catch (err) {
        const cause = outageCause(err);
        if (cause === undefined) {
          // Refused or cancelled: whatever it is, the service is answering again.
          await this.ended('service');
          throw err;
        }
        // Not an outage but the service's own pacing or a request still being processed: call again at once.
        if (NOT_OUTAGES.has(cause)) continue;
        const failure = err instanceof ActivityFailure ? err.cause : undefined;
        // Held back by the fleet: the side its watch holds sales on (the authority's only holds submissions).
        const held = failure instanceof ApplicationFailure ? (failure.details?.[0] as { side?: unknown }) : undefined;
        const side = held?.side === 'authority' ? 'authority' : 'service';
        await this.waitOut({ side, cause, message: failure?.message ?? String(err) });
      }
    }
  }

  /** Waits on the watch until it says go or asks this process to probe (one try); past `outageLimit` it parks. */
  async waitOut(seen: Pick<OutageWait, 'side' | 'cause' | 'message'>): Promise<void> {
    const { record, settings } = this.rider;
    const { outageLimit } = settings;
    const outage = record.waitingOut(seen);
    const limitMs = outageLimit?.ms;
    const waitedMs = Date.now() - Date.parse(outage.since);
    if (limitMs !== undefined && waitedMs >= limitMs) {
      await this.leave();
      record.outageOver(undefined, 'parking');
      await this.rider.awaitOperator(
        FAILURE_TYPES.outageLimitReached,
        `the ${SIDE_NAMES[outage.side]} has been failing since ` +
          `${outage.since} (${outage.cause}: ${outage.message}); ` +
          `the sale waited ${outageLimit?.text ?? ''} and ${outage.attempts} tries`,
      );
      // An operator's retry is a probe of its own: sent, whatever the fleet holds back.
      this.tries.one = true;
      return;
    }
    if (this.watch?.probing) await this.tell(false);
    if (this.watch?.side !== seen.side) await this.join(seen.side);
    this.tries.one = false;
    // Sent while its call or its joining was under way, the process is off the watch's list and no news will come.
    if (this.news !== 'over') this.news = undefined;
    for (;;) {
      const untilLimit = limitMs === undefined ? Infinity : limitMs - (Date.now() - Date.parse(outage.since));
      if (await condition(() => this.news !== undefined, Math.max(1, Math.min(REJOIN_MS, untilLimit)))) break;
      if (untilLimit <= REJOIN_MS) return;
      // Joining again starts a watch that was lost (terminated by someone); a running one just keeps the process.
      await this.join(seen.side);
    }
    // Either way the next call is one try, which the fleet's hold lets through; once sent, the process joins anew.
    const sent = this.news === 'over';
    this.watch = sent ? undefined : { side: seen.side, probing: true };
    // Said in the task that schedules its call, before the watch sends the next: calls reach the queue in its order.
    if (sent) void this.signal(leaveOutageSignal, { workflowId: this.rider.workflowId });
    this.tries.one = true;
    this.news = undefined;
  }

  /** The outage (of `side`, when given) is over: the watch hears the side answered and sends every one waiting. */
  async ended(side?: OutageSide): Promise<void> {
    this.rider.record.outageOver(side);
    const watch = this.watch;
    if (!watch || (side !== undefined && watch.side !== side)) return;
    await this.tell(true);
    this.watch = undefined;
    this.tries.one = false;
  }

  /** The document is in flight: a probing process stays the probe, its outcome saying whether the authority is back. */
  async submissionInFlight(): Promise<void> {
    if (this.watch?.probing) {
      // Its next call is no probe: a resubmission after a failed outcome waits for the watch like the others.
      this.tries.one = false;
      return;
    }
    await this.leave();
  }

  /** The service answered within a longer step (items to register): a probe says so before what follows waits. */
  async serviceAnswered(): Promise<void> {
    if (this.watch?.side === 'service') await this.ended('service');
  }

  /** Stops waiting on the watch without having got through (parked, or its document in flight). */
  private async leave(): Promise<void> {
    if (!this.watch) return;
    this.watch = undefined;
    this.tries.one = false;
    await this.signal(leaveOutageSignal, { workflowId: this.rider.workflowId });
  }

  private async join(side: OutageSide): Promise<void> {
    const { rider } = this;
    const { sale } = rider.record.state;
    await rider.api.joinOutageWatch({
      businessId: rider.businessId,
      workflowId: rider.workflowId,
      side,
      order: rider.startedMs,
      priority: sale !== null && isSigned(sale) ? PRIORITY.bookkeeping : PRIORITY.signing,
      complianceQueue: rider.route.complianceQueue,
      fairnessKey: rider.route.fairnessKey,
      taskQueue: rider.taskQueue,
    });
    this.watch = { side, probing: false };
  }

  private async tell(back: boolean): Promise<void> {
    const side = this.watch!.side;
    await this.signal(outageTriedSignal, { workflowId: this.rider.workflowId, side, back });
    this.watch = { side, probing: false };
  }

  /** A watch that closed meanwhile has nobody else waiting: a signal it misses is no loss. */
  private signal<T>(signal: SignalDefinition<[T]>, arg: T): Promise<void> {
    const { complianceQueue, fairnessKey } = this.rider.route;
    return getExternalWorkflowHandle(outageWatchWorkflowId(complianceQueue, fairnessKey))
      .signal(signal, arg)
      .catch(() => undefined);
  }
}

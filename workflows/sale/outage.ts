import { ActivityFailure, ApplicationFailure, TimeoutFailure, isCancellation, sleep } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { OutageWait } from '../../src/contracts/sale.js';
import type { SaleContext } from './context.js';
import { awaitOperator } from './operator.js';

/** Sales started from here on wait out outages by themselves; older ones keep parking after their retries. */
export const RIDE_OUTAGES_PATCH = 'ride-outages';

/** The longest pause between two tries during an outage: what an outage costs each waiting sale in requests. */
const OUTAGE_PAUSE_MAX_MS = 300_000;

/**
 * The cause of a call that failed as an outage once its activity's own retries were spent (the failure's type, or
 * `timeout`); undefined for anything else, which is the caller's to handle (a refusal parks, a cancellation unwinds).
 */
export function outageCause(err: unknown): string | undefined {
  if (!(err instanceof ActivityFailure) || isCancellation(err)) return undefined;
  const { cause } = err;
  if (cause instanceof TimeoutFailure)
    return cause.cause instanceof ApplicationFailure ? (cause.cause.type ?? 'timeout') : 'timeout';
  if (cause instanceof ApplicationFailure && !cause.nonRetryable) return cause.type ?? 'error';
  return undefined;
}

/** Calls the service until it answers: an outage is waited out in the sale's state, anything else is thrown. */
export async function rideOutages<T>(ctx: SaleContext, call: () => Promise<T>, cancellable = true): Promise<T> {
  if (!ctx.settings.ridesOutages) return call();
  for (;;) {
    try {
      const result = await call();
      // The authority's outage is over only once a submission goes through, not when the service answers.
      ctx.record.outageOver('service');
      return result;
    } catch (err) {
      const cause = outageCause(err);
      if (cause === undefined) {
        // Refused or cancelled: whatever it is, the service is answering again.
        ctx.record.outageOver('service');
        throw err;
      }
      const message = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
      await waitOutOutage(ctx, { side: 'service', cause, message }, cancellable);
    }
  }
}

/**
 * One pause of an outage, growing to five minutes; past the sale's `outageLimit` it parks instead, saying which
 * outage and since when, and an operator's retry starts the count again.
 */
export async function waitOutOutage(
  ctx: SaleContext,
  seen: Pick<OutageWait, 'side' | 'cause' | 'message'>,
  cancellable: boolean,
): Promise<void> {
  const outage = ctx.record.waitingOut(seen);
  const limitMs = ctx.settings.outageLimitMs;
  if (limitMs !== undefined && Date.now() - Date.parse(outage.since) >= limitMs) {
    const limit = ctx.input.options?.outageLimit ?? '';
    await awaitOperator(
      ctx,
      FAILURE_TYPES.outageLimitReached,
      `the ${outage.side === 'service' ? 'compliance service' : 'tax authority'} has been failing since ` +
        `${outage.since} (${outage.cause}: ${outage.message}); the sale waited ${limit} and ${outage.attempts} tries`,
      { cancellable },
    );
    ctx.record.outageOver();
    return;
  }
  // Spread, so sales that met the outage together do not all come back in the same second.
  const pause = 1000 * 2 ** Math.min(outage.attempts, 10) * (1 + 0.2 * Math.random());
  await sleep(Math.round(Math.min(OUTAGE_PAUSE_MAX_MS, pause)));
}

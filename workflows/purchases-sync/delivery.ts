import { ActivityFailure, ApplicationFailure, TimeoutFailure, log } from '@temporalio/workflow';
import type { DeliveryProgress } from '../../src/contracts/purchases-sync.js';
import type { PurchasesSync } from './context.js';
import type { DueEvent } from './ledger.js';

/**
 * Sends the events a page made due to the business's sink, in one batch. A sink that is down does not fail the
 * sync: the batch is retried for a few minutes, then the rest of this sync's events are counted `pending` and the
 * ledger keeps what was delivered, so the next sync sends them.
 */
export async function deliver({ input, record, api }: PurchasesSync, due: DueEvent[]): Promise<void> {
  if (due.length === 0) return;
  if (record.state.sinkDown) {
    record.delivered(due, 0);
    return;
  }
  let delivered: number;
  try {
    delivered = (await api.sink.deliverPurchaseEvents({ events: due.map((d) => d.event) })).delivered;
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    delivered = deliveredBefore(err, due.length);
    record.sinkWentDown();
    log.warn('purchase events not delivered; the next sync delivers them', {
      businessId: input.businessId,
      delivered,
      pending: due.length - delivered,
      error: err.cause?.message ?? err.message,
    });
  }
  record.delivered(due, delivered);
}

/** How many events a failed delivery had delivered, from its failure's details or its last heartbeat. */
function deliveredBefore(err: ActivityFailure, total: number): number {
  const counts: unknown[] = [];
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 3 && cause; depth++) {
    if (cause instanceof ApplicationFailure)
      counts.push((cause.details?.[0] as Partial<DeliveryProgress> | undefined)?.delivered);
    if (cause instanceof TimeoutFailure)
      counts.push((cause.lastHeartbeatDetails as Partial<DeliveryProgress> | undefined)?.delivered);
    cause = (cause as { cause?: unknown }).cause;
  }
  const valid = counts.filter((n): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= total);
  return valid.length > 0 ? Math.max(...valid) : 0;
}

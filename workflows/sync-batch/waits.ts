import { condition, sleep } from '@temporalio/workflow';
import type { Batch, SyncBatchSettings } from './context.js';

/** The next wait: the first after process or progress, doubled while nothing settles, up to the maximum. */
export function nextInterval(previousMs: number, progressed: boolean, settings: SyncBatchSettings): number {
  if (previousMs <= 0 || progressed) return settings.pollIntervalMs;
  return Math.min(previousMs * 2, settings.maxPollIntervalMs);
}

/** A durable timer, cut short by a webhook; however many arrive, polls stay `minPollGap` apart. */
export async function waitForNextPoll(batch: Batch, waitMs: number): Promise<void> {
  const { record, settings } = batch;
  const webhooks = record.state.webhooks;
  const woken = await condition(() => record.state.webhooks > webhooks, Math.max(1, waitMs));
  if (!woken) return;
  const gap = settings.minPollGapMs - (Date.now() - batch.lastPollAt);
  if (gap > 0) await sleep(gap);
}

/** Until an operator acts, a webhook arrives (the payments may have been fixed elsewhere) or the parked poll is due. */
export async function waitWhileParked(batch: Batch): Promise<void> {
  const { record, inbox, settings } = batch;
  const webhooks = record.state.webhooks;
  await condition(
    () => record.state.parked === null || inbox.dismissReason !== undefined || record.state.webhooks > webhooks,
    settings.parkedPollIntervalMs,
  );
  if (record.state.parked !== null && inbox.dismissReason === undefined) {
    const gap = settings.minPollGapMs - (Date.now() - batch.lastPollAt);
    if (gap > 0) await sleep(gap);
  }
}

/**
 * The day-book entries of sales signed in their answers, sent a moment after the answer and gathered per book: the
 * till's answer waits for no day book, and a busy branch's book takes one signal for many sales. One lost with its
 * process (killed within the moment) is found again by the book's close (docs/fiscal-day.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DAY_ENTRIES_PER_SIGNAL,
  fiscalDayWorkflowId,
  type FiscalDayEntries,
  type FiscalDayEntry,
} from '../src/contracts/fiscal-day.js';
import type { Logger } from '../src/logger.js';

/** Long enough for the till's answer to be on its way, short enough that the book is seldom behind. */
const GATHER_MS = 250;

type Send = (input: FiscalDayEntries & { taskQueue: string }) => Promise<unknown>;

/** `enter(taskQueue, day)` names the book the entry goes to; `afterAnswers` holds what is still to send. */
export function dayEntriesGatherer(send: Send, logger: Logger, afterAnswers?: Set<Promise<unknown>>) {
  const gathering = new Map<string, FiscalDayEntries & { taskQueue: string }>();
  return function enter(taskQueue: string, { entry, ...key }: FiscalDayEntry): string {
    const workflowId = fiscalDayWorkflowId(taskQueue, key);
    const open = gathering.get(workflowId);
    if (open && open.entries.length < DAY_ENTRIES_PER_SIGNAL) {
      open.entries.push(entry);
      return workflowId;
    }
    const batch = { ...key, taskQueue, entries: [entry] };
    gathering.set(workflowId, batch);
    const sending: Promise<unknown> = sleep(GATHER_MS)
      .then(() => {
        if (gathering.get(workflowId) === batch) gathering.delete(workflowId);
        return send(batch);
      })
      .catch((err: unknown) =>
        logger.warn(
          { err, workflowId, entries: batch.entries.length },
          "day book entries after signing failed; the day's close finds their sales",
        ),
      )
      .finally(() => afterAnswers?.delete(sending));
    afterAnswers?.add(sending);
    return workflowId;
  };
}

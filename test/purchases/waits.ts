/**
 * How long a workflow's activities waited in their task queue: from scheduled to started, read from its history
 * (server clock). What a rate-limited queue makes a till sale wait, for the priority test and the bench.
 */
import type { WorkflowHandle } from '@temporalio/client';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

function ms(event: HistoryEvent | undefined): number | undefined {
  const time = event?.eventTime;
  return time ? Number(time.seconds) * 1000 + (time.nanos ?? 0) / 1e6 : undefined;
}

/** For each named activity, the wait of its first scheduling (ms), once it has started; absent otherwise. */
export async function activityWaits(handle: WorkflowHandle, names: readonly string[]): Promise<Record<string, number>> {
  const events = (await handle.fetchHistory()).events ?? [];
  const waits: Record<string, number> = {};
  for (const name of names) {
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name);
    if (!scheduled) continue;
    const started = events.find(
      (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '') === String(scheduled.eventId),
    );
    const from = ms(scheduled);
    const to = ms(started);
    if (from !== undefined && to !== undefined) waits[name] = Math.round(to - from);
  }
  return waits;
}

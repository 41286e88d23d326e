import { describe, expect, it } from 'vitest';
import { openNdjsonSink } from '../../src/purchases/event-sink.js';
import { eventually } from '../helpers/eventually.js';
import { historyEvents } from '../workflows/harness.js';
import { ObservedSink, duplicates, eventsIn, usePurchasesStack, useTempDir } from './harness.js';

const tmp = useTempDir();
const sinks: ObservedSink[] = [];
// 100 ms per event: the 48 deliveries of the first sync take about five seconds, time enough to stop the worker.
const stack = usePurchasesStack(() => ({
  sink: async () => {
    const sink = new ObservedSink(await openNdjsonSink(tmp.path('events.ndjson')), 100);
    sinks.push(sink);
    return sink;
  },
}));

describe('purchases delivery across a worker replaced mid-delivery', () => {
  it('resumes delivery in the new worker from the last heartbeat, and the file holds each event exactly once', async () => {
    await eventually(
      () => eventsIn(tmp.path('events.ndjson')),
      (events) => events.length >= 10,
      { what: 'ten events delivered', timeoutMs: 20_000 },
    );
    // What a deploy or a crash does: this process stops, another starts on the same queues and the same file.
    await stack.replaceWorker();
    const written = (await eventsIn(tmp.path('events.ndjson'))).length;
    expect(written).toBeLessThan(48);

    const result = await stack.firstSync();
    expect(result.counts).toMatchObject({ seen: 48, newInvoices: 48, delivered: 48, pending: 0 });
    const ids = (await eventsIn(tmp.path('events.ndjson'))).map((e) => e.id);
    expect(ids).toHaveLength(48);
    expect(duplicates(ids)).toEqual([]);

    // The same activity, a second attempt, in the new worker: it did not start the batch over.
    const delivery = (await historyEvents(stack.client.workflow.getHandle(result.workflowId))).find(
      (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1,
    );
    expect(delivery?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThanOrEqual(2);
    const [first, second] = sinks;
    expect(second!.calls.length).toBeLessThan(48);
    expect(new Set([...first!.calls, ...second!.calls]).size).toBe(48);
  });
});

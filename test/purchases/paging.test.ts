import { describe, expect, it } from 'vitest';
import { createPurchasesBookActivities } from '../../activities/purchases-book.js';
import { DEFAULT_PURCHASES_HORIZON_DAYS } from '../../src/contracts/purchases-book.js';
import type { PurchasesSyncResult } from '../../src/contracts/purchases-sync.js';
import { openNdjsonSink } from '../../src/purchases/event-sink.js';
import { eventually } from '../helpers/eventually.js';
import { DEMO, ObservedSink, duplicates, eventsIn, usePurchasesStack, useTempDir } from './harness.js';
import { manyPurchases } from './stack.js';

const INVOICES = 250;
const tmp = useTempDir();
let sink: ObservedSink | undefined;
// The first sync runs as the worker starts; its first delivery waits at the gate until the faults are in place.
const stack = usePurchasesStack(() => ({
  fixture: manyPurchases(INVOICES),
  sink: async () => {
    sink = new ObservedSink(await openNdjsonSink(tmp.path('events.ndjson')));
    sink.hold();
    return sink;
  },
  // Five pages of 50, two pages per run: the sync continues as new twice.
  syncOptions: { pageSize: 50, pagesPerRun: 2 },
}));

describe('purchases sync paging through faults', () => {
  let first: PurchasesSyncResult;

  it(
    'survives connection resets and 429s in the middle of the listing, continuing as new, every invoice delivered once',
    { timeout: 120_000 },
    async () => {
      await eventually(
        () => sink?.calls.length ?? 0,
        (n) => n > 0,
        { what: 'the first page delivering' },
      );
      const { faults } = stack.sandbox;
      // Page 2 onwards: two dropped connections, then two 429s, then the service answers again.
      faults.add({ service: 'compliance', method: 'GET', path: '/v1/purchases', kind: 'reset', times: 2 });
      faults.add({
        service: 'compliance',
        method: 'GET',
        path: '/v1/purchases',
        kind: 'rate-limit',
        retryAfterSeconds: 1,
        times: 2,
      });
      sink!.open();

      const started = Date.now();
      const result = await stack.firstSync();
      console.info(`first sync of ${INVOICES} invoices: ${Date.now() - started} ms after the gate opened`);
      first = result;
      expect(faults.injectedCounts()).toMatchObject({ reset: 2, 'rate-limit': 2 });
      expect(result.counts).toEqual({
        pages: 5,
        seen: INVOICES,
        newInvoices: INVOICES,
        statusChanges: 0,
        delivered: INVOICES,
        pending: 0,
      });
      const ids = (await eventsIn(tmp.path('events.ndjson'))).map((e) => e.purchase.id);
      expect(ids).toHaveLength(INVOICES);
      expect(duplicates(ids)).toEqual([]);
      // Every run wrote what it delivered to the books.
      const invoices = (await stack.purchases()).map(({ purchase: { id, invoiceDate } }) => ({ id, invoiceDate }));
      expect(invoices).toHaveLength(INVOICES);
      const books = await createPurchasesBookActivities({ temporal: { client: stack.client } }).readPurchaseBooks({
        businessId: DEMO.businesses.nairobi,
        taskQueue: stack.taskQueue,
        horizonDays: DEFAULT_PURCHASES_HORIZON_DAYS,
        invoices,
      });
      expect(Object.values(books).filter((b) => b.entry?.[1] === 0 && b.entry[2] === 'pending_review')).toHaveLength(
        INVOICES,
      );
      // All of them in review: handed to the next sync by date, with the sweep.
      expect(Object.values(result.inReview).flat()).toHaveLength(INVOICES);

      // Three runs of one sync: pages 1-2, 3-4, 5.
      const runs = await eventually(
        async () => {
          const statuses: string[] = [];
          for await (const run of stack.client.workflow.list({ query: `WorkflowId = "${result.workflowId}"` }))
            statuses.push(run.status.name);
          return statuses.sort();
        },
        // Visibility lags the run: the last run may still read RUNNING right after its result came back.
        (s) => s.length === 3 && !s.includes('RUNNING'),
        { what: 'the runs of the sync in visibility' },
      );
      expect(runs).toEqual(['COMPLETED', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW']);
    },
  );

  it('the next sync, handed the result of the continued-as-new chain, delivers nothing again', async () => {
    const next = await stack.sync();
    // The review statuses (nothing pulled; the 250 pending review on five pages), the window and a slice of the
    // sweep (the invoices are older than both): not the first sync's whole listing again.
    expect(next.counts).toMatchObject({ pages: 1 + 5 + 1 + 1, seen: INVOICES, newInvoices: 0, delivered: 0 });
    expect(next.sweep.completedAt).toBe(first.sweep.completedAt);
    expect(next.sweep.next).not.toBeNull();
    expect(await eventsIn(tmp.path('events.ndjson'))).toHaveLength(INVOICES);
  });
});

/**
 * The purchases sync workflow's logic against stub activities on the time-skipping test server: the paging, the
 * ledger's comparison of what is listed with what was delivered, a sink that is down, and the continue-as-new of
 * long listings. What only the sandbox, the schedules, real sinks and a real worker show stays in test/purchases/.
 */
import { WorkflowFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  PURCHASES_PAGES_PER_RUN,
  PURCHASES_SYNC_WORKFLOW_TYPE,
  PURCHASE_DELIVERY_FAILURES,
  getPurchasesSyncProgressQuery,
  purchaseEventId,
  type ListedPurchase,
  type PurchaseDocument,
  type PurchaseEvent,
  type PurchasesSyncCarry,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../../src/contracts/purchases-sync.js';
import { complianceTaskQueue } from '../../src/contracts/task-queues.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { purchasesSyncWorkflow } from '../../workflows/purchases-sync.js';
import { SECOND, useProcessHarness, type ProcessScenario, type Stubs } from './process-logic-harness.js';

const h = useProcessHarness();

const BUSINESS = 'biz_purchases';
type SyncHandle = WorkflowHandleWithFirstExecutionRunId<typeof purchasesSyncWorkflow>;

/** A supplier invoice as the list activity returns it; the fingerprint changes with its status and total. */
function invoice(id: string, status = 'accepted', total = 1160): ListedPurchase {
  const purchase: PurchaseDocument = {
    id,
    status,
    supplier: { name: 'Acme Supplies Ltd', pin: 'P051234567X' },
    supplierInvoiceNumber: `SUP-${id}`,
    invoiceDate: '2026-11-01',
    branch: null,
    totals: { subtotal: total - 160, vat: 160, total },
    lines: [],
    confirmationError: null,
  };
  return { purchase, fingerprint: `${status}-${total}` };
}

const received = (l: ListedPurchase): PurchaseEvent => ({
  id: purchaseEventId(l.purchase.id, 0, l.fingerprint),
  type: 'purchase.received',
  businessId: BUSINESS,
  purchase: l.purchase,
});

/** The service's listing as pages: the cursor of page i (from 0) is `page-i`, the first page has none. */
interface Listing {
  pages: ListedPurchase[][];
}

function stubs(listing: Listing, overrides: Stubs = {}): Stubs {
  return {
    pullPurchases: async () => ({ pulled: 2 }),
    listPurchasesPage: async ({ cursor }) => {
      const index = cursor === null ? 0 : Number(cursor.replace('page-', ''));
      return {
        purchases: listing.pages[index]!,
        nextCursor: index + 1 < listing.pages.length ? `page-${index + 1}` : null,
      };
    },
    deliverPurchaseEvents: async ({ events }) => ({ delivered: events.length }),
    ...overrides,
  };
}

function start(s: ProcessScenario, options?: PurchasesSyncOptions): Promise<SyncHandle> {
  return s.start<typeof purchasesSyncWorkflow>(PURCHASES_SYNC_WORKFLOW_TYPE, `purchases-sync:${s.id}`, [
    { businessId: BUSINESS, ...(options ? { options } : {}) },
  ]);
}

/**
 * The next sync of the business, from the ledger of the previous one: what its first run starts from when the
 * schedule hands it the previous result (purchases-sync/record.ts). Handed over here as that run's carry: the
 * test server has no schedules, and its cron chains stall the clock once a run waiting for its time is
 * terminated. The hand-over itself is tested end to end (test/purchases/sync.test.ts).
 */
function startNextSync(s: ProcessScenario, previous: PurchasesSyncResult, name = 'next'): Promise<SyncHandle> {
  const carry: PurchasesSyncCarry = {
    pulled: false,
    cursor: null,
    previous: previous.ledger,
    ledger: {},
    counts: { pages: 0, seen: 0, newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 },
    sinkDown: false,
    runs: 1,
    ...(previous.told ? { told: previous.told } : {}),
  };
  return s.start<typeof purchasesSyncWorkflow>(PURCHASES_SYNC_WORKFLOW_TYPE, `purchases-sync:${s.id}:${name}`, [
    { businessId: BUSINESS, carry },
  ]);
}

/** What the test's syncs recorded, summed over them (the gauges: their last values). */
function syncMetrics(s: ProcessScenario) {
  const business = { business_id: BUSINESS };
  return {
    succeeded: s.metrics.total('etims_purchases_syncs', { ...business, outcome: 'succeeded' }),
    failed: s.metrics.total('etims_purchases_syncs', { ...business, outcome: 'failed' }),
    delivered: s.metrics.total('etims_purchase_events_delivered', business),
    sinkFailures: s.metrics.total('etims_purchases_sink_failures', business),
    pending: s.metrics.last('etims_purchase_events_pending', business),
    lastSuccessMs: mapDefined(
      s.metrics.last('etims_purchases_sync_last_success_timestamp_seconds', business),
      (seconds) => seconds * 1000,
    ),
  };
}

const mapDefined = <T, R>(value: T | undefined, map: (value: T) => R): R | undefined =>
  value === undefined ? undefined : map(value);

/** The server's clock around `body`: a workflow's clock (its Date.now()) reads within. */
async function timed<T>(
  s: ProcessScenario,
  body: () => Promise<T>,
): Promise<{ value: T; fromMs: number; toMs: number }> {
  const fromMs = await s.env.currentTimeMs();
  const value = await body();
  return { value, fromMs, toMs: await s.env.currentTimeMs() };
}

const deliveredIds = (s: ProcessScenario, handle?: SyncHandle) =>
  s
    .callsOf('deliverPurchaseEvents')
    .filter((c) => handle === undefined || c.workflowId === handle.workflowId)
    .map((c) => c.input.events.map((e) => e.id));

describe('purchasesSyncWorkflow', () => {
  it('without a sink (deliver: false) delivers nothing and reports no sink down, its ledger and counts as if delivered', async () => {
    const [a, b] = ['pur_a', 'pur_b'].map((id) => invoice(id));
    await h.run(stubs({ pages: [[a!, b!]] }), async (s) => {
      const result = await (await start(s, { deliver: false })).result();
      expect(s.callsOf('deliverPurchaseEvents')).toEqual([]);
      expect(Object.keys(result.ledger).sort()).toEqual(['pur_a', 'pur_b']);
      expect(result.counts).toMatchObject({ newInvoices: 2, delivered: 0, pending: 0 });
      expect(syncMetrics(s)).toMatchObject({ sinkFailures: 0, succeeded: 1 });
      const next = await (await startNextSync(s, result)).result();
      expect(next.counts).toMatchObject({ newInvoices: 0, statusChanges: 0 });
    });
  });

  it('tells the stock-in of each invoice reaching or leaving confirmed once per change; a business taking none in is asked once a sync', async () => {
    const confirmed = invoice('pur_in', 'confirmed');
    const other = invoice('pur_other', 'pending_review');
    let takesStockIn = true;
    const listing: Listing = { pages: [[confirmed, other]] };
    const tellStockIn: Stubs['tellStockIn'] = async () => ({ told: takesStockIn });
    await h.run(stubs(listing, { tellStockIn }), async (s) => {
      const told = () => s.callsOf('tellStockIn').map((c) => c.input.purchases.map((p) => `${p.id} ${p.status}`));
      const first = await (await start(s)).result();
      expect(told()).toEqual([['pur_in confirmed']]);
      expect(first.told).toEqual({ pur_in: 'confirmed' });
      // The same listing again: nothing new to tell, no call.
      const again = await (await startNextSync(s, first, 'again')).result();
      expect(told()).toHaveLength(1);
      // Left confirmed: told once more, with its new status.
      listing.pages = [[invoice('pur_in', 'pending_review'), other]];
      const back = await (await startNextSync(s, again, 'back')).result();
      expect(told()).toEqual([['pur_in confirmed'], ['pur_in pending_review']]);
      expect(back.told).toEqual({ pur_in: 'pending_review' });
      // Switched off: asked once, then not again in that sync (two pages), and nothing recorded as told.
      takesStockIn = false;
      listing.pages = [[invoice('pur_in', 'confirmed')], [invoice('pur_2', 'confirmed')]];
      const off = await (await startNextSync(s, back, 'off')).result();
      expect(told()).toHaveLength(3);
      expect(off.told).toEqual({ pur_in: 'pending_review' });
    });
  });

  it('pulls once, lists every page with the cursor, and delivers each page’s new invoices once, on the workflow queue', async () => {
    const [a, b, c, d] = ['pur_a', 'pur_b', 'pur_c', 'pur_d'].map((id) => invoice(id));
    await h.run(stubs({ pages: [[a!, b!], [], [c!, d!]] }), async (s) => {
      const handle = await start(s, { pageSize: 2 });
      const { value: result, fromMs, toMs } = await timed(s, () => handle.result());

      expect(s.calls.map((call) => call.name)).toEqual([
        'pullPurchases',
        'listPurchasesPage',
        'deliverPurchaseEvents',
        'listPurchasesPage',
        'listPurchasesPage',
        'deliverPurchaseEvents',
      ]);
      expect(s.inputs('pullPurchases')).toEqual([{ businessId: BUSINESS }]);
      expect(s.inputs('listPurchasesPage')).toEqual([
        { businessId: BUSINESS, cursor: null, pageSize: 2 },
        { businessId: BUSINESS, cursor: 'page-1', pageSize: 2 },
        { businessId: BUSINESS, cursor: 'page-2', pageSize: 2 },
      ]);
      // An empty page makes no delivery.
      expect(s.inputs('deliverPurchaseEvents')).toEqual([
        { events: [received(a!), received(b!)] },
        { events: [received(c!), received(d!)] },
      ]);

      // The service's calls on the compliance queue behind every till, delivery on the workflow queue.
      for (const call of s.calls) {
        if (call.name === 'deliverPurchaseEvents') {
          expect(call.taskQueue).toBe(s.taskQueue);
          expect(call.heartbeatTimeoutMs).toBe(15 * SECOND);
        } else {
          expect(call.taskQueue, call.name).toBe(complianceTaskQueue(s.taskQueue));
          expect(call.priorityKey, call.name).toBe(PRIORITY.purchases);
        }
      }

      expect(result).toEqual({
        businessId: BUSINESS,
        ledger: Object.fromEntries([a!, b!, c!, d!].map((l) => [l.purchase.id, [l.fingerprint, 0, 'accepted']])),
        counts: { pages: 3, seen: 4, newInvoices: 4, statusChanges: 0, delivered: 4, pending: 0 },
        // None confirmed: the stock-in is told of nothing.
        told: {},
      });
      const details = await s.currentDetails(handle);
      expect(details).toContain(`**Purchases sync** of \`${BUSINESS}\`: done`);
      expect(details).toContain('| 3 | 4 | 4 | 0 | 4 | 0 |');
      expect(await handle.query(getPurchasesSyncProgressQuery)).toEqual({
        businessId: BUSINESS,
        counts: result.counts,
        cursor: null,
        sinkDown: false,
        runs: 1,
      });

      // Counted as delivered, page by page; the sync's end once, with nothing pending and the workflow's clock.
      const metrics = syncMetrics(s);
      expect(metrics).toEqual({
        succeeded: 1,
        failed: 0,
        delivered: 4,
        sinkFailures: 0,
        pending: 0,
        lastSuccessMs: expect.any(Number),
      });
      expect(metrics.lastSuccessMs).toBeGreaterThanOrEqual(fromMs);
      expect(metrics.lastSuccessMs).toBeLessThanOrEqual(toMs);
      expect(s.metrics.counted.filter((m) => m.name === 'etims_purchase_events_delivered').map((m) => m.value)).toEqual(
        [2, 2],
      );
    });
  });

  it('the next sync, handed the ledger, delivers only what changed: a new status with the previous one, a new invoice; a gone invoice leaves the ledger', async () => {
    const [a, b, c, d] = ['pur_a', 'pur_b', 'pur_c', 'pur_d'].map((id) => invoice(id));
    const bRejected = invoice('pur_b', 'rejected');
    const listing: Listing = { pages: [[a!, b!, c!]] };
    await h.run(stubs(listing), async (s) => {
      const first = await (await start(s)).result();
      expect(first.counts).toMatchObject({ newInvoices: 3, delivered: 3 });

      listing.pages = [[a!, bRejected], [d!]];
      const next = await startNextSync(s, first);
      const second = await next.result();

      expect(deliveredIds(s, next)).toEqual([
        [purchaseEventId('pur_b', 1, bRejected.fingerprint)],
        [purchaseEventId('pur_d', 0, d!.fingerprint)],
      ]);
      const changed = s.callsOf('deliverPurchaseEvents').find((call) => call.workflowId === next.workflowId)!.input
        .events[0];
      expect(changed).toEqual({
        id: purchaseEventId('pur_b', 1, bRejected.fingerprint),
        type: 'purchase.status_changed',
        businessId: BUSINESS,
        purchase: bRejected.purchase,
        previousStatus: 'accepted',
      });
      expect(second.ledger).toEqual({
        pur_a: [a!.fingerprint, 0, 'accepted'],
        pur_b: [bRejected.fingerprint, 1, 'rejected'],
        pur_d: [d!.fingerprint, 0, 'accepted'],
      });
      expect(second.counts).toEqual({
        pages: 2,
        seen: 3,
        newInvoices: 1,
        statusChanges: 1,
        delivered: 2,
        pending: 0,
      });
      // Each sync pulls once.
      expect(s.callsOf('pullPurchases').map((call) => call.workflowId)).toEqual([
        `purchases-sync:${s.id}`,
        next.workflowId,
      ]);
    });
  });

  it('with the sink down, retries the batch 8 times, leaves the rest of the sync’s events pending without calling it, and the next sync delivers them', async () => {
    const [a, b, c, d, e] = ['pur_a', 'pur_b', 'pur_c', 'pur_d', 'pur_e'].map((id) => invoice(id));
    let sinkUp = false;
    const deliverPurchaseEvents: Stubs['deliverPurchaseEvents'] = async ({ events }) => {
      if (sinkUp) return { delivered: events.length };
      // The first event went before the sink went down.
      throw ApplicationFailure.create({
        type: PURCHASE_DELIVERY_FAILURES.unavailable,
        message: 'sink answered 503',
        details: [{ delivered: 1 }],
      });
    };
    await h.run(stubs({ pages: [[a!, b!, c!], [d!], [e!]] }, { deliverPurchaseEvents }), async (s) => {
      const first = await (await start(s)).result();

      const attempts = s.callsOf('deliverPurchaseEvents');
      expect(attempts.map((call) => call.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(attempts.every((call) => call.input.events.length === 3)).toBe(true);
      // Backoff from 1 s, doubling up to 30 s.
      const gaps = attempts.slice(1).map((call, i) => call.ranAtMs - attempts[i]!.ranAtMs);
      expect(gaps).toHaveLength(7);
      [1, 2, 4, 8, 16, 30, 30].forEach((seconds, i) => {
        expect(gaps[i]).toBeGreaterThanOrEqual(seconds * SECOND);
        expect(gaps[i]).toBeLessThan((seconds + 5) * SECOND);
      });
      expect(s.inputs('listPurchasesPage')).toHaveLength(3);
      expect(first.counts).toEqual({
        pages: 3,
        seen: 5,
        newInvoices: 5,
        statusChanges: 0,
        delivered: 1,
        pending: 4,
      });
      expect(Object.keys(first.ledger)).toEqual(['pur_a']);
      // A sink that is down does not fail the sync: one sink failure for the sync, its undelivered events pending.
      expect(syncMetrics(s)).toMatchObject({ succeeded: 1, failed: 0, delivered: 1, sinkFailures: 1, pending: 4 });

      sinkUp = true;
      const next = await startNextSync(s, first);
      const second = await next.result();
      expect(deliveredIds(s, next)).toEqual([[b, c].map((l) => received(l!).id), [received(d!).id], [received(e!).id]]);
      expect(second.counts).toMatchObject({ newInvoices: 4, delivered: 4, pending: 0 });
      expect(Object.keys(second.ledger).sort()).toEqual(['pur_a', 'pur_b', 'pur_c', 'pur_d', 'pur_e']);
      expect(syncMetrics(s)).toMatchObject({ succeeded: 2, failed: 0, delivered: 5, sinkFailures: 1, pending: 0 });
    });
  });

  it('does not retry a sink that refuses an event in this sync', async () => {
    const [a, b] = ['pur_a', 'pur_b'].map((id) => invoice(id));
    const deliverPurchaseEvents: Stubs['deliverPurchaseEvents'] = async () => {
      throw ApplicationFailure.create({
        type: PURCHASE_DELIVERY_FAILURES.refused,
        message: 'sink answered 422',
        nonRetryable: false,
        details: [{ delivered: 0 }],
      });
    };
    await h.run(stubs({ pages: [[a!], [b!]] }, { deliverPurchaseEvents }), async (s) => {
      const handle = await start(s);
      const result = await handle.result();
      // Refused is in the delivery's non-retryable types: one attempt, whatever the failure says.
      expect(s.callsOf('deliverPurchaseEvents').map((call) => call.attempt)).toEqual([1]);
      expect(result.counts).toMatchObject({ delivered: 0, pending: 2 });
      expect(result.ledger).toEqual({});
      expect(await handle.query(getPurchasesSyncProgressQuery)).toMatchObject({ sinkDown: true });
      expect(await s.currentDetails(handle)).toContain('The sink did not take events: they wait for the next sync.');
      // One sink failure per sync, however many pages found it down.
      expect(syncMetrics(s)).toMatchObject({ succeeded: 1, failed: 0, delivered: 0, sinkFailures: 1, pending: 2 });
    });
  });

  it(`continues as new every ${PURCHASES_PAGES_PER_RUN} pages, carrying the cursor, the ledger and the counts; it pulls only in the first run`, async () => {
    const all = Array.from({ length: 2 * PURCHASES_PAGES_PER_RUN + 3 }, (_, i) => invoice(`pur_${i}`));
    await h.run(stubs({ pages: all.map((l) => [l]) }), async (s) => {
      const handle = await start(s);
      const result = await handle.result();

      const runs = [...new Set(s.calls.map((call) => call.runId))];
      expect(runs).toHaveLength(3);
      expect(runs[0]).toBe(handle.firstExecutionRunId);
      const pagesPerRun = runs.map((run) => s.callsOf('listPurchasesPage').filter((call) => call.runId === run).length);
      expect(pagesPerRun).toEqual([PURCHASES_PAGES_PER_RUN, PURCHASES_PAGES_PER_RUN, 3]);
      expect(s.callsOf('pullPurchases').map((call) => call.runId)).toEqual([runs[0]]);
      expect(s.inputs('listPurchasesPage').map((i) => i.cursor)).toEqual([
        null,
        ...all.slice(1).map((_, i) => `page-${i + 1}`),
      ]);
      expect(deliveredIds(s).flat()).toEqual(all.map((l) => received(l).id));
      expect(result.counts).toEqual({
        pages: all.length,
        seen: all.length,
        newInvoices: all.length,
        statusChanges: 0,
        delivered: all.length,
        pending: 0,
      });
      expect(Object.keys(result.ledger)).toHaveLength(all.length);
      expect(await handle.query(getPurchasesSyncProgressQuery)).toMatchObject({ runs: 3, cursor: null });
      expect(await s.currentDetails(handle)).toContain(
        `| ${all.length} | ${all.length} | ${all.length} | 0 | ${all.length} | 0 |`,
      );
    });
  });

  it('continues as new after options.pagesPerRun pages', async () => {
    const all = Array.from({ length: 5 }, (_, i) => invoice(`pur_${i}`));
    await h.run(stubs({ pages: all.map((l) => [l]) }), async (s) => {
      const result = await (await start(s, { pagesPerRun: 2 })).result();
      const runs = [...new Set(s.calls.map((call) => call.runId))];
      expect(runs.map((run) => s.callsOf('listPurchasesPage').filter((call) => call.runId === run).length)).toEqual([
        2, 2, 1,
      ]);
      expect(result.counts.delivered).toBe(5);
      // One sync, whatever its runs: succeeded once, at its end; every event counted once, as it was delivered.
      expect(syncMetrics(s)).toEqual({
        succeeded: 1,
        failed: 0,
        delivered: 5,
        sinkFailures: 0,
        pending: 0,
        lastSuccessMs: expect.any(Number),
      });
      expect(s.metrics.counted.filter((m) => m.name === 'etims_purchases_syncs')).toHaveLength(1);
      expect(s.metrics.gauges.map((m) => m.name).sort()).toEqual([
        'etims_purchase_events_pending',
        'etims_purchases_sync_last_success_timestamp_seconds',
      ]);
    });
  });

  it('counts a sync that fails once, in the run it fails in, with what it delivered before; no success is recorded', async () => {
    const all = Array.from({ length: 5 }, (_, i) => invoice(`pur_${i}`));
    const listing = stubs({ pages: all.map((l) => [l]) });
    const listPurchasesPage: Stubs['listPurchasesPage'] = async (input) => {
      if (input.cursor === 'page-3')
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.notConfigured,
          message: 'the key may not list',
          nonRetryable: true,
        });
      return listing.listPurchasesPage!(input);
    };
    await h.run({ ...listing, listPurchasesPage }, async (s) => {
      const error = await (await start(s, { pagesPerRun: 2 })).result().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      // It failed in its second run.
      expect(new Set(s.calls.map((call) => call.runId)).size).toBe(2);
      expect(syncMetrics(s)).toEqual({
        succeeded: 0,
        failed: 1,
        delivered: 3,
        sinkFailures: 0,
        pending: undefined,
        lastSuccessMs: undefined,
      });
    });
  });

  it.each([
    [{ pageSize: 0 }, 'options.pageSize must be an integer from 1 to 100'],
    [{ pageSize: 101 }, 'options.pageSize must be an integer from 1 to 100'],
    [{ pagesPerRun: 0 }, 'options.pagesPerRun must be a positive integer'],
    [{ deliveryAttempts: 1.5 }, 'options.deliveryAttempts must be a positive integer'],
  ] as Array<[PurchasesSyncOptions, string]>)('refuses %j before any call: %s', async (options, message) => {
    await h.run(stubs({ pages: [[invoice('pur_a')]] }), async (s) => {
      const error = await (await start(s, options)).result().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause).toMatchObject({ type: FAILURE_TYPES.invalidRequest, nonRetryable: true, message });
      expect(s.calls).toEqual([]);
      expect(syncMetrics(s)).toMatchObject({ succeeded: 0, failed: 1 });
    });
  });
});

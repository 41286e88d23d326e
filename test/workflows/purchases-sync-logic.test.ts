/**
 * The purchases sync workflow's logic against stub activities on the time-skipping test server: the listing passes
 * (the whole horizon first, then the review statuses, the recent window, a slice of the sweep, and the dates of
 * invoices that left review), the comparison of what is listed with what the books hold, a sink that is down, the
 * continue-as-new of long listings, and the move of a ledger carried whole (2.x) into the books. The books are a map
 * shared by the syncs of a test; the listing stub honours the status and dates asked, and dates are the test server's.
 * What only the sandbox, the schedules, real sinks and a real worker show stays in test/purchases/.
 */
import { WorkflowFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { beforeEach, describe, expect, it } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  DEFAULT_PURCHASES_HORIZON_DAYS,
  purchasesBookShard,
  type BookedPurchase,
} from '../../src/contracts/purchases-book.js';
import {
  PURCHASES_PAGES_PER_RUN,
  PURCHASES_SYNC_WORKFLOW_TYPE,
  PURCHASE_DELIVERY_FAILURES,
  getPurchasesSyncProgressQuery,
  purchaseEventId,
  type ListPurchasesPageInput,
  type ListedPurchase,
  type ListingPass,
  type PurchaseDocument,
  type PurchaseEvent,
  type PurchaseLedger,
  type PurchasesSyncCarry,
  type PurchasesSyncInput,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../../src/contracts/purchases-sync.js';
import { complianceTaskQueue } from '../../src/contracts/task-queues.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { purchasesSyncWorkflow } from '../../workflows/purchases-sync.js';
import { addDays, firstCarry, previousSync, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { HOUR, SECOND, useProcessHarness, type ProcessScenario, type Stubs } from './process-logic-harness.js';

const h = useProcessHarness();

const BUSINESS = 'biz_purchases';
type SyncHandle = WorkflowHandleWithFirstExecutionRunId<typeof purchasesSyncWorkflow>;

/**
 * The clock the next syncs' carries are planned on, as the workflow plans its first run on `Date.now()`: the test
 * server's time as the test starts, moved on by the test. Not the server's time later in a test: awaiting a result lets
 * that server skip to the run timeout of every run closed so far (10 years by default), which would move every invoice
 * out of the horizon and make every sweep slice the whole horizon. The first sync of a test (its own first run) reads
 * the server's clock, at the test's start.
 */
let now = 0;
/** The business's day at the test's start: invoice dates count back from it. */
let today = '';
beforeEach(async () => {
  // Through the harness: a world started afresh after a failed test has a clock of its own.
  await h.run({}, async (s) => {
    now = await s.env.currentTimeMs();
  });
  today = todayInKenya(now);
});
const daysAgo = (n: number) => addDays(today, -n);
const horizonStart = () => daysAgo(DEFAULT_PURCHASES_HORIZON_DAYS);
const windowStart = () => daysAgo(7);

/**
 * A supplier invoice as the list activity returns it; the fingerprint changes with its status and total. Dated
 * yesterday by default: inside the recent window every later sync lists.
 */
function invoice(id: string, status = 'accepted', total = 1160, invoiceDate = daysAgo(1)): ListedPurchase {
  const purchase: PurchaseDocument = {
    id,
    status,
    supplier: { name: 'Acme Supplies Ltd', pin: 'P051234567X' },
    supplierInvoiceNumber: `SUP-${id}`,
    invoiceDate,
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

/**
 * The service's listing as pages: the cursor of page i (from 0) is `page-i`, the first page has none. A query's status
 * and dates filter each page; a page the query leaves empty is not listed (an empty page of the listing is), and a
 * query matching nothing gets one empty page, as the service answers.
 */
interface Listing {
  pages: ListedPurchase[][];
}

const matches =
  ({ status, fromDate, toDate }: ListPurchasesPageInput) =>
  (l: ListedPurchase) =>
    (status === undefined || l.purchase.status === status) &&
    (fromDate === undefined || l.purchase.invoiceDate >= fromDate) &&
    (toDate === undefined || l.purchase.invoiceDate <= toDate);

function pagesOf(listing: Listing, query: ListPurchasesPageInput): ListedPurchase[][] {
  const pages = listing.pages
    .map((page) => page.filter(matches(query)))
    .filter((page, i) => page.length > 0 || listing.pages[i]!.length === 0);
  return pages.length === 0 ? [[]] : pages;
}

/** The purchases books, by purchase id: one map for every sync of a test, as the books outlive the syncs. */
type Books = Map<string, BookedPurchase>;

function stubs(listing: Listing, overrides: Stubs = {}, books: Books = new Map()): Stubs {
  return {
    pullPurchases: async () => ({ pulled: 2 }),
    listPurchasesPage: async (query) => {
      const pages = pagesOf(listing, query);
      const index = query.cursor === null ? 0 : Number(query.cursor.replace('page-', ''));
      return { purchases: pages[index]!, nextCursor: index + 1 < pages.length ? `page-${index + 1}` : null };
    },
    deliverPurchaseEvents: async ({ events }) => ({ delivered: events.length }),
    tellStockIn: async () => ({ told: true }),
    readPurchaseBooks: async ({ invoices, stock }) => {
      const found: Record<string, BookedPurchase> = {};
      for (const { id } of invoices) {
        const held = books.get(id);
        if (!held) continue;
        const { stock: record, ...rest } = held;
        found[id] = stock && record ? { ...rest, stock: record } : rest;
      }
      return found;
    },
    writePurchaseBooks: async ({ records }) => {
      for (const { id, invoiceDate: _, entry, told, stock } of records) {
        const held = { ...books.get(id) };
        if (entry !== undefined) held.entry = entry;
        if (told !== undefined) held.told = told;
        if (stock === null) delete held.stock;
        else if (stock !== undefined) held.stock = stock;
        books.set(id, held);
      }
      return { books: new Set(records.map((r) => `${r.invoiceDate}:${purchasesBookShard(r.id)}`)).size };
    },
    ...overrides,
  };
}

function start(s: ProcessScenario, options?: PurchasesSyncOptions): Promise<SyncHandle> {
  return s.start<typeof purchasesSyncWorkflow>(PURCHASES_SYNC_WORKFLOW_TYPE, `purchases-sync:${s.id}`, [
    { businessId: BUSINESS, ...(options ? { options } : {}) },
  ]);
}

const ZERO = { pages: 0, seen: 0, newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 };

/**
 * The next sync of the business, handed the previous sync's result: its first run's carry, made as the workflow makes
 * it from `workflowInfo().lastResult` (previousSync, then firstCarry at the test's `now`). Handed over here as
 * that run's carry: the test server has no schedules, and its cron chains stall the clock once a run waiting for its
 * time is terminated. The hand-over itself is tested end to end (test/purchases/sync.test.ts).
 */
async function startNextSync(
  s: ProcessScenario,
  previous: PurchasesSyncResult | Record<string, unknown>,
  name = 'next',
  options?: PurchasesSyncOptions,
): Promise<SyncHandle & { carry: PurchasesSyncCarry }> {
  const handed = previousSync(previous, BUSINESS);
  const settings = {
    windowDays: options?.windowDays ?? 7,
    horizonDays: options?.horizonDays ?? DEFAULT_PURCHASES_HORIZON_DAYS,
    sweepHours: options?.sweepHours ?? 24,
  };
  // As the workflow's first run builds it, from what the schedule would hand over.
  const carry: PurchasesSyncCarry = firstCarry(handed, settings, now);
  const handle = await s.start<typeof purchasesSyncWorkflow>(
    PURCHASES_SYNC_WORKFLOW_TYPE,
    `purchases-sync:${s.id}:${name}`,
    [{ businessId: BUSINESS, ...(options ? { options } : {}), carry }],
  );
  return Object.assign(handle, { carry: structuredClone(carry) });
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

const ofSync = (handle?: SyncHandle) => (c: { workflowId: string }) =>
  handle === undefined || c.workflowId === handle.workflowId;

const deliveredIds = (s: ProcessScenario, handle?: SyncHandle) =>
  s
    .callsOf('deliverPurchaseEvents')
    .filter(ofSync(handle))
    .map((c) => c.input.events.map((e) => e.id));

/** The listings a sync asked for, without the business and page size every one carries. */
const listings = (s: ProcessScenario, handle?: SyncHandle) =>
  s
    .callsOf('listPurchasesPage')
    .filter(ofSync(handle))
    .map(({ input: { businessId: _, pageSize: __, ...query } }) => query);

const toldOf = (s: ProcessScenario, handle?: SyncHandle) =>
  s
    .callsOf('tellStockIn')
    .filter(ofSync(handle))
    .map((c) => c.input.purchases.map((p) => `${p.id} ${p.status}`));

/** The carry each continued run of a sync was handed, read from the history of the run before it. */
async function continuedCarries(s: ProcessScenario, handle: SyncHandle): Promise<PurchasesSyncCarry[]> {
  const runs = [...new Set(s.calls.filter(ofSync(handle)).map((call) => call.runId))];
  const carries: PurchasesSyncCarry[] = [];
  for (const runId of runs.slice(0, -1)) {
    const { events } = await s.env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    const continued = events?.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)
      ?.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads?.[0];
    carries.push(defaultPayloadConverter.fromPayload<PurchasesSyncInput>(continued!).carry!);
  }
  return carries;
}

describe('purchasesSyncWorkflow', () => {
  it('without a sink (deliver: false) delivers nothing and reports no sink down, its books and counts as if delivered', async () => {
    const [a, b] = ['pur_a', 'pur_b'].map((id) => invoice(id));
    const books: Books = new Map();
    await h.run(stubs({ pages: [[a!, b!]] }, {}, books), async (s) => {
      const result = await (await start(s, { deliver: false })).result();
      expect(s.callsOf('deliverPurchaseEvents')).toEqual([]);
      expect(Object.fromEntries(books)).toEqual({
        pur_a: { entry: [a!.fingerprint, 0, 'accepted'] },
        pur_b: { entry: [b!.fingerprint, 0, 'accepted'] },
      });
      expect(result.counts).toMatchObject({ newInvoices: 2, delivered: 0, pending: 0 });
      expect(syncMetrics(s)).toMatchObject({ sinkFailures: 0, succeeded: 1 });
      const next = await (await startNextSync(s, result, 'next', { deliver: false })).result();
      expect(next.counts).toMatchObject({ seen: 2, newInvoices: 0, statusChanges: 0, pending: 0 });
    });
  });

  it('tells the stock-in of each invoice reaching or leaving confirmed once per change; a business taking none in is asked once a sync', async () => {
    const confirmed = invoice('pur_in', 'confirmed');
    const other = invoice('pur_other', 'pending_review');
    let takesStockIn = true;
    const listing: Listing = { pages: [[confirmed, other]] };
    const tellStockIn: Stubs['tellStockIn'] = async () => ({ told: takesStockIn });
    const books: Books = new Map();
    await h.run(stubs(listing, { tellStockIn }, books), async (s) => {
      const told = () => toldOf(s);
      const first = await (await start(s)).result();
      expect(told()).toEqual([['pur_in confirmed']]);
      expect(books.get('pur_in')?.told).toBe('confirmed');
      expect(books.get('pur_other')?.told).toBeUndefined();
      // The same listing again: nothing new to tell, no call.
      const again = await (await startNextSync(s, first, 'again')).result();
      expect(told()).toHaveLength(1);
      // Left confirmed: told once more, with its new status, though two passes list it (review, then the window).
      listing.pages = [[invoice('pur_in', 'pending_review'), other]];
      const backHandle = await startNextSync(s, again, 'back');
      const back = await backHandle.result();
      expect(told()).toEqual([['pur_in confirmed'], ['pur_in pending_review']]);
      expect(books.get('pur_in')?.told).toBe('pending_review');
      expect(deliveredIds(s, backHandle)).toEqual([
        [purchaseEventId('pur_in', 1, invoice('pur_in', 'pending_review').fingerprint)],
      ]);
      // Switched off: asked once, then not again in that sync (two pages), and nothing recorded as told.
      takesStockIn = false;
      listing.pages = [[invoice('pur_in', 'confirmed')], [invoice('pur_2', 'confirmed')]];
      await (await startNextSync(s, back, 'off')).result();
      expect(told()).toEqual([['pur_in confirmed'], ['pur_in pending_review'], ['pur_in confirmed']]);
      expect(books.get('pur_in')?.told).toBe('pending_review');
      expect(books.get('pur_2')?.told).toBeUndefined();
    });
  });

  it('pulls once, lists the whole horizon page by page with the cursor, reads and writes the books, and delivers each page’s new invoices once, on the workflow queue', async () => {
    const [a, b, c, d] = ['pur_a', 'pur_b', 'pur_c', 'pur_d'].map((id) => invoice(id));
    const books: Books = new Map();
    await h.run(stubs({ pages: [[a!, b!], [], [c!, d!]] }, {}, books), async (s) => {
      const handle = await start(s, { pageSize: 2 });
      const { value: result, fromMs, toMs } = await timed(s, () => handle.result());

      expect(s.calls.map((call) => call.name)).toEqual([
        'pullPurchases',
        'listPurchasesPage',
        'readPurchaseBooks',
        'deliverPurchaseEvents',
        'writePurchaseBooks',
        // An empty page: no read, no delivery, no write.
        'listPurchasesPage',
        'listPurchasesPage',
        'readPurchaseBooks',
        'deliverPurchaseEvents',
        'writePurchaseBooks',
      ]);
      expect(s.inputs('pullPurchases')).toEqual([{ businessId: BUSINESS }]);
      // A first sync: every invoice of the horizon, whatever its status.
      expect(s.inputs('listPurchasesPage')).toEqual([
        { businessId: BUSINESS, cursor: null, pageSize: 2, fromDate: horizonStart() },
        { businessId: BUSINESS, cursor: 'page-1', pageSize: 2, fromDate: horizonStart() },
        { businessId: BUSINESS, cursor: 'page-2', pageSize: 2, fromDate: horizonStart() },
      ]);
      const target = { businessId: BUSINESS, taskQueue: s.taskQueue, horizonDays: DEFAULT_PURCHASES_HORIZON_DAYS };
      const dated = (l: ListedPurchase) => ({ id: l.purchase.id, invoiceDate: l.purchase.invoiceDate });
      expect(s.inputs('readPurchaseBooks')).toEqual([
        { ...target, invoices: [a!, b!].map(dated) },
        { ...target, invoices: [c!, d!].map(dated) },
      ]);
      expect(s.inputs('deliverPurchaseEvents')).toEqual([
        { events: [received(a!), received(b!)] },
        { events: [received(c!), received(d!)] },
      ]);
      expect(s.inputs('writePurchaseBooks')).toEqual([
        { ...target, records: [a!, b!].map((l) => ({ ...dated(l), entry: [l.fingerprint, 0, 'accepted'] })) },
        { ...target, records: [c!, d!].map((l) => ({ ...dated(l), entry: [l.fingerprint, 0, 'accepted'] })) },
      ]);
      expect([...books.keys()]).toEqual(['pur_a', 'pur_b', 'pur_c', 'pur_d']);

      // The service's calls on the compliance queue behind every till; delivery and the books on the workflow queue.
      for (const call of s.calls) {
        if (call.name === 'deliverPurchaseEvents') {
          expect(call.taskQueue).toBe(s.taskQueue);
          expect(call.heartbeatTimeoutMs).toBe(15 * SECOND);
        } else if (call.name === 'readPurchaseBooks' || call.name === 'writePurchaseBooks') {
          expect(call.taskQueue, call.name).toBe(s.taskQueue);
        } else {
          expect(call.taskQueue, call.name).toBe(complianceTaskQueue(s.taskQueue));
          expect(call.priorityKey, call.name).toBe(PRIORITY.purchases);
        }
      }

      // What each invoice was stays in the books: the result hands on where the listings stand.
      expect(result).toEqual({
        businessId: BUSINESS,
        counts: { pages: 3, seen: 4, newInvoices: 4, statusChanges: 0, delivered: 4, pending: 0 },
        // The whole horizon listed: the sweep starts again at the window, complete as of this sync.
        sweep: { next: null, completedAt: expect.any(String), syncedAt: expect.any(String) },
        // None in review.
        inReview: {},
      });
      expect(result.sweep.completedAt).toBe(result.sweep.syncedAt);
      expect(Date.parse(result.sweep.syncedAt)).toBeGreaterThanOrEqual(fromMs - 5 * SECOND);
      expect(Date.parse(result.sweep.syncedAt)).toBeLessThanOrEqual(toMs);
      expect('ledger' in result).toBe(false);
      const details = await s.currentDetails(handle);
      expect(details).toContain(`**Purchases sync** of \`${BUSINESS}\`: done`);
      expect(details).toContain('| 3 | 4 | 4 | 0 | 4 | 0 |');
      expect(await handle.query(getPurchasesSyncProgressQuery)).toEqual({
        businessId: BUSINESS,
        counts: result.counts,
        cursor: null,
        sinkDown: false,
        runs: 1,
        pass: null,
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

  it('the next sync lists the review statuses, the recent window and a slice of the sweep, and delivers only what changed: a new status with the previous one, a new invoice', async () => {
    const [a, b, c, d] = ['pur_a', 'pur_b', 'pur_c', 'pur_d'].map((id) => invoice(id));
    const bRejected = invoice('pur_b', 'rejected');
    const listing: Listing = { pages: [[a!, b!, c!]] };
    const books: Books = new Map();
    // The recent window's first page waits here until the test has read the sync's progress.
    let hold: Promise<void> | undefined;
    let release = () => {};
    const base = stubs(listing, {}, books);
    const listPurchasesPage: Stubs['listPurchasesPage'] = async (query) => {
      if (query.fromDate === windowStart() && query.cursor === null) await hold;
      return base.listPurchasesPage!(query);
    };
    await h.run({ ...base, listPurchasesPage }, async (s) => {
      const first = await (await start(s)).result();
      expect(first.counts).toMatchObject({ newInvoices: 3, delivered: 3 });

      listing.pages = [[a!, bRejected], [d!]];
      hold = new Promise((resolve) => (release = resolve));
      const next = await startNextSync(s, first);
      // Between two passes, the progress says which one it lists.
      const progress = await s.waitFor(
        () => next.query(getPurchasesSyncProgressQuery),
        (p) => p.pass === 'recent',
      );
      expect(progress).toMatchObject({ runs: 1, cursor: null, sinkDown: false, counts: { pages: 2, seen: 0 } });
      release();
      const second = await next.result();

      const sweep = next.carry.passes.find((p) => p.name === 'sweep')!;
      // Back to back with the first sync: a slice sized as for 15 minutes, from the day before the window.
      expect(sweep).toEqual({ name: 'sweep', fromDate: daysAgo(15), toDate: daysAgo(8) });
      expect(listings(s, next)).toEqual([
        { cursor: null, status: 'pulled', fromDate: horizonStart() },
        { cursor: null, status: 'pending_review', fromDate: horizonStart() },
        { cursor: null, fromDate: windowStart() },
        { cursor: 'page-1', fromDate: windowStart() },
        { cursor: null, fromDate: sweep.fromDate, toDate: sweep.toDate },
      ]);
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
      // An invoice no longer listed keeps its book entry and is due nothing.
      expect(Object.fromEntries([...books].map(([id, booked]) => [id, booked.entry]))).toEqual({
        pur_a: [a!.fingerprint, 0, 'accepted'],
        pur_b: [bRejected.fingerprint, 1, 'rejected'],
        pur_c: [c!.fingerprint, 0, 'accepted'],
        pur_d: [d!.fingerprint, 0, 'accepted'],
      });
      expect(second.counts).toEqual({
        pages: 5,
        seen: 3,
        newInvoices: 1,
        statusChanges: 1,
        delivered: 2,
        pending: 0,
      });
      // The sweep moved on: the next sync's slice ends the day before this one's began.
      expect(second.sweep).toMatchObject({ next: addDays(sweep.fromDate!, -1), completedAt: first.sweep.completedAt });
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
    const books: Books = new Map();
    await h.run(stubs({ pages: [[a!, b!, c!], [d!], [e!]] }, { deliverPurchaseEvents }, books), async (s) => {
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
      // Only what reached the sink is in the books.
      expect([...books.keys()]).toEqual(['pur_a']);
      // A sink that is down does not fail the sync: one sink failure for the sync, its undelivered events pending.
      expect(syncMetrics(s)).toMatchObject({ succeeded: 1, failed: 0, delivered: 1, sinkFailures: 1, pending: 4 });

      sinkUp = true;
      const next = await startNextSync(s, first);
      const second = await next.result();
      expect(deliveredIds(s, next)).toEqual([[b, c].map((l) => received(l!).id), [received(d!).id], [received(e!).id]]);
      expect(second.counts).toMatchObject({ newInvoices: 4, delivered: 4, pending: 0 });
      expect([...books.keys()].sort()).toEqual(['pur_a', 'pur_b', 'pur_c', 'pur_d', 'pur_e']);
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
    const books: Books = new Map();
    await h.run(stubs({ pages: [[a!], [b!]] }, { deliverPurchaseEvents }, books), async (s) => {
      const handle = await start(s);
      const result = await handle.result();
      // Refused is in the delivery's non-retryable types: one attempt, whatever the failure says.
      expect(s.callsOf('deliverPurchaseEvents').map((call) => call.attempt)).toEqual([1]);
      expect(result.counts).toMatchObject({ delivered: 0, pending: 2 });
      expect(books.size).toBe(0);
      expect(s.callsOf('writePurchaseBooks')).toEqual([]);
      expect(await handle.query(getPurchasesSyncProgressQuery)).toMatchObject({ sinkDown: true });
      expect(await s.currentDetails(handle)).toContain('The sink did not take events: they wait for the next sync.');
      // One sink failure per sync, however many pages found it down.
      expect(syncMetrics(s)).toMatchObject({ succeeded: 1, failed: 0, delivered: 0, sinkFailures: 1, pending: 2 });
    });
  });

  it('a confirmed invoice older than the window, then rejected, is delivered by the sweep within sweepHours of syncs, once its slice reaches the invoice’s date', async () => {
    const old = invoice('pur_old', 'confirmed', 1160, daysAgo(100));
    const fresh = invoice('pur_fresh');
    const listing: Listing = { pages: [[fresh, old]] };
    await h.run(stubs(listing), async (s) => {
      const first = await (await start(s)).result();
      expect(deliveredIds(s).flat()).toEqual([received(fresh).id, received(old).id]);

      const rejected = invoice('pur_old', 'rejected', 1160, old.purchase.invoiceDate);
      listing.pages = [[fresh, rejected]];
      const change = purchaseEventId('pur_old', 1, rejected.fingerprint);
      // Syncs an hour apart: each slice is an hour's share of the horizon (31 days), walking back from the window.
      const syncs: Array<{ slice: ListingPass; delivered: string[]; told: string[][] }> = [];
      let previous = first;
      for (let n = 1; n <= 24 && !syncs.some((sync) => sync.delivered.includes(change)); n++) {
        now += HOUR;
        const handle = await startNextSync(s, previous, `hour-${n}`);
        previous = await handle.result();
        syncs.push({
          slice: handle.carry.passes.find((p) => p.name === 'sweep')!,
          delivered: deliveredIds(s, handle).flat(),
          told: toldOf(s, handle),
        });
      }
      const date = old.purchase.invoiceDate;
      const covers = (slice: ListingPass) => slice.fromDate! <= date && date <= slice.toDate!;
      // Delivered once, by the first slice that reached its date; not by the syncs before it (neither the review
      // passes nor the window list it); and told to the stock-in in that same sync.
      const at = syncs.findIndex((sync) => sync.delivered.includes(change));
      expect(at).toBeGreaterThanOrEqual(1);
      expect(syncs.findIndex((sync) => covers(sync.slice))).toBe(at);
      expect(syncs.slice(0, at).every((sync) => sync.delivered.length === 0 && sync.told.length === 0)).toBe(true);
      expect(syncs[at]!.delivered).toEqual([change]);
      expect(syncs[at]!.told).toEqual([['pur_old rejected']]);
      expect(previous.counts).toMatchObject({ statusChanges: 1, delivered: 1 });

      // Seen once: the sweep goes on to the horizon's end, starts again at the window, and lists the invoice again
      // within sweepHours and one more sync (the walk takes 24 slices, the window moves on a day meanwhile), delivering
      // nothing.
      let again: ListingPass | undefined;
      for (let n = 1; n <= 25 && again === undefined; n++) {
        now += HOUR;
        const handle = await startNextSync(s, previous, `again-${n}`);
        previous = await handle.result();
        const slice = handle.carry.passes.find((p) => p.name === 'sweep')!;
        if (covers(slice)) again = slice;
        expect(previous.counts).toMatchObject({ seen: covers(slice) ? 2 : 1, statusChanges: 0, delivered: 0 });
      }
      expect(again).toBeDefined();
    });
  });

  it('an invoice in review dated months ago, then confirmed, is delivered by the next sync: its date is listed again', async () => {
    const longAgo = invoice('pur_review', 'pending_review', 1160, daysAgo(150));
    const recently = invoice('pur_review_new', 'pulled', 1160, daysAgo(2));
    const listing: Listing = { pages: [[recently, longAgo]] };
    await h.run(stubs(listing), async (s) => {
      const first = await (await start(s)).result();
      expect(first.inReview).toEqual({
        [daysAgo(150)]: ['pur_review'],
        [daysAgo(2)]: ['pur_review_new'],
      });

      const confirmed = invoice('pur_review', 'confirmed', 1160, daysAgo(150));
      const confirmedToo = invoice('pur_review_new', 'confirmed', 1160, daysAgo(2));
      listing.pages = [[confirmedToo, confirmed]];
      const next = await startNextSync(s, first);
      const second = await next.result();
      // After the review statuses, the date of the invoice that left review; the recent one's date is in the window.
      expect(listings(s, next).slice(0, 4)).toEqual([
        { cursor: null, status: 'pulled', fromDate: horizonStart() },
        { cursor: null, status: 'pending_review', fromDate: horizonStart() },
        { cursor: null, fromDate: daysAgo(150), toDate: daysAgo(150) },
        { cursor: null, fromDate: windowStart() },
      ]);
      expect(listings(s, next)).toHaveLength(5);
      expect(
        s
          .callsOf('deliverPurchaseEvents')
          .filter(ofSync(next))
          .flatMap((c) => c.input.events.map((e) => [e.purchase.id, e.previousStatus, e.purchase.status])),
      ).toEqual([
        ['pur_review', 'pending_review', 'confirmed'],
        ['pur_review_new', 'pulled', 'confirmed'],
      ]);
      expect(toldOf(s, next)).toEqual([['pur_review confirmed'], ['pur_review_new confirmed']]);
      expect(second.inReview).toEqual({});

      // Listed again once: the sync after has no such pass, and nothing to deliver.
      const third = await startNextSync(s, second, 'third');
      expect((await third.result()).counts).toMatchObject({ statusChanges: 0, delivered: 0 });
      expect(listings(s, third).some((l) => l.fromDate === daysAgo(150))).toBe(false);
    });
  });

  it('a change of an invoice older than the window, left pending by a sink that refused it, is delivered by the next sync', async () => {
    const listing: Listing = { pages: [[invoice('pur_old_review', 'pending_review', 1160, daysAgo(30))]] };
    let sinkUp = true;
    const deliverPurchaseEvents: Stubs['deliverPurchaseEvents'] = async ({ events }) => {
      if (sinkUp) return { delivered: events.length };
      throw ApplicationFailure.create({
        type: PURCHASE_DELIVERY_FAILURES.refused,
        message: 'sink answered 400',
        details: [{ delivered: 0 }],
      });
    };
    await h.run(stubs(listing, { deliverPurchaseEvents }), async (s) => {
      const first = await (await start(s)).result();
      // Confirmed while the sink refuses: seen by the next sync (its date listed again), not delivered.
      listing.pages = [[invoice('pur_old_review', 'confirmed', 1160, daysAgo(30))]];
      sinkUp = false;
      now += 15 * 60_000;
      const down = await (await startNextSync(s, first, 'down')).result();
      expect(down.counts).toMatchObject({ statusChanges: 1, delivered: 0, pending: 1 });

      sinkUp = true;
      now += 15 * 60_000;
      const back = await (await startNextSync(s, down, 'back')).result();
      expect(back.counts).toMatchObject({ statusChanges: 1, delivered: 1, pending: 0 });
    });
  });

  it('moves the ledger of a 2.x result into the books: the whole horizon listed once, nothing delivered or told twice', async () => {
    const a = invoice('pur_a', 'confirmed');
    const bBefore = invoice('pur_b', 'pending_review', 1160, daysAgo(40));
    const b = invoice('pur_b', 'rejected', 1160, daysAgo(40));
    const c = invoice('pur_c', 'confirmed', 2000, daysAgo(300));
    const d = invoice('pur_d', 'accepted', 1160, daysAgo(500));
    const e = invoice('pur_e', 'confirmed', 1160, daysAgo(20));
    // What 2.x handed on: every invoice it delivered and the statuses it told; pur_e's entry is older than its book's
    // (a migration that failed half-way wrote it), pur_gone is no longer listed.
    const ledger: PurchaseLedger = {
      pur_a: [a.fingerprint, 0, 'confirmed'],
      pur_b: [bBefore.fingerprint, 1, 'pending_review'],
      pur_d: [d.fingerprint, 2, 'accepted'],
      pur_e: ['pending_review-1160', 0, 'pending_review'],
      pur_gone: ['gone-1', 0, 'pulled'],
    };
    const told = { pur_a: 'confirmed', pur_gone: 'confirmed' };
    const books: Books = new Map([['pur_e', { entry: [e.fingerprint, 1, 'confirmed'], told: 'confirmed' }]]);
    const listing: Listing = { pages: [[a, e], [b], [c, d]] };
    await h.run(stubs(listing, {}, books), async (s) => {
      const handle = await startNextSync(s, { businessId: BUSINESS, ledger, told, counts: { ...ZERO } }, 'migrating', {
        pagesPerRun: 1,
      });
      const result = await handle.result();
      // The first sync of this release lists the whole horizon once.
      expect(handle.carry.passes).toEqual([{ name: 'full', fromDate: horizonStart() }]);
      expect(deliveredIds(s, handle)).toEqual([[purchaseEventId('pur_b', 2, b.fingerprint)], [received(c).id]]);
      expect(s.callsOf('deliverPurchaseEvents')[0]!.input.events[0]).toMatchObject({
        type: 'purchase.status_changed',
        previousStatus: 'pending_review',
      });
      // pur_a was told confirmed by 2.x, pur_e by the books: only the new confirmed invoice is told.
      expect(toldOf(s, handle)).toEqual([['pur_c confirmed']]);
      expect(result.counts).toMatchObject({ pages: 3, seen: 5, newInvoices: 1, statusChanges: 1, delivered: 2 });
      expect(Object.keys(result).sort()).toEqual(['businessId', 'counts', 'inReview', 'sweep']);
      expect(Object.fromEntries(books)).toEqual({
        pur_a: { entry: [a.fingerprint, 0, 'confirmed'], told: 'confirmed' },
        pur_b: { entry: [b.fingerprint, 2, 'rejected'] },
        pur_c: { entry: [c.fingerprint, 0, 'confirmed'], told: 'confirmed' },
        pur_d: { entry: [d.fingerprint, 2, 'accepted'] },
        pur_e: { entry: [e.fingerprint, 1, 'confirmed'], told: 'confirmed' },
      });
      // Each continued run carries what of the old ledger is not in the books yet: less every page listed.
      const carried = (await continuedCarries(s, handle)).map((carry) => Object.keys(carry.migrating!.ledger).sort());
      expect(carried).toEqual([
        ['pur_b', 'pur_d', 'pur_gone'],
        ['pur_d', 'pur_gone'],
      ]);

      // The sync after reads it all from the books.
      const next = await startNextSync(s, result, 'after');
      const after = await next.result();
      expect(next.carry.migrating).toBeUndefined();
      expect(after.counts).toMatchObject({ newInvoices: 0, statusChanges: 0, delivered: 0 });
      expect(after.counts.seen).toBeGreaterThan(0);
      expect(toldOf(s, next)).toEqual([]);
      const ids = deliveredIds(s).flat();
      expect(new Set(ids).size).toBe(ids.length);
    });
  });

  it(`continues as new every ${PURCHASES_PAGES_PER_RUN} pages, carrying the cursor and the counts; it pulls only in the first run`, async () => {
    const all = Array.from({ length: 2 * PURCHASES_PAGES_PER_RUN + 3 }, (_, i) => invoice(`pur_${i}`));
    const books: Books = new Map();
    await h.run(stubs({ pages: all.map((l) => [l]) }, {}, books), async (s) => {
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
      expect(books.size).toBe(all.length);
      expect(await handle.query(getPurchasesSyncProgressQuery)).toMatchObject({ runs: 3, cursor: null, pass: null });
      expect(await s.currentDetails(handle)).toContain(
        `| ${all.length} | ${all.length} | ${all.length} | 0 | ${all.length} | 0 |`,
      );
    });
  });

  it('a later sync continued as new in the middle of a pass resumes it, with the passes and the invoices in review it carried', async () => {
    const r1 = invoice('pur_r1', 'pending_review', 1160, daysAgo(200));
    const r2 = invoice('pur_r2', 'pending_review', 1160, daysAgo(201));
    const x = invoice('pur_x', 'pending_review');
    const y = invoice('pur_y');
    const listing: Listing = { pages: [[r1], [r2], [x], [y]] };
    await h.run(stubs(listing), async (s) => {
      const first = await (await start(s)).result();
      const r2Confirmed = invoice('pur_r2', 'confirmed', 1160, daysAgo(201));
      listing.pages = [[r1], [r2Confirmed], [x], [y]];
      const next = await startNextSync(s, first, 'next', { pagesPerRun: 2 });
      const second = await next.result();

      // The listings of each run of the sync, in order.
      const listedIn: Array<ReturnType<typeof listings>> = [];
      let lastRun = '';
      for (const { runId, input } of s.callsOf('listPurchasesPage').filter(ofSync(next))) {
        if (runId !== lastRun) listedIn.push([]);
        lastRun = runId;
        const { businessId: _, pageSize: __, ...query } = input;
        listedIn.at(-1)!.push(query);
      }
      const sweep = next.carry.passes.find((p) => p.name === 'sweep')!;
      expect(listedIn).toEqual([
        [
          { cursor: null, status: 'pulled', fromDate: horizonStart() },
          { cursor: null, status: 'pending_review', fromDate: horizonStart() },
        ],
        [
          { cursor: 'page-1', status: 'pending_review', fromDate: horizonStart() },
          // Added as the review pass ended, in the second run, from what both runs found in review.
          { cursor: null, fromDate: daysAgo(201), toDate: daysAgo(201) },
        ],
        [
          { cursor: null, fromDate: windowStart() },
          { cursor: 'page-1', fromDate: windowStart() },
        ],
        [{ cursor: null, fromDate: sweep.fromDate, toDate: sweep.toDate }],
      ]);
      const carries = await continuedCarries(s, next);
      expect(carries.map((carry) => [carry.passes.map((p) => p.name), carry.pass, carry.cursor])).toEqual([
        [['pulled', 'pending_review', 'recent', 'sweep'], 1, 'page-1'],
        [['pulled', 'pending_review', 'left_review', 'recent', 'sweep'], 3, null],
        [['pulled', 'pending_review', 'left_review', 'recent', 'sweep'], 4, null],
      ]);
      expect(carries[0]!.inReview).toEqual({ before: first.inReview, now: { [daysAgo(200)]: ['pur_r1'] } });
      expect(deliveredIds(s, next)).toEqual([[purchaseEventId('pur_r2', 1, r2Confirmed.fingerprint)]]);
      expect(second.inReview).toEqual({ [daysAgo(200)]: ['pur_r1'], [daysAgo(1)]: ['pur_x'] });
      expect(second.counts).toMatchObject({ pages: 7, statusChanges: 1, delivered: 1 });
      expect(await next.query(getPurchasesSyncProgressQuery)).toMatchObject({ runs: 4, cursor: null, pass: null });
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
    [{ pagesPerRun: 0 }, 'options.pagesPerRun must be an integer from 1 to 50'],
    [{ pagesPerRun: 51 }, 'options.pagesPerRun must be an integer from 1 to 50'],
    [{ deliveryAttempts: 1.5 }, 'options.deliveryAttempts must be a positive integer'],
    [{ windowDays: -1 }, 'options.windowDays must be an integer from 0 to 366'],
    [{ windowDays: 367 }, 'options.windowDays must be an integer from 0 to 366'],
    [{ horizonDays: 7 }, 'options.horizonDays must be an integer above windowDays and at most 3660'],
    [{ windowDays: 30, horizonDays: 20 }, 'options.horizonDays must be an integer above windowDays and at most 3660'],
    [{ horizonDays: 3661 }, 'options.horizonDays must be an integer above windowDays and at most 3660'],
    [{ sweepHours: 0.005 }, 'options.sweepHours must be a number from 0.01 to 744'],
    [{ sweepHours: 745 }, 'options.sweepHours must be a number from 0.01 to 744'],
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

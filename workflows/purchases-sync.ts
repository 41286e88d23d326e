import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  continueAsNew,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  PURCHASES_PAGE_SIZE,
  PURCHASES_PAGES_PER_RUN,
  PURCHASE_DELIVERY_FAILURES,
  deliveredOf,
  getPurchasesSyncProgressQuery,
  type ListPurchasesPageResult as PurchasesSyncPage,
  type ListingPass,
  type PurchasesSyncCarry,
  type PurchasesSyncInput,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../src/contracts/purchases-sync.js';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from './activity-options.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { count, failsTheWorkflow, setGauge } from './metrics.js';
import { placeOnBudget, type CallRoute } from './placement.js';
import { DEFAULT_PURCHASES_HORIZON_DAYS, type BookedPurchase } from '../src/contracts/purchases-book.js';
import {
  IN_REVIEW,
  MIN_SWEEP_HOURS,
  bookWrites,
  diffPage,
  firstCarry,
  leftReview,
  noteInReview,
  notePending,
  previousSync,
  type DueEvent,
} from './purchases-sync/ledger.js';
import { toTell } from './purchases-sync/stock-in.js';

/**
 * An invoice in review is the review passes' (they come first): the later passes, by date, leave it out rather than see
 * it twice in one sync. One that left review since shows here in its new status.
 */
function listedOnce(pass: ListingPass['name'], purchases: PurchasesSyncPage['purchases']) {
  if (pass === 'pulled' || pass === 'pending_review' || pass === 'full') return purchases;
  return purchases.filter(({ purchase }) => !IN_REVIEW.has(purchase.status));
}

/** One sync (docs/purchases-sync.md). Its end counted once, by its last run: succeeded in `finished`, failed here. */
export async function purchasesSyncWorkflow(input: PurchasesSyncInput): Promise<PurchasesSyncResult> {
  try {
    return await syncRun(input);
  } catch (err) {
    if (failsTheWorkflow(err)) count('etims_purchases_syncs', { business_id: input.businessId, outcome: 'failed' });
    throw err;
  }
}

async function syncRun(input: PurchasesSyncInput): Promise<PurchasesSyncResult> {
  const { businessId } = input;
  const business = { business_id: businessId };
  const settings = settingsOf(input.options);
  const { taskQueue } = workflowInfo();
  // What a run carries to the next: where the listings stand. What each invoice was lives in the books.
  const state: PurchasesSyncCarry =
    input.carry ?? firstCarry(previousSync(workflowInfo().lastResult, businessId), settings, Date.now());
  const { counts } = state;
  setHandler(getPurchasesSyncProgressQuery, () => {
    const { cursor, sinkDown, runs } = state;
    return { businessId, counts, cursor, sinkDown, runs, pass: state.passes[state.pass]?.name ?? null };
  });
  const show = (phase: string) =>
    setCurrentDetails(
      [
        `**Purchases sync** of \`${businessId}\`: ${phase}`,
        '',
        '| pages | invoices seen | new | status changes | delivered | pending |',
        '|---|---|---|---|---|---|',
        `| ${counts.pages} | ${counts.seen} | ${counts.newInvoices} | ` +
          `${counts.statusChanges} | ${counts.delivered} | ${counts.pending} |`,
        ...(state.sinkDown ? ['', 'The sink did not take events: they wait for the next sync.'] : []),
      ].join('\n'),
    );
  show(state.runs > 1 ? `continuing (run ${state.runs})` : 'pulling');
  const route = await placeOnBudget(businessId, false);
  const api = purchasesSyncActivities(route, settings);
  const books = { businessId, taskQueue, horizonDays: settings.horizonDays };

  /** The first `n` of the due events reached the sink; the rest wait for the next sync. */
  const delivered = (due: readonly DueEvent[], n: number): DueEvent[] => {
    counts.delivered += n;
    counts.pending += due.length - n;
    const pending = (state.pending ??= { now: {}, overflow: false });
    if (!pending.overflow && !notePending(pending.now, due.slice(n))) pending.overflow = true;
    if (n > 0) count('etims_purchase_events_delivered', business, n);
    return due.slice(0, n);
  };
  /** A sink that is down does not fail the sync: after a few minutes' retries, the next sync sends the rest. */
  async function deliver(due: DueEvent[]): Promise<DueEvent[]> {
    if (due.length === 0) return [];
    // No sink: the books still mirror what the service lists, so the counts stay true; nothing is pending.
    if (input.options?.deliver === false) return due;
    if (state.sinkDown) return delivered(due, 0);
    let n: number;
    try {
      n = (await api.sink.deliverPurchaseEvents({ events: due.map((d) => d.event) })).delivered;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      n = deliveredBefore(err, due.length);
      // Counted once a sync: once down, the sink is not called again until the next sync (the flag is carried).
      state.sinkDown = true;
      count('etims_purchases_sink_failures', business);
      log.warn('purchase events not delivered; the next sync delivers them', {
        businessId,
        delivered: n,
        pending: due.length - n,
        error: err.cause?.message ?? err.message,
      });
    }
    return delivered(due, n);
  }

  /** Invoices reaching or leaving `confirmed`, to the business's stock-in (when its settings switch it on). */
  async function tellStockIn(
    listed: PurchasesSyncPage['purchases'],
    toldBefore: Readonly<Record<string, string>>,
  ): Promise<Record<string, string>> {
    if (state.stockInOff) return {};
    const purchases = toTell(listed, toldBefore);
    if (purchases.length === 0) return {};
    // The stock-in is told once it has passed on what it was told before: a first sync goes at the ledgers' pace.
    let answer = await api.stockIn.tellStockIn({ businessId, purchases, taskQueue });
    while (answer.busy) answer = await api.stockIn.tellStockIn({ businessId, purchases, taskQueue });
    if (!answer.told) {
      state.stockInOff = true;
      return {};
    }
    return Object.fromEntries(purchases.map((p) => [p.id, p.status]));
  }

  // The service fetches the latest invoices from the authority once a sync: a continued run does not again.
  if (!state.pulled) {
    await api.compliance.pullPurchases({ businessId });
    state.pulled = true;
  }
  for (let pagesThisRun = 1; state.pass < state.passes.length; pagesThisRun++) {
    const { name, ...query } = state.passes[state.pass]!;
    const page = await api.compliance.listPurchasesPage({
      businessId,
      cursor: state.cursor,
      pageSize: settings.pageSize,
      ...query,
    });
    counts.pages++;
    const listed = listedOnce(name, page.purchases);
    const booked: Record<string, BookedPurchase> =
      listed.length === 0
        ? {}
        : await api.books.readPurchaseBooks({
            ...books,
            invoices: listed.map(({ purchase: { id, invoiceDate } }) => ({ id, invoiceDate })),
          });
    const migrating = state.migrating;
    const diff = diffPage(businessId, listed, (id) => booked[id]?.entry ?? migrating?.ledger[id]);
    counts.seen += diff.seen;
    counts.newInvoices += diff.newInvoices;
    counts.statusChanges += diff.statusChanges;
    const sent = await deliver(diff.due);
    const toldBefore: Record<string, string> = {};
    for (const { purchase } of listed) {
      const told = booked[purchase.id]?.told ?? migrating?.told[purchase.id];
      if (told !== undefined) toldBefore[purchase.id] = told;
    }
    const toldNow = await tellStockIn(listed, toldBefore);
    const writes = bookWrites(listed, booked, sent, toldNow, migrating);
    if (writes.length > 0) await api.books.writePurchaseBooks({ ...books, records: writes });
    if (migrating)
      for (const { purchase } of listed) {
        delete migrating.ledger[purchase.id];
        delete migrating.told[purchase.id];
      }
    const pass = state.passes[state.pass]!;
    if (pass.name === 'pulled' || pass.name === 'pending_review' || pass.name === 'full')
      noteInReview(state.inReview.now, listed);
    state.cursor = page.nextCursor;
    if (state.cursor === null) {
      state.pass++;
      // Review listed whole: what left it since the last sync is listed again by its date.
      if (pass.name === 'pending_review') {
        const covered = state.passes.filter((p) => p.name === 'recent' || p.name === 'sweep' || p.name === 'pending');
        const listedAnyway = (date: string) =>
          covered.some((p) => (p.fromDate ?? '') <= date && date <= (p.toDate ?? '9999-12-31'));
        state.passes.splice(state.pass, 0, ...leftReview(state.inReview.before, state.inReview.now, listedAnyway));
      }
    }
    const next = state.passes[state.pass];
    show(next === undefined ? 'done' : `listing ${next.name} (page ${counts.pages + 1} next)`);
    if (next !== undefined && (pagesThisRun >= settings.pagesPerRun || workflowInfo().continueAsNewSuggested))
      await continueAsNew<typeof purchasesSyncWorkflow>({ ...input, carry: { ...state, runs: state.runs + 1 } });
  }
  log.info('purchases sync done', { businessId, ...counts });
  count('etims_purchases_syncs', { ...business, outcome: 'succeeded' });
  // The workflow's clock: the same on a replay, and no later than the sync really ended.
  setGauge('etims_purchases_sync_last_success_timestamp_seconds', Date.now() / 1000, business);
  setGauge('etims_purchase_events_pending', counts.pending, business);
  const pending = state.pending;
  return {
    businessId,
    counts,
    sweep: state.sweep,
    inReview: state.inReview.now,
    ...(pending && Object.keys(pending.now).length > 0 ? { pending: pending.now } : {}),
    ...(pending?.overflow ? { pendingOverflow: true } : {}),
  };
}

function settingsOf(options: PurchasesSyncOptions = {}) {
  const pageSize = options.pageSize ?? PURCHASES_PAGE_SIZE;
  const pagesPerRun = options.pagesPerRun ?? PURCHASES_PAGES_PER_RUN;
  const deliveryAttempts = options.deliveryAttempts ?? 8;
  const wrong = (field: string, rule: string) =>
    ApplicationFailure.create({ type: 'invalid_request', message: `options.${field} ${rule}`, nonRetryable: true });
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
    throw wrong('pageSize', 'must be an integer from 1 to 100');
  if (!Number.isInteger(pagesPerRun) || pagesPerRun < 1 || pagesPerRun > 50)
    throw wrong('pagesPerRun', 'must be an integer from 1 to 50');
  if (!Number.isInteger(deliveryAttempts) || deliveryAttempts < 1)
    throw wrong('deliveryAttempts', 'must be a positive integer');
  const windowDays = options.windowDays ?? 7;
  const horizonDays = options.horizonDays ?? DEFAULT_PURCHASES_HORIZON_DAYS;
  const sweepHours = options.sweepHours ?? 24;
  if (!Number.isInteger(windowDays) || windowDays < 0 || windowDays > 366)
    throw wrong('windowDays', 'must be an integer from 0 to 366');
  if (!Number.isInteger(horizonDays) || horizonDays <= windowDays || horizonDays > 3_660)
    throw wrong('horizonDays', 'must be an integer above windowDays and at most 3660');
  if (typeof sweepHours !== 'number' || !(sweepHours >= MIN_SWEEP_HOURS && sweepHours <= 24 * 31))
    throw wrong('sweepHours', `must be a number from ${MIN_SWEEP_HOURS} to 744`);
  return {
    pageSize,
    pagesPerRun,
    deliveryAttempts,
    deliveryRetryInterval: options.deliveryRetryInterval ?? '1 second',
    windowDays,
    horizonDays,
    sweepHours,
  };
}

function purchasesSyncActivities({ complianceQueue, fairnessKey }: CallRoute, settings: ReturnType<typeof settingsOf>) {
  return {
    compliance: proxyActivities<ActivitiesOn<'compliance'>>({
      taskQueue: complianceQueue,
      startToCloseTimeout: '60 seconds',
      // A call heartbeats while it waits: one lost with a killed worker is sent again in seconds, not a minute.
      heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
      // No overall limit: an outage or a budget the tills take is waited out, never a failed sync.
      retry: API_RETRY,
      priority: { priorityKey: PRIORITY.purchases, fairnessKey },
    }),
    // Telling the stock-in is a signal, the books are updates: Temporal, not the service. Retried until done: our own
    // outage is waited out.
    // Waits, heartbeating, while the stock-in passes on what it was told (STOCK_PACE.waitMs at most an attempt).
    stockIn: proxyActivities<ActivitiesOn<'workflow'>>({
      startToCloseTimeout: '6 minutes',
      heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
      retry: API_RETRY,
    }),
    books: proxyActivities<ActivitiesOn<'workflow'>>({
      startToCloseTimeout: '60 seconds',
      heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
      retry: API_RETRY,
    }),
    // Delivery spends none of the compliance budget: it runs on the workflow queue.
    sink: proxyActivities<ActivitiesOn<'workflow'>>({
      startToCloseTimeout: '10 minutes',
      // Above the sink's 10 s per event; heartbeats (throttled to 0.8 × this) carry the resume point.
      heartbeatTimeout: '15 seconds',
      retry: {
        initialInterval: settings.deliveryRetryInterval,
        backoffCoefficient: 2,
        maximumInterval: '30 seconds',
        maximumAttempts: settings.deliveryAttempts,
        nonRetryableErrorTypes: [PURCHASE_DELIVERY_FAILURES.refused, PURCHASE_DELIVERY_FAILURES.notConfigured],
      },
    }),
  };
}

/** How many events a failed delivery had delivered, from its failure's details or its last heartbeat. */
function deliveredBefore(err: ActivityFailure, total: number): number {
  let delivered = 0;
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 3 && cause; depth++) {
    if (cause instanceof ApplicationFailure) delivered = Math.max(delivered, deliveredOf(cause.details?.[0], total));
    if (cause instanceof TimeoutFailure)
      delivered = Math.max(delivered, deliveredOf(cause.lastHeartbeatDetails, total));
    cause = (cause as { cause?: unknown }).cause;
  }
  return delivered;
}

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
  type PurchasesSyncCarry,
  type PurchasesSyncInput,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../src/contracts/purchases-sync.js';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from './activity-options.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { count, failsTheWorkflow, setGauge } from './metrics.js';
import { placeOnBudget, type CallRoute } from './placement.js';
import { diffPage, previousLedger, recordDelivered, type DueEvent } from './purchases-sync/ledger.js';
import { previousTold, toTell } from './purchases-sync/stock-in.js';

/** Ledgers beyond this many invoices approach the 2 MB limit of one payload (about 40 bytes an invoice). */
const LEDGER_WARNING_SIZE = 25_000;

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
  // What a run carries to the next. Schedules hand the previous completion's result to the next action: the ledger
  // needs no store of its own.
  const state: PurchasesSyncCarry = input.carry ?? {
    pulled: false,
    cursor: null,
    previous: previousLedger(workflowInfo().lastResult, businessId),
    ledger: {},
    counts: { pages: 0, seen: 0, newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 },
    sinkDown: false,
    runs: 1,
    told: previousTold(workflowInfo().lastResult, businessId),
  };
  const { counts } = state;
  setHandler(getPurchasesSyncProgressQuery, () => {
    const { cursor, sinkDown, runs } = state;
    return { businessId, counts, cursor, sinkDown, runs };
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

  /** The first `delivered` of the due events reached the sink; the rest wait for the next sync. */
  const delivered = (due: readonly DueEvent[], n: number) => {
    recordDelivered(state.ledger, due, n);
    counts.delivered += n;
    counts.pending += due.length - n;
    if (n > 0) count('etims_purchase_events_delivered', business, n);
  };
  /** A sink that is down does not fail the sync: after a few minutes' retries, the next sync sends the rest. */
  async function deliver(due: DueEvent[]): Promise<void> {
    if (due.length === 0) return;
    // No sink: the ledger still mirrors what the service lists, so the counts stay true; nothing is pending.
    if (input.options?.deliver === false) return recordDelivered(state.ledger, due, due.length);
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
    delivered(due, n);
  }

  /** Invoices reaching or leaving `confirmed`, to the business's stock-in (when its settings switch it on). */
  async function tellStockIn(listed: PurchasesSyncPage['purchases']): Promise<void> {
    if (state.stockInOff) return;
    const told = (state.told ??= {});
    const purchases = toTell(listed, told);
    if (purchases.length === 0) return;
    const answer = await api.stockIn.tellStockIn({ businessId, purchases, taskQueue: workflowInfo().taskQueue });
    if (!answer.told) {
      state.stockInOff = true;
      return;
    }
    for (const p of purchases) told[p.id] = p.status;
  }

  // The service fetches the latest invoices from the authority once a sync: a continued run does not again.
  if (!state.pulled) {
    await api.compliance.pullPurchases({ businessId });
    state.pulled = true;
  }
  for (let pagesThisRun = 1; ; pagesThisRun++) {
    const page = await api.compliance.listPurchasesPage({
      businessId,
      cursor: state.cursor,
      pageSize: settings.pageSize,
    });
    counts.pages++;
    const diff = diffPage(businessId, page.purchases, state.previous, state.ledger);
    counts.seen += diff.seen;
    counts.newInvoices += diff.newInvoices;
    counts.statusChanges += diff.statusChanges;
    await deliver(diff.due);
    await tellStockIn(page.purchases);
    state.cursor = page.nextCursor;
    show(state.cursor === null ? 'done' : `listing (page ${counts.pages + 1} next)`);
    if (page.nextCursor === null) {
      const size = Object.keys(state.ledger).length;
      if (size > LEDGER_WARNING_SIZE)
        log.warn('the purchases ledger is large; payloads are limited to 2 MB', { businessId, invoices: size });
      log.info('purchases sync done', { businessId, ...counts });
      count('etims_purchases_syncs', { ...business, outcome: 'succeeded' });
      // The workflow's clock: the same on a replay, and no later than the sync really ended.
      setGauge('etims_purchases_sync_last_success_timestamp_seconds', Date.now() / 1000, business);
      setGauge('etims_purchase_events_pending', counts.pending, business);
      // Invoices of `previous` not listed any more are dropped: the ledger mirrors what the service lists.
      return { businessId, ledger: state.ledger, counts, told: state.told ?? {} };
    }
    if (pagesThisRun >= settings.pagesPerRun || workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof purchasesSyncWorkflow>({ ...input, carry: { ...state, runs: state.runs + 1 } });
  }
}

function settingsOf(options: PurchasesSyncOptions = {}) {
  const pageSize = options.pageSize ?? PURCHASES_PAGE_SIZE;
  const pagesPerRun = options.pagesPerRun ?? PURCHASES_PAGES_PER_RUN;
  const deliveryAttempts = options.deliveryAttempts ?? 8;
  const wrong = (field: string, rule: string) =>
    ApplicationFailure.create({ type: 'invalid_request', message: `options.${field} ${rule}`, nonRetryable: true });
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
    throw wrong('pageSize', 'must be an integer from 1 to 100');
  if (!Number.isInteger(pagesPerRun) || pagesPerRun < 1) throw wrong('pagesPerRun', 'must be a positive integer');
  if (!Number.isInteger(deliveryAttempts) || deliveryAttempts < 1)
    throw wrong('deliveryAttempts', 'must be a positive integer');
  return {
    pageSize,
    pagesPerRun,
    deliveryAttempts,
    deliveryRetryInterval: options.deliveryRetryInterval ?? '1 second',
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
    // Telling the stock-in is a signal: Temporal, not the service. Retried until told: our own outage is waited out.
    stockIn: proxyActivities<ActivitiesOn<'workflow'>>({ startToCloseTimeout: '30 seconds', retry: API_RETRY }),
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

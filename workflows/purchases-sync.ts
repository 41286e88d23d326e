import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  continueAsNew,
  log,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { PRIORITY, apiActivities, budgetShare, routedActivities } from './activity-options.js';
import { diffPage, previousLedger, recordDelivered, type DueEvent } from './purchases-ledger.js';
import {
  PURCHASES_PAGE_SIZE,
  PURCHASES_PAGES_PER_RUN,
  PURCHASE_DELIVERY_FAILURES,
  getPurchasesSyncProgressQuery,
  type DeliveryProgress,
  type PurchasesSyncCarry,
  type PurchasesSyncInput,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../src/contracts/purchases-sync.js';

const DEFAULT_DELIVERY_ATTEMPTS = 8;
/** Ledgers beyond this many invoices approach the 2 MB limit of one payload (about 40 bytes an invoice). */
const LEDGER_WARNING_SIZE = 25_000;

interface Settings {
  pageSize: number;
  pagesPerRun: number;
  deliveryAttempts: number;
  deliveryRetryInterval: string;
}

function settings(options: PurchasesSyncOptions = {}): Settings {
  const pageSize = options.pageSize ?? PURCHASES_PAGE_SIZE;
  const pagesPerRun = options.pagesPerRun ?? PURCHASES_PAGES_PER_RUN;
  const deliveryAttempts = options.deliveryAttempts ?? DEFAULT_DELIVERY_ATTEMPTS;
  const wrong = (field: string, rule: string) =>
    ApplicationFailure.create({ type: 'invalid_request', message: `options.${field} ${rule}`, nonRetryable: true });
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw wrong('pageSize', 'must be an integer from 1 to 100');
  if (!Number.isInteger(pagesPerRun) || pagesPerRun < 1) throw wrong('pagesPerRun', 'must be a positive integer');
  if (!Number.isInteger(deliveryAttempts) || deliveryAttempts < 1) throw wrong('deliveryAttempts', 'must be a positive integer');
  return { pageSize, pagesPerRun, deliveryAttempts, deliveryRetryInterval: options.deliveryRetryInterval ?? '1 second' };
}

function freshCarry(businessId: string): PurchasesSyncCarry {
  return {
    pulled: false,
    cursor: null,
    // Temporal Schedules hand the previous completion's result to the next action (verified on the dev server:
    // interval and trigger() with a non-ALLOW_ALL overlap policy, the result of a continued-as-new chain's last
    // run, kept across a failed run); the ledger needs no store of its own.
    previous: previousLedger(workflowInfo().lastResult, businessId),
    ledger: {},
    counts: { apiCalls: 0, pages: 0, seen: 0, newInvoices: 0, statusChanges: 0, delivered: 0, pending: 0 },
    sinkDown: false,
    runs: 1,
  };
}

/** How many events a failed delivery had delivered, from its failure's details or its last heartbeat. */
function deliveredBefore(err: ActivityFailure, total: number): number {
  const counts: unknown[] = [];
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 3 && cause; depth++) {
    if (cause instanceof ApplicationFailure) counts.push((cause.details?.[0] as Partial<DeliveryProgress> | undefined)?.delivered);
    if (cause instanceof TimeoutFailure) counts.push((cause.lastHeartbeatDetails as Partial<DeliveryProgress> | undefined)?.delivered);
    cause = (cause as { cause?: unknown }).cause;
  }
  const valid = counts.filter((n): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= total);
  return valid.length > 0 ? Math.max(...valid) : 0;
}

/**
 * One sync of a business's supplier invoices, started by its Temporal Schedule (or on demand through it): one
 * pull, then the whole list, page by page with the cursor; every invoice not yet delivered, and every change of
 * status, confirmation error or totals, goes to the business's sink as an event with a stable id. API calls per
 * sync: 1 + ceil(invoices / page size), plus retried attempts, all counted in the result.
 *
 * Long listings continue as new every `pagesPerRun` pages (see PURCHASES_PAGES_PER_RUN) rather than running in
 * one activity that heartbeats its cursor: each page stays its own activity, so it is its own request against
 * the fleet's rate budget at the sync's low priority, and a till sale can go between any two pages.
 *
 * A sink that is down does not fail the sync: the batch is retried for a few minutes, then the rest of this
 * sync's events are counted `pending` and the ledger keeps what was delivered, so the next sync sends them.
 */
export async function purchasesSyncWorkflow(input: PurchasesSyncInput): Promise<PurchasesSyncResult> {
  const { businessId } = input;
  const config = settings(input.options);
  const state = input.carry ?? freshCarry(businessId);
  const { counts } = state;

  setHandler(getPurchasesSyncProgressQuery, () => ({ businessId, counts, cursor: state.cursor, sinkDown: state.sinkDown, runs: state.runs }));

  const showProgress = (phase: string) =>
    setCurrentDetails(
      [
        `**Purchases sync** of \`${businessId}\`: ${phase}`,
        '',
        '| API calls | pages | invoices seen | new | status changes | delivered | pending |',
        '|---|---|---|---|---|---|---|',
        `| ${counts.apiCalls} | ${counts.pages} | ${counts.seen} | ${counts.newInvoices} | ${counts.statusChanges} | ${counts.delivered} | ${counts.pending} |`,
        ...(state.sinkDown ? ['', 'The sink did not take events: they wait for the next sync.'] : []),
      ].join('\n'),
    );

  // Every call of the sync is one activity on the rate-limited compliance queue, behind any till's sale.
  const api = apiActivities(budgetShare(PRIORITY.purchases, businessId), '30 minutes');
  // Delivery spends none of the compliance budget: it runs on the workflow queue.
  const { deliverPurchaseEvents } = routedActivities({
    startToCloseTimeout: '10 minutes',
    // Above the sink's 10 s per event; heartbeats (throttled to 0.8 × this) carry the resume point.
    heartbeatTimeout: '15 seconds',
    retry: {
      initialInterval: config.deliveryRetryInterval,
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: config.deliveryAttempts,
      nonRetryableErrorTypes: [PURCHASE_DELIVERY_FAILURES.refused, PURCHASE_DELIVERY_FAILURES.notConfigured],
    },
  });

  const deliver = async (due: DueEvent[]) => {
    if (due.length === 0) return;
    if (state.sinkDown) {
      counts.pending += due.length;
      return;
    }
    let delivered: number;
    try {
      delivered = (await deliverPurchaseEvents({ events: due.map((d) => d.event) })).delivered;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      delivered = deliveredBefore(err, due.length);
      state.sinkDown = true;
      log.warn('purchase events not delivered; the next sync delivers them', { businessId, delivered, pending: due.length - delivered, error: err.cause?.message ?? err.message });
    }
    recordDelivered(state.ledger, due, delivered);
    counts.delivered += delivered;
    counts.pending += due.length - delivered;
  };

  showProgress(state.runs > 1 ? `continuing (run ${state.runs})` : 'pulling');
  if (!state.pulled) {
    counts.apiCalls += (await api.pullPurchases({ businessId })).apiCalls;
    state.pulled = true;
  }
  for (let pagesThisRun = 0; ; ) {
    const page = await api.listPurchasesPage({ businessId, cursor: state.cursor, pageSize: config.pageSize });
    counts.apiCalls += page.apiCalls;
    counts.pages++;
    pagesThisRun++;
    const diff = diffPage(businessId, page.purchases, state.previous, state.ledger);
    counts.seen += diff.seen;
    counts.newInvoices += diff.newInvoices;
    counts.statusChanges += diff.statusChanges;
    await deliver(diff.due);
    state.cursor = page.nextCursor;
    showProgress(state.cursor === null ? 'done' : `listing (page ${counts.pages + 1} next)`);
    if (state.cursor === null) break;
    if (pagesThisRun >= config.pagesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof purchasesSyncWorkflow>({ ...input, carry: { ...state, runs: state.runs + 1 } });
    }
  }

  const size = Object.keys(state.ledger).length;
  if (size > LEDGER_WARNING_SIZE) log.warn('the purchases ledger is large; payloads are limited to 2 MB', { businessId, invoices: size });
  log.info('purchases sync done', { businessId, ...counts });
  // Invoices of `previous` not listed any more are dropped: the ledger mirrors what the service lists.
  return { businessId, ledger: state.ledger, counts };
}

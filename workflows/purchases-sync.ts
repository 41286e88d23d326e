import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  PURCHASES_PAGE_SIZE,
  PURCHASES_PAGES_PER_RUN,
  PURCHASE_DELIVERY_FAILURES,
  getPurchasesSyncProgressQuery,
  type DeliveryProgress,
  type PurchasesSyncInput,
  type PurchasesSyncOptions,
  type PurchasesSyncResult,
} from '../src/contracts/purchases-sync.js';
import { API_RETRY, type ActivitiesOn } from './activity-options.js';
import { PRIORITY } from '../src/contracts/priority.js';
import { count, failsTheWorkflow } from './metrics.js';
import { placeOnBudget, type CallRoute } from './placement.js';
import type { DueEvent } from './purchases-sync/ledger.js';
import { PurchasesSyncRecord } from './purchases-sync/record.js';

/** Ledgers beyond this many invoices approach the 2 MB limit of one payload (about 40 bytes an invoice). */
const LEDGER_WARNING_SIZE = 25_000;

interface PurchasesSync {
  input: PurchasesSyncInput;
  settings: ReturnType<typeof settingsOf>;
  record: PurchasesSyncRecord;
  api: ReturnType<typeof purchasesSyncActivities>;
}

/**
 * One sync of a business's supplier invoices (docs/purchases-sync.md): one pull, then a page per activity so a till's
 * sale can go between any two. Its end is counted once, by its last run (succeeded in record.finished, failed here).
 */
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
  const settings = settingsOf(input.options);
  const record = new PurchasesSyncRecord(businessId, input.carry);
  setHandler(getPurchasesSyncProgressQuery, () => record.progress());
  record.show(record.state.runs > 1 ? `continuing (run ${record.state.runs})` : 'pulling');
  const route = await placeOnBudget(businessId, false);
  const sync: PurchasesSync = { input, settings, record, api: purchasesSyncActivities(route, settings) };
  // The service fetches the latest invoices from the authority once a sync: a continued run does not again.
  if (!record.state.pulled) {
    await sync.api.compliance.pullPurchases({ businessId });
    record.pulled();
  }
  for (let pagesThisRun = 1; ; pagesThisRun++) {
    const page = await sync.api.compliance.listPurchasesPage({
      businessId,
      cursor: record.state.cursor,
      pageSize: settings.pageSize,
    });
    await deliver(sync, record.compared(page));
    record.advanced(page.nextCursor);
    if (page.nextCursor === null) {
      const size = Object.keys(record.state.ledger).length;
      if (size > LEDGER_WARNING_SIZE)
        log.warn('the purchases ledger is large; payloads are limited to 2 MB', { businessId, invoices: size });
      log.info('purchases sync done', { businessId, ...record.state.counts });
      // Invoices of `previous` not listed any more are dropped: the ledger mirrors what the service lists.
      return record.finished();
    }
    if (pagesThisRun >= settings.pagesPerRun || workflowInfo().continueAsNewSuggested)
      await continueAsNew<typeof purchasesSyncWorkflow>({ ...input, carry: record.nextRun() });
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
      // No overall limit: an outage or a budget the tills take is waited out, never a failed sync.
      retry: API_RETRY,
      priority: { priorityKey: PRIORITY.purchases, fairnessKey },
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

/** A sink that is down does not fail the sync: after a few minutes' retries, the next sync sends the rest. */
async function deliver({ input, record, api }: PurchasesSync, due: DueEvent[]): Promise<void> {
  if (due.length === 0) return;
  if (record.state.sinkDown) return record.delivered(due, 0);
  let delivered: number;
  try {
    delivered = (await api.sink.deliverPurchaseEvents({ events: due.map((d) => d.event) })).delivered;
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    delivered = deliveredBefore(err, due.length);
    record.sinkWentDown();
    log.warn('purchase events not delivered; the next sync delivers them', {
      businessId: input.businessId,
      delivered,
      pending: due.length - delivered,
      error: err.cause?.message ?? err.message,
    });
  }
  record.delivered(due, delivered);
}

/** How many events a failed delivery had delivered, from its failure's details or its last heartbeat. */
function deliveredBefore(err: ActivityFailure, total: number): number {
  const counts: unknown[] = [];
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 3 && cause; depth++) {
    if (cause instanceof ApplicationFailure)
      counts.push((cause.details?.[0] as Partial<DeliveryProgress> | undefined)?.delivered);
    if (cause instanceof TimeoutFailure)
      counts.push((cause.lastHeartbeatDetails as Partial<DeliveryProgress> | undefined)?.delivered);
    cause = (cause as { cause?: unknown }).cause;
  }
  const valid = counts.filter((n): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= total);
  return valid.length > 0 ? Math.max(...valid) : 0;
}

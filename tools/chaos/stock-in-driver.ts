/**
 * The dashboard and the merchant's office of a chaos run, for stock that comes in: hands the planned supplier
 * invoices to the sandbox's tax authority, waits for the stock-ins to take in those that arrived confirmed before the
 * faults start, reviews each invoice at its planned times (as a person on the dashboard would), and asks for purchases
 * syncs at others, on top of the schedules' own. Every call goes into the operation history.
 */
import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { syncPurchasesNow } from '../../src/client/purchases.js';
import { purchasesScheduleId } from '../../src/contracts/purchases-sync.js';
import type { SandboxInspector } from '../../sandbox/inspector.js';
import type { OperationHistory } from './history.js';
import { readStockIns, untold } from './stock-ins.js';
import { purchaseFixture, type PlannedInvoice, type PlannedReview, type StockInPlan } from './supplier-invoices.js';

/** Before the faults, a sync is asked this often while a stock-in has not taken in what arrived confirmed. */
const SYNC_BEFORE_FAULTS_EVERY_MS = 5_000;

/** The invoices wait at the authority, fetched by each business's next pull. */
export async function handInvoices(inspector: SandboxInspector, plan: StockInPlan): Promise<void> {
  for (const invoice of plan.invoices) await inspector.addPurchase(invoice.businessId, purchaseFixture(invoice));
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : String(err);
}

/** The sandbox's inspection API is in this process and never faulted: a review answers at once. */
export async function review(
  inspector: SandboxInspector,
  history: OperationHistory,
  invoice: PlannedInvoice,
  next: PlannedReview,
): Promise<void> {
  const op = history.begin({
    kind: 'review',
    sale: null,
    workflowId: invoice.purchaseId,
    businessId: invoice.businessId,
    traderInvoiceNumber: null,
    status: next.status,
  });
  op.attempts = 1;
  try {
    const answer = await inspector.reviewPurchase(invoice.purchaseId, next.status);
    history.end(op, 'ok', `${answer.purchase.status} (${answer.visible ? 'listed' : 'not pulled yet'})`);
  } catch (err) {
    history.end(op, 'failed', describe(err));
  }
}

/**
 * Not waited for: the sync runs as a scheduled one does. Asked while the server restarts, it fails and is not asked
 * again: the schedule's next sync, or the next one asked, lists the same invoices.
 */
export async function askSync(client: Client, history: OperationHistory, businessId: string): Promise<void> {
  const op = history.begin({
    kind: 'syncPurchases',
    sale: null,
    workflowId: purchasesScheduleId(businessId),
    businessId,
    traderInvoiceNumber: null,
  });
  op.attempts = 1;
  try {
    await syncPurchasesNow(client, businessId);
    history.end(op, 'ok', 'requested');
  } catch (err) {
    history.end(op, 'failed', describe(err));
  }
}

/**
 * After the faults: a sync of every business taking stock in every `everyMs` until stopped, so each hears the last
 * review of its invoices however the syncs during the faults went.
 */
export function syncUntilStopped(
  client: Client,
  history: OperationHistory,
  businessIds: readonly string[],
  everyMs: number,
): { stop: () => void } {
  const ask = () => {
    for (const businessId of businessIds) void askSync(client, history, businessId);
  };
  ask();
  const timer = setInterval(ask, everyMs);
  return { stop: () => clearInterval(timer) };
}

const ARRIVALS_POLL_MS = 1_000;

/**
 * Before the faults: until the stock-ins hold every invoice that arrived confirmed (or `timeoutMs` passes), a sync of
 * each business now and then. Returns how long it took, or null when they did not in time: the run goes on, and those
 * invoices are taken in under the faults instead.
 */
export async function awaitArrivals(
  client: Client,
  inspector: SandboxInspector,
  history: OperationHistory,
  plan: StockInPlan,
  timeoutMs: number,
): Promise<number | null> {
  const started = Date.now();
  const businesses = [...new Set(plan.invoices.filter((i) => i.arrives === 'confirmed').map((i) => i.businessId))];
  if (businesses.length === 0) return 0;
  const syncs = syncUntilStopped(client, history, businesses, SYNC_BEFORE_FAULTS_EVERY_MS);
  try {
    while (Date.now() - started < timeoutMs) {
      const waiting = await readStockIns(client).then(
        async (states) => untold(states, await inspector.purchases()).length,
        () => null,
      );
      if (waiting === 0) return Date.now() - started;
      await sleep(ARRIVALS_POLL_MS);
    }
    return null;
  } finally {
    syncs.stop();
  }
}

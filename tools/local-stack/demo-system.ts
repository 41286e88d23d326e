/**
 * The demo's second half, beyond sales: one purchases sync delivered to an NDJSON file, one accounting sync
 * batch of each merchant processed to the end (each through its own books, which the sandbox's request log shows),
 * one reconciliation of the demo business with its accounting company, and the second merchant onboarding a small
 * catalogue, whose report is printed. Each piece says whether it ended as
 * expected; the demo exits 0 only if they all did.
 */
import { readFile } from 'node:fs/promises';
import { catalogueImportReport, startCatalogueImport, waitForCatalogueImport } from '../../src/client/catalogue.js';
import { syncPurchasesNow } from '../../src/client/purchases.js';
import { SyncBatchClient } from '../../src/client/sync-batches.js';
import { DEMO_RECONCILIATION_LINK } from '../../sandbox/accounting/default-fixture.js';
import { DEMO_LATE_PURCHASE_ID } from '../../sandbox/default-fixture.js';
import type { LocalMerchant } from './local-tenants.js';
import type { Stack } from './stack.js';
import { WORKFLOW_TASK_QUEUE } from '../../src/contracts/task-queues.js';
import type { ReconcileBusinessResult, ReconciliationInput } from '../../src/contracts/reconciliation.js';
import type { PurchaseEvent } from '../../src/contracts/purchases-sync.js';

const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export interface PieceOutcome {
  ok: boolean;
  note: string;
  /** The accounting application it went through, when the demo shows it. */
  via?: string;
}

/** A batch of each merchant's books in the demo world, whose bill payments all sync. */
export const DEMO_SYNC_BATCH_IDS = { retail: 'sb_nbo_pending', other: 'sb_other_pending' } as const;

/**
 * The worker's start-up made the business's schedule and ran its first sync (the first pull); this asks for one
 * more, as a user would, which the schedule runs after it. By then a later pull (this one, or one the stock-in asked
 * for meanwhile) has brought the invoice dated two months back and the dashboard's reviews: the file must hold every
 * invoice once, every event once, the late invoice and a review among them.
 */
export async function demoPurchasesSync(stack: Stack, sinkPath: string): Promise<PieceOutcome> {
  const businessId = DEMO_RECONCILIATION_LINK.businessId;
  const { result } = await syncPurchasesNow(stack.client, businessId, { wait: true, timeoutMs: 120_000 });
  if (result === undefined) return { ok: false, note: 'the sync returned no result' };
  const events = (await readFile(sinkPath, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as PurchaseEvent)
    .filter((event) => event.businessId === businessId);
  const ids = new Set(events.map((e) => e.id));
  const received = events.filter((e) => e.type === 'purchase.received').map((e) => e.purchase.id);
  const invoices = new Set(received);
  const reviews = events.filter((e) => e.type === 'purchase.status_changed').length;
  const late = received.filter((id) => id === DEMO_LATE_PURCHASE_ID).length;
  return {
    ok:
      result.counts.pending === 0 &&
      late === 1 &&
      reviews >= 1 &&
      ids.size === events.length &&
      invoices.size === received.length,
    note:
      `the late invoice ${late === 1 ? 'delivered once' : `delivered ${late} times`}, ` +
      `${counted(reviews, 'status change')}; ${counted(events.length, 'event')} for ` +
      `${counted(invoices.size, 'invoice')}${invoices.size === received.length ? '' : ' (some received more than once)'} in ${sinkPath}`,
  };
}

/** The sandbox's accounting applications that asked to process the batch (its request log). */
async function processedBy(stack: Stack, syncBatchId: string, since: number): Promise<string[]> {
  if (!stack.sandbox) return [];
  const log = await stack.sandbox.inspector.requestLog({ since, service: 'accounting' });
  const path = `/sync/batches/${encodeURIComponent(syncBatchId)}/process`;
  return [
    ...new Set(
      log
        .filter((r) => r.method === 'POST' && r.path.startsWith(path) && r.status < 300)
        .map((r) => r.applicationId ?? '?'),
    ),
  ];
}

/**
 * Processes one sync batch of the merchant's company and follows its bill payments until every one has synced;
 * with the local merchants, checks it went through the merchant's own books.
 */
export async function demoSyncBatch(
  stack: Stack,
  syncBatchId: string,
  merchant: LocalMerchant | undefined,
): Promise<PieceOutcome> {
  const batches = new SyncBatchClient(stack.client);
  const since = Date.now();
  const companyId = merchant?.link.companyId ?? DEMO_RECONCILIATION_LINK.companyId;
  await batches.process({ syncBatchId, companyId });
  const summary = await batches.result(syncBatchId);
  const synced = summary.outcome === 'synced' && summary.failed.length === 0 && summary.synced > 0;
  const note = `${syncBatchId}: ${counted(summary.synced, 'bill payment')} synced, ${counted(summary.webhooks, 'webhook')}`;
  if (!merchant) return { ok: synced, note };
  const by = await processedBy(stack, syncBatchId, since);
  const right = by.length === 1 && by[0] === merchant.books.serviceApplicationId;
  return {
    ok: synced && right,
    note: right
      ? note
      : `${note}; processed by ${by.join(', ') || 'no application'}, expected ${merchant.books.serviceApplicationId}`,
    via: `${merchant.books.application} (${merchant.books.serviceApplicationId})`,
  };
}

/** Runs the reconciliation workflow once, as its schedule would, and checks every category is represented. */
export async function demoReconciliation(
  stack: Stack,
  runId: string,
): Promise<PieceOutcome & { counts: ReconcileBusinessResult['counts'] }> {
  const result = await stack.client.workflow.execute<(input: ReconciliationInput) => Promise<ReconcileBusinessResult>>(
    'reconciliationWorkflow',
    {
      taskQueue: WORKFLOW_TASK_QUEUE,
      workflowId: `reconciliation-demo:${DEMO_RECONCILIATION_LINK.businessId}:${runId}`,
      // The demo world's invoices and payments are of mid-2025: a run as of then, over a year, sees them all.
      args: [{ ...DEMO_RECONCILIATION_LINK, asOf: '2025-07-31', options: { periodDays: 365 } }],
    },
  );
  const c = result.counts;
  return {
    ok: c.matched > 0 && c.suggested > 0 && c.amountMismatches > 0 && c.unpaidPurchases > 0 && c.unmatchedPayments > 0,
    note: `${c.matched} matched, ${c.suggested} suggested, ${c.amountMismatches} amount mismatch, ${c.unpaidPurchases} unpaid, ${c.unmatchedPayments} payments without an invoice, ${c.ties} tie`,
    counts: c,
  };
}

/**
 * The second merchant onboards a small catalogue: four new items, one without a product type, and one the service
 * holds already. The report is printed, a line per row; the import is as expected when each row ended so.
 */
export async function demoCatalogueImport(stack: Stack, runId: string, merchant: LocalMerchant): Promise<PieceOutcome> {
  const businessId = merchant.businesses[0]!;
  const item = (code: string, name: string, unitPrice: number, productTypeCode?: string) => ({
    externalId: `CAT-${runId}-${code}`,
    name,
    taxTypeCode: 'B',
    unitPrice,
    classificationCode: '5016150100',
    ...(productTypeCode ? { productTypeCode } : {}),
  });
  const rows = [
    item('TEA', 'Tea leaves 500g', 320, '2'),
    item('SALT', 'Salt 1kg', 45, '2'),
    item('BEANS', 'Beans 1kg', 180, '2'),
    item('SOAP', 'Bar soap', 60, '2'),
    item('FLOUR', 'Maize flour 2kg', 210),
    { externalId: 'SKU-RICE-5KG', name: 'Rice 5kg', taxTypeCode: 'B', unitPrice: 900 },
  ].map((row, index) => ({ line: index + 2, row }));
  const started = await startCatalogueImport(stack.client, businessId, rows, WORKFLOW_TASK_QUEUE);
  const final = await waitForCatalogueImport(stack.client, businessId, started.importId, () => undefined, 500);
  const report = await catalogueImportReport(stack.client, businessId, started.importId);
  for (const row of report)
    console.log(
      `    line ${row.line}  ${row.externalId.padEnd(22)} ${row.outcome}${row.reason ? ` (${row.reason})` : ''}`,
    );
  const o = final.outcomes;
  return {
    ok: o.registered === 4 && o.needs_product_type === 1 && o.already_registered === 1 && report.length === rows.length,
    note: `${o.registered} registered, ${o.already_registered} already registered, ${o.needs_product_type} needs a product type; ${final.requests} requests`,
    via: merchant.application,
  };
}

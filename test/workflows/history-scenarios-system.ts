/**
 * The purchases sync, sync batch and reconciliation scenarios whose histories are committed under test/histories/
 * and replayed by replay.test.ts, beside the sales of history-scenarios.ts. They run on the real worker process
 * (startSaleService through the sale and purchases stacks) against the embedded sandbox's demo worlds, so the
 * histories are those of production code. tools/record-histories.ts runs them; no vitest here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowBundle } from '@temporalio/worker';
import { SyncBatchClient } from '../../src/client/sync-batches.js';
import { FiscalDaysClient } from '../../src/client/fiscal-days.js';
import {
  DEFAULT_FISCAL_DAY_SETTINGS,
  FISCAL_DAY_TASK_TIMEOUT,
  FISCAL_DAY_WORKFLOW_TYPE,
  closeFiscalDayUpdate,
  fiscalDayEntrySignal,
  fiscalDayWorkflowId,
  getFiscalDayQuery,
} from '../../src/contracts/fiscal-day.js';
import { catalogueImportId, catalogueImportReport, waitForCatalogueImport } from '../../src/client/catalogue.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import {
  addCatalogueChunkUpdate,
  CATALOGUE_IMPORT_WORKFLOW_TYPE,
  catalogueChunkWorkflowId,
  catalogueImportWorkflowId,
} from '../../src/contracts/catalogue-import.js';
import { DEMO, DEMO_STOCK_IN } from '../../sandbox/default-fixture.js';
import { purchaseLines } from '../../sandbox/compliance/supplier-lines.js';
import { getBookQuery, purchasesBookId } from '../../src/contracts/purchases-book.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  getStockInStateQuery,
  mapLineUpdate,
  mappingKeyOf,
  stockInWorkflowId,
  type StockInInput,
} from '../../src/contracts/stock-in.js';
import { mappingBucket, stockInMappingsId } from '../../src/contracts/stock-in-mappings.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { openNdjsonSink } from '../../src/purchases/event-sink.js';
import { DEMO_RECONCILIATION_LINK } from '../../sandbox/accounting/default-fixture.js';
import type { ReconcileBusinessResult, ReconciliationInput } from '../../src/contracts/reconciliation.js';
import type { SyncBatchOptions } from '../../src/contracts/sync-batch.js';
import { eventually } from '../helpers/eventually.js';
import { startPurchasesStack } from '../purchases/stack.js';
import type { RecordedRun } from './history-scenarios.js';
import type { SaleStack, TemporalAccess } from './sale-stack.js';

/** Demo batches (sandbox/accounting/default-fixture.ts): one that syncs, one whose payment fails once. */
const SYNCING_BATCH = 'sb_nbo_pending';
const FAILING_ONCE_BATCH = 'sb_nbo_vendor_mapping';
const FAST: SyncBatchOptions = { pollInterval: '200 ms', minPollGap: '50 ms' };

function expectThat(ok: boolean, what: string, value: unknown): void {
  if (!ok)
    throw new Error(`scenario went another way than recorded histories need: ${what} (${JSON.stringify(value)})`);
}

/** Sync batches on the sale stack's workers (its embedded sandbox serves the demo accounting world, no webhooks). */
export async function runSyncBatchScenarios(stack: SaleStack): Promise<RecordedRun[]> {
  const batches = new SyncBatchClient(stack.client, { taskQueue: stack.taskQueue });
  const { companyId } = DEMO_RECONCILIATION_LINK;

  // One poll per run: the batch is still syncing at the first poll, so the chain continues as new before completing.
  await batches.process({ syncBatchId: SYNCING_BATCH, companyId, options: { ...FAST, pollsPerRun: 1 } });
  const polled = await batches.result(SYNCING_BATCH);
  expectThat(
    polled.outcome === 'synced' && polled.webhooks === 0 && polled.failed.length === 0,
    'synced by polling alone',
    polled,
  );

  await batches.process({ syncBatchId: FAILING_ONCE_BATCH, companyId, options: FAST });
  await eventually(
    () => batches.getState(FAILING_ONCE_BATCH),
    (s) => s.step === 'parked',
    { timeoutMs: 20_000, what: `${FAILING_ONCE_BATCH} parked` },
  );
  await batches.reprocess(FAILING_ONCE_BATCH);
  const reprocessed = await batches.result(FAILING_ONCE_BATCH);
  expectThat(
    reprocessed.outcome === 'synced' && reprocessed.processCalls === 2,
    'synced after one reprocess',
    reprocessed,
  );

  return [
    { name: 'sync-batch-polled', handle: batches.handle(SYNCING_BATCH) },
    { name: 'sync-batch-reprocessed', handle: batches.handle(FAILING_ONCE_BATCH) },
  ];
}

/**
 * The demo link reconciled once, with the input its schedule gives (src/reconciliation/schedule.ts) with
 * `RECONCILE_PERIOD_DAYS=730`: the demo world's invoices are of mid-2025.
 */
export async function runReconciliationScenarios(stack: SaleStack): Promise<RecordedRun[]> {
  const input: ReconciliationInput = {
    businessId: DEMO_RECONCILIATION_LINK.businessId,
    companyId: DEMO_RECONCILIATION_LINK.companyId,
    options: { periodDays: 730 },
  };
  const handle = await stack.client.workflow.start<(i: ReconciliationInput) => Promise<ReconcileBusinessResult>>(
    'reconciliationWorkflow',
    {
      taskQueue: stack.taskQueue,
      workflowId: `reconciliation:${input.businessId}:recorded`,
      args: [input],
    },
  );
  const { counts } = await handle.result();
  expectThat(counts.purchases > 0 && counts.billPayments > 0 && counts.matched > 0, 'the demo link matched', counts);
  return [{ name: 'reconciliation-demo-link', handle }];
}

/**
 * A small catalogue import on the sale stack's workers, sent as a caller in another language may: two chunks of two
 * rows, so the second starts from the first's pace. An item registered, one lacking a product type, one the service
 * holds already, one it holds otherwise. The import, its two chunks and the registered item's registration are
 * recorded.
 */
export async function runCatalogueScenarios(stack: SaleStack): Promise<RecordedRun[]> {
  const rows = [
    { externalId: 'REC-TEA-500', name: 'Tea 500g', taxTypeCode: 'B', unitPrice: 320, productTypeCode: '2' },
    { externalId: 'REC-SALT-1KG', name: 'Salt 1kg', taxTypeCode: 'B', unitPrice: 45 },
    { externalId: 'SKU-SUGAR-2KG', name: 'Sugar 2kg', taxTypeCode: 'B', unitPrice: 250 },
    { externalId: 'SKU-MILK-500', name: 'Fresh milk 500ml', taxTypeCode: 'A', unitPrice: 70 },
  ].map((row, index) => ({ line: index + 2, row: { ...row, classificationCode: '5016150100' } }));
  const businessId = DEMO.businesses.nairobi;
  const importId = catalogueImportId(businessId, rows);
  const workflowId = catalogueImportWorkflowId(businessId, importId);
  const handle = await stack.client.workflow.start(CATALOGUE_IMPORT_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: stack.taskQueue,
    args: [{ businessId, importId, items: rows.length, chunks: 2 }],
  });
  for (const index of [0, 1])
    await handle.executeUpdate(addCatalogueChunkUpdate, {
      args: [{ index, rows: rows.slice(index * 2, index * 2 + 2) }],
    });
  const final = await waitForCatalogueImport(stack.client, businessId, importId, () => undefined, 200);
  const { registered, needs_product_type, already_registered, conflict } = final.outcomes;
  expectThat(
    registered === 1 && needs_product_type === 1 && already_registered === 1 && conflict === 1,
    'one row of each outcome',
    final.outcomes,
  );
  const registeredRow = (await catalogueImportReport(stack.client, businessId, importId)).find(
    (row) => row.outcome === 'registered',
  );
  expectThat(
    registeredRow?.itemId !== undefined && registeredRow.itemId !== null,
    'the registered row names its item',
    registeredRow,
  );
  return [
    { name: 'catalogue-import', handle },
    ...[0, 1].map((index) => ({
      name: `catalogue-chunk-${index}`,
      handle: stack.client.workflow.getHandle(catalogueChunkWorkflowId(workflowId, index)),
    })),
    {
      name: 'catalogue-item-registration',
      handle: stack.client.workflow.getHandle(itemRegistrationWorkflowId(businessId, registeredRow!.itemId!)),
    },
  ];
}

/**
 * Purchases syncs on a purchases stack of their own (its worker process makes the schedule at start-up), with
 * pages of 20 and two pages a run: the demo's 48 Nairobi invoices take three pages, so every sync continues as new
 * once. The first sync (run by the schedule) lists the whole horizon, delivers everything and tells the stock-in of the
 * confirmed ones; a later one, triggered through the schedule, lists review, the window and a sweep slice and delivers
 * one status change (an invoice that left review, listed again by its date). Then the stock-in's paths: a supplier
 * invoice confirmed with a line only a mapping matches and a fee, both mapped by an operator, then rejected (taken
 * back); then a stock-in putting settled invoices away at once: the next invoice matched by the learned mapping read
 * from its bucket, written to its book, read back and taken back when rejected. The book and the bucket are recorded
 * too.
 */
export async function runPurchasesScenarios(temporal: TemporalAccess, bundle: WorkflowBundle): Promise<RecordedRun[]> {
  const dir = await mkdtemp(join(tmpdir(), 'record-purchases-'));
  const stack = await startPurchasesStack(temporal, bundle, {
    sink: () => openNdjsonSink(join(dir, 'events.ndjson')),
    syncOptions: { pageSize: 20, pagesPerRun: 2 },
    stockIn: { [DEMO.businesses.nairobi]: { from: '2025-01-01', allOrNothing: false } },
  });
  try {
    const first = await stack.firstSync();
    expectThat(
      first.counts.pages === 3 && first.counts.delivered === first.counts.seen && first.counts.pending === 0,
      'first sync delivers everything',
      first.counts,
    );

    const target = (await stack.purchases()).find((p) => p.visible && p.purchase.status === 'pending_review');
    if (!target) throw new Error('the demo world has no supplier invoice pending review');
    await stack.review(target.purchase.id, 'rejected', 'Quantities differ from the delivery note');
    const changed = await stack.sync();
    expectThat(
      changed.counts.statusChanges === 1 && changed.counts.delivered === 1 && changed.counts.newInvoices === 0,
      'one status change',
      changed.counts,
    );

    const stockIn = stack.client.workflow.getHandle(stockInWorkflowId(stack.taskQueue, DEMO.businesses.nairobi));
    const firstStockInRun = (await stockIn.describe()).runId;
    const delivery = DEMO_STOCK_IN.invoices[0];
    // Within the window every sync lists: a rejection of a confirmed invoice is seen at the next sync.
    const recentDate = addDays(todayInKenya(Date.now()), -1);
    const purchaseId = 'pur_history_in';
    await stack.addPurchase({
      id: purchaseId,
      supplier: { ...DEMO_STOCK_IN.supplier },
      supplierInvoiceNumber: 'MB-HISTORY',
      invoiceDate: recentDate,
      branchId: delivery.branchId,
      lines: purchaseLines(delivery.lines),
    });
    await stack.sync();
    await stack.review(purchaseId, 'confirmed');
    await stack.sync();
    const invoiceOf = async () =>
      (await stockIn.query(getStockInStateQuery)).invoices.find((i) => i.purchaseId === purchaseId);
    const waiting = await eventually(invoiceOf, (inv) => inv?.state === 'waiting', { what: 'the invoice waiting' });
    const unmatched = waiting!.lines.filter((l) => !l.match).map((l) => l.line);
    expectThat(unmatched.length === 2, 'the carton and the fee wait for a person', waiting);
    await stockIn.executeUpdate(mapLineUpdate, {
      args: [{ purchaseId, line: unmatched[0]!, itemId: DEMO.items.milk, factor: 24 }],
    });
    await stockIn.executeUpdate(mapLineUpdate, { args: [{ purchaseId, line: unmatched[1]!, notStock: true }] });
    const added = await eventually(invoiceOf, (inv) => inv?.state === 'added', { what: 'the invoice added' });
    const carton = added!.lines[unmatched[0]!]!;
    const learnedKey = mappingKeyOf({
      supplierPin: DEMO_STOCK_IN.supplier.pin,
      by: carton.code ? 'code' : 'description',
      key: carton.code ?? carton.description,
    });
    await stack.review(purchaseId, 'rejected', 'Not delivered');
    await stack.sync();
    await eventually(invoiceOf, (inv) => inv?.state === 'taken_back', { what: 'the invoice taken back' });

    // The same supplier's next invoice with settled invoices put away at once: the learned mapping read from its
    // bucket, the invoice written to its book when added, read back from it when rejected and taken back.
    await stockIn.terminate('recorded; the next stock-in puts settled invoices away at once');
    await stack.client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
      workflowId: stockIn.workflowId,
      taskQueue: stack.taskQueue,
      args: [{ businessId: DEMO.businesses.nairobi, settledKept: { minutes: 0, batch: 1 } } satisfies StockInInput],
    });
    const awayId = 'pur_history_away';
    await stack.addPurchase({
      id: awayId,
      supplier: { ...DEMO_STOCK_IN.supplier },
      supplierInvoiceNumber: 'MB-HISTORY-2',
      invoiceDate: recentDate,
      branchId: delivery.branchId,
      status: 'confirmed',
      lines: purchaseLines(delivery.lines),
    });
    await stack.sync();
    const book = stack.client.workflow.getHandle(
      purchasesBookId(stack.taskQueue, DEMO.businesses.nairobi, recentDate, awayId),
    );
    await eventually(
      () => book.query(getBookQuery).catch(() => undefined),
      (held) => (held?.stocked ?? 0) > 0,
      { what: 'the invoice put away in its book' },
    );
    const takenBack = async () => (await stockIn.query(getStockInStateQuery)).totals.linesTakenBack;
    await stack.review(awayId, 'rejected', 'Not delivered');
    await stack.sync();
    await eventually(takenBack, (n) => n > 0, { what: 'the put-away invoice taken back' });

    return [
      { name: 'purchases-sync-first', handle: stack.client.workflow.getHandle(first.workflowId) },
      { name: 'purchases-sync-status-change', handle: stack.client.workflow.getHandle(changed.workflowId) },
      { name: 'stock-in', handle: stack.client.workflow.getHandle(stockIn.workflowId, firstStockInRun) },
      { name: 'stock-in-put-away', handle: stockIn },
      { name: 'purchases-book', handle: book },
      {
        name: 'stock-in-mappings',
        handle: stack.client.workflow.getHandle(
          stockInMappingsId(stack.taskQueue, DEMO.businesses.nairobi, mappingBucket(learnedKey)),
        ),
      },
    ];
  } finally {
    await stack.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The day books of the sales the sale scenarios signed: the Nairobi control unit's day closed by an operator, a till
 * close matched (one invoice number the worker never saw), and a document that came after the close, delivered as an
 * amendment a minute later. Then a busy day, a control unit of its own fed entries past a run's events, which hands
 * its book to a second run.
 */
export async function runFiscalDayScenarios(stack: SaleStack): Promise<RecordedRun[]> {
  const businessId = DEMO.businesses.nairobi;
  const days = new FiscalDaysClient(stack.client, { taskQueue: stack.taskQueue });
  const [day] = await eventually(
    () => days.days(businessId),
    (found) => found.length > 0,
    { timeoutMs: 20_000, what: 'the day book of the signed sales' },
  );
  const handle = stack.client.workflow.getHandle(fiscalDayWorkflowId(stack.taskQueue, day!));
  const closed = await handle.executeUpdate(closeFiscalDayUpdate);
  const till = {
    businessId,
    scuId: closed.scuId,
    date: closed.date,
    receipts: closed.receipts,
    taxes: {},
    invoiceNumbers: ['TILL-ONLY-RECORDED'],
  };
  const match = await days.matchTillClose(till);
  expectThat(match.notSigned[0]?.state === 'never_started', 'the till-only sale named', match.notSigned);
  const late = { documentId: 'doc_late_recorded', traderInvoiceNumber: 'LATE-RECORDED', label: 'NS', taxes: {} };
  await handle.signal(fiscalDayEntrySignal, {
    ...day!,
    entries: [{ ...late, receiptNumber: 1_000_000, cuInvoiceNo: null }],
  });
  await eventually(
    () => handle.query(getFiscalDayQuery),
    (d) => d.amendments === 1,
    { timeoutMs: 90_000, intervalMs: 1000, what: 'the amendment delivered' },
  );

  const busy = { businessId, scuId: 'KRACU-BUSY-RECORDED', date: closed.date };
  const busyId = fiscalDayWorkflowId(stack.taskQueue, busy);
  const first = await stack.client.workflow.signalWithStart(FISCAL_DAY_WORKFLOW_TYPE, {
    workflowId: busyId,
    taskQueue: stack.taskQueue,
    args: [{ ...busy, settings: DEFAULT_FISCAL_DAY_SETTINGS }],
    signal: fiscalDayEntrySignal,
    signalArgs: [{ ...busy, entries: [{ ...late, documentId: 'busy_0', receiptNumber: 1, cuInvoiceNo: null }] }],
    workflowTaskTimeout: FISCAL_DAY_TASK_TIMEOUT,
  });
  for (let from = 2; from <= 4_100; from += 100) {
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        first.signal(fiscalDayEntrySignal, {
          ...busy,
          entries: [{ ...late, documentId: `busy_${from + i}`, receiptNumber: from + i, cuInvoiceNo: null }],
        }),
      ),
    );
  }
  const busyBook = await eventually(
    () => stack.client.workflow.getHandle(busyId).query(getFiscalDayQuery),
    (d) => (d.receipts.NS ?? 0) >= 4_100,
    { timeoutMs: 60_000, what: 'the busy day counted' },
  );
  expectThat(busyBook.numbering.all?.missing === 0, 'the busy day whole', busyBook.numbering);
  const runs = await eventually(
    async () => (await stack.client.workflow.getHandle(busyId).describe()).runId !== first.signaledRunId,
    (moved) => moved,
    { timeoutMs: 30_000, what: 'the busy day continued as new' },
  );
  expectThat(runs, 'a second run', runs);
  return [
    { name: 'fiscal-day-closed-amended', handle },
    { name: 'fiscal-day-busy', handle: stack.client.workflow.getHandle(busyId) },
  ];
}

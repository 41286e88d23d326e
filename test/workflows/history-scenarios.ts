/**
 * Representative sales whose histories are committed under test/histories/ and replayed by replay.test.ts:
 * together they take every workflow through its main branches (immediate, async by callback, rejection then
 * operator retry, a refund through its own workflow (and one refused), item registration, an item an operator fixed, the stock ledger's lost answer, merge and
 * operator's re-send, a till's update-with-start, outages of the authority and of the service waited out,
 * Temporal's own cancellation of a parked sale and a start whose input the sale cannot use). tools/record-histories.ts runs them; no vitest here.
 */
import { WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import {
  SALE_WORKFLOW_TYPE,
  awaitReceiptUpdate,
  itemFixedUpdate,
  retryUpdate,
  saleWorkflowId,
  type SaleInput,
} from '../../src/contracts/sale.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import { refundWorkflowId } from '../../src/contracts/refund.js';
import { SalesClient } from '../../src/client/sales-client.js';
import { OUTAGE_WATCH_WORKFLOW_TYPE } from '../../src/contracts/outage-watch.js';
import {
  getStockLedgerStateQuery,
  settleMovementUpdate,
  stockLedgerWorkflowId,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import { DEMO, fastFixture, invoiceNumber, saleInput, windowOfSeconds, type SaleStack } from './sale-stack.js';

export interface RecordedRun {
  /** File name under test/histories/, without `.json`. */
  name: string;
  handle: WorkflowHandle;
}

/** The demo world as the scenarios need it (the recorder starts a fresh Temporal server, so demo ids are free). */
export const scenarioFixture = () => fastFixture();

const line = (itemId: string, quantity = 1) => ({ itemId, quantity, unitPrice: 100 });

async function untilParked(stack: SaleStack, handle: Awaited<ReturnType<SaleStack['start']>>) {
  await stack.waitFor(handle, (s) => s.step === 'parked');
}

/** The ledger's state once nothing is pending or open and `recorded` lines are recorded. */
async function ledgerQuiet(stack: SaleStack, ledger: WorkflowHandle, recorded: number): Promise<StockLedgerState> {
  for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    const state = await ledger.query(getStockLedgerStateQuery).catch(() => undefined);
    if (
      state &&
      state.totals.linesRecorded >= recorded &&
      state.open.length === 0 &&
      Object.keys(state.pending).length === 0
    )
      return state;
  }
  throw new Error(`${ledger.workflowId}: not quiet with ${recorded} lines recorded within 60 s`);
}

/**
 * The branch's stock ledger writes the stock (its own branch here, so its history holds only these):
 * a lost answer the service had recorded, settled from the next quantity on hand; lines of two sales merged while
 * the item's movement was in flight; a refused movement an operator had sent again. The sale's history shows the
 * hand-over and the ledger's word on each line.
 */
async function stockLedgerScenario(stack: SaleStack): Promise<RecordedRun[]> {
  const { nairobi } = DEMO.businesses;
  const branchId = DEMO.branches.nairobiWestlands;
  const ledger = stack.client.workflow.getHandle(stockLedgerWorkflowId(stack.taskQueue, nairobi, branchId));
  const stockRoute = { service: 'compliance', method: 'POST', path: '/v1/stock/adjustments' } as const;
  const westlands = (itemId: string, quantity = 1, overrides: Partial<SaleInput> = {}) =>
    saleInput({ branchId, lines: [line(itemId, quantity)], ...overrides });

  // Faults match the route, not the ledger: the other scenarios' ledger is quiet first.
  await ledgerQuiet(
    stack,
    stack.client.workflow.getHandle(stockLedgerWorkflowId(stack.taskQueue, nairobi, DEMO.branches.nairobiCbd)),
    0,
  );
  const settled = await stack.start(
    westlands(DEMO.items.sugar, 2, { options: { refundWindowDays: windowOfSeconds(30) } }),
  );
  await ledgerQuiet(stack, ledger, 1);
  await stack.sandbox.inspector.addFault({ ...stockRoute, kind: 'commit-then-fail', times: 1 });
  await stack.start(westlands(DEMO.items.sugar, 1));
  await ledgerQuiet(stack, ledger, 2);

  await stack.sandbox.inspector.addFault({ ...stockRoute, kind: 'latency', delayMs: 1500, times: 1 });
  const first = await stack.start(westlands(DEMO.items.milk));
  await stack.waitFor(first, (s) =>
    s.stockMovements.some((m) => m.status === 'handed_over' || m.status === 'reported'),
  );
  await Promise.all([stack.start(westlands(DEMO.items.milk, 2)), stack.start(westlands(DEMO.items.milk, 3))]);
  await ledgerQuiet(stack, ledger, 5);

  await stack.sandbox.inspector.addFault({ ...stockRoute, kind: 'error', status: 400, times: 1 });
  await stack.start(westlands(DEMO.items.sugar, 1));
  let waiting: string | undefined;
  for (
    const until = Date.now() + 60_000;
    !waiting && Date.now() < until;
    await new Promise((r) => setTimeout(r, 100))
  ) {
    waiting = (await ledger.query(getStockLedgerStateQuery)).open.find(
      (m) => m.status === 'needs_operator',
    )?.referenceId;
  }
  if (!waiting) throw new Error('the refused movement never waited for an operator');
  await ledger.executeUpdate(settleMovementUpdate, { args: [{ referenceId: waiting, decision: 'resend' }] });
  await ledgerQuiet(stack, ledger, 6);
  await settled.result();
  return [
    { name: 'sale-stock-ledger', handle: settled },
    { name: 'stock-ledger', handle: ledger },
  ];
}

/** A sale waiting out an authority outage (its submissions refused as transient), and one a service outage. */
export async function outageScenarios(stack: SaleStack): Promise<RecordedRun[]> {
  const downTin = invoiceNumber('DOWN-');
  const rule = await stack.sandbox.inspector.addAuthorityRule({
    match: { traderInvoiceNumber: `^${downTin}$` },
    outcome: 'reject',
    errorCode: 'authority_unavailable',
  });
  const authority = await stack.start(saleInput({ traderInvoiceNumber: downTin }));
  await stack.waitFor(authority, (s) => (s.outage?.attempts ?? 0) >= 2);
  await stack.sandbox.inspector.removeAuthorityRule(rule.id);
  await authority.result();

  // Four answers of 503 spend the call's tries; the sale then waits on the watch, whose probe files it.
  const fault = await stack.sandbox.inspector.addFault({
    service: 'compliance',
    method: 'POST',
    path: '/v1/sales',
    kind: 'error',
    status: 503,
    times: 4,
  });
  const service = await stack.start(saleInput());
  await stack.waitFor(service, (s) => s.step === 'completed', 60_000);
  await stack.sandbox.inspector.removeFault(fault.id!).catch(() => undefined);
  await service.result();
  // The application's watch the two sales waited on: still running, idle, when its history is taken.
  let watch: WorkflowHandle | undefined;
  for (const until = Date.now() + 30_000; !watch && Date.now() < until; await new Promise((r) => setTimeout(r, 500)))
    for await (const found of stack.client.workflow.list({ query: `WorkflowType = '${OUTAGE_WATCH_WORKFLOW_TYPE}'` }))
      watch = stack.client.workflow.getHandle(found.workflowId);
  if (!watch) throw new Error('no outage watch was started');
  return [
    { name: 'sale-authority-outage', handle: authority },
    { name: 'sale-service-outage', handle: service },
    { name: 'outage-watch', handle: watch },
  ];
}

export async function runScenarios(stack: SaleStack): Promise<RecordedRun[]> {
  const runs: RecordedRun[] = [];
  const nairobi = DEMO.businesses.nairobi;

  const immediate = await stack.start(saleInput());
  await immediate.result();
  runs.push({ name: 'sale-immediate', handle: immediate });

  const async = await stack.start(saleInput({ traderInvoiceNumber: invoiceNumber('ASYNC-') }));
  await async.result();
  runs.push({ name: 'sale-async-callback', handle: async });

  const rejectedTin = invoiceNumber('REJECT-');
  const rejected = await stack.start(saleInput({ traderInvoiceNumber: rejectedTin }));
  await untilParked(stack, rejected);
  await stack.sandbox.inspector.addAuthorityRule({
    match: { traderInvoiceNumber: `^${rejectedTin}$` },
    outcome: 'accept',
  });
  await rejected.executeUpdate(retryUpdate);
  await rejected.result();
  runs.push({ name: 'sale-rejected-then-retried', handle: rejected });

  const sales = new SalesClient(stack.client, { taskQueue: stack.taskQueue });
  const refundedSale = saleInput({ options: { refundWindowDays: windowOfSeconds(60) } });
  const refunded = await stack.start(refundedSale);
  await refunded.result();
  runs.push({ name: 'sale-refunded', handle: refunded });
  await sales.refund(nairobi, refundedSale.traderInvoiceNumber, {
    reason: '01',
    returnDate: '2026-11-22',
    traderInvoiceNumber: invoiceNumber('CN-'),
  });
  const refund = stack.client.workflow.getHandle(refundWorkflowId(nairobi, refundedSale.traderInvoiceNumber));
  runs.push({ name: 'refund', handle: refund });
  // Past its window (none given: it ends when it is signed): refused, the workflow failed with the reason.
  const lateSale = saleInput({ options: { refundWindowDays: 0 } });
  await (await stack.start(lateSale)).result();
  await sales
    .refund(nairobi, lateSale.traderInvoiceNumber, {
      reason: '06',
      returnDate: '2026-11-22',
      traderInvoiceNumber: invoiceNumber('CN-'),
    })
    .catch(() => undefined);
  runs.push({
    name: 'refund-refused',
    handle: stack.client.workflow.getHandle(refundWorkflowId(nairobi, lateSale.traderInvoiceNumber)),
  });

  const unregistered = await stack.start(saleInput({ lines: [line(DEMO.items.sugar), line(DEMO.items.bathSoap)] }));
  await unregistered.result();
  runs.push({ name: 'sale-unregistered-item', handle: unregistered });
  runs.push({
    name: 'item-registration',
    handle: stack.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, DEMO.items.bathSoap)),
  });

  const needsFix = await stack.start(saleInput({ lines: [line(DEMO.items.spiceMix)] }));
  await untilParked(stack, needsFix);
  await stack.sandbox.inspector.fixItem(DEMO.items.spiceMix);
  await needsFix.executeUpdate(itemFixedUpdate, { args: [{ itemId: DEMO.items.spiceMix }] });
  await needsFix.result();
  runs.push({ name: 'sale-item-fixed', handle: needsFix });
  runs.push({
    name: 'item-registration-fixed',
    handle: stack.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, DEMO.items.spiceMix)),
  });

  runs.push(...(await stockLedgerScenario(stack)));

  const tillInput = saleInput();
  const tillId = saleWorkflowId(tillInput.businessId, tillInput.traderInvoiceNumber);
  await stack.client.workflow.executeUpdateWithStart(awaitReceiptUpdate, {
    args: [{ wait: '30 seconds', input: tillInput }],
    startWorkflowOperation: new WithStartWorkflowOperation(SALE_WORKFLOW_TYPE, {
      workflowId: tillId,
      taskQueue: stack.taskQueue,
      args: [tillInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  const till = stack.client.workflow.getHandle(tillId);
  await till.result();
  runs.push({ name: 'sale-till-receipt', handle: till });

  runs.push(...(await outageScenarios(stack)));

  const cancelled = await stack.start(saleInput({ traderInvoiceNumber: invoiceNumber('REJECT-') }));
  await untilParked(stack, cancelled);
  await cancelled.cancel();
  await cancelled.result();
  runs.push({ name: 'sale-cancelled-by-temporal', handle: cancelled });

  const { lines: _lines, ...withoutLines } = saleInput();
  const invalid = await stack.start(withoutLines as SaleInput);
  await invalid.result().catch(() => undefined);
  runs.push({ name: 'sale-invalid-input', handle: invalid });

  return runs;
}

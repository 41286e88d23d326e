/**
 * Representative sales whose histories are committed under test/histories/ and replayed by replay.test.ts:
 * together they take every workflow through its main branches (immediate, async by callback, rejection then
 * operator retry, refund, item registration, an item an operator fixed, a stock movement an operator
 * confirmed; since 0.5 a till's update-with-start, Temporal's own cancellation of a parked sale and a start whose
 * input the sale cannot use). tools/record-histories.ts runs them; no vitest here.
 */
import { WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import {
  SALE_WORKFLOW_TYPE,
  awaitReceiptUpdate,
  confirmStockMovementUpdate,
  itemFixedUpdate,
  refundUpdate,
  retryUpdate,
  saleWorkflowId,
  type SaleInput,
} from '../../src/contracts/sale.js';
import { itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
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
  await stack.waitFor(handle, (s) => s.step === 'parked' || s.stockMovements.some((m) => m.status === 'needs_confirmation'));
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
  await stack.sandbox.inspector.addAuthorityRule({ match: { traderInvoiceNumber: `^${rejectedTin}$` }, outcome: 'accept' });
  await rejected.executeUpdate(retryUpdate);
  await rejected.result();
  runs.push({ name: 'sale-rejected-then-retried', handle: rejected });

  const refunded = await stack.start(saleInput({ options: { refundWindowDays: windowOfSeconds(60) } }));
  await stack.waitFor(refunded, (s) => s.step === 'refund_window');
  await refunded.executeUpdate(refundUpdate, { args: [{ reason: '01', returnDate: '2026-11-22', traderInvoiceNumber: invoiceNumber('CN-') }] });
  await refunded.result();
  runs.push({ name: 'sale-refunded', handle: refunded });

  const unregistered = await stack.start(saleInput({ lines: [line(DEMO.items.sugar), line(DEMO.items.bathSoap)] }));
  await unregistered.result();
  runs.push({ name: 'sale-unregistered-item', handle: unregistered });
  runs.push({ name: 'item-registration', handle: stack.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, DEMO.items.bathSoap)) });

  const needsFix = await stack.start(saleInput({ lines: [line(DEMO.items.spiceMix)] }));
  await untilParked(stack, needsFix);
  await stack.sandbox.inspector.fixItem(DEMO.items.spiceMix);
  await needsFix.executeUpdate(itemFixedUpdate, { args: [{ itemId: DEMO.items.spiceMix }] });
  await needsFix.result();
  runs.push({ name: 'sale-item-fixed', handle: needsFix });
  runs.push({ name: 'item-registration-fixed', handle: stack.client.workflow.getHandle(itemRegistrationWorkflowId(nairobi, DEMO.items.spiceMix)) });

  await stack.sandbox.inspector.addFault({ service: 'compliance', method: 'POST', path: '/v1/stock/adjustments', kind: 'commit-then-fail', times: 1 });
  const ambiguous = await stack.start(saleInput({ lines: [line(DEMO.items.cookingOil)] }));
  await untilParked(stack, ambiguous);
  const { stockMovements } = await stack.state(ambiguous);
  await ambiguous.executeUpdate(confirmStockMovementUpdate, { args: [{ referenceId: stockMovements[0]!.referenceId }] });
  await ambiguous.result();
  runs.push({ name: 'sale-stock-confirmed', handle: ambiguous });

  const tillInput = saleInput();
  const tillId = saleWorkflowId(tillInput.businessId, tillInput.traderInvoiceNumber);
  await stack.client.workflow.executeUpdateWithStart(awaitReceiptUpdate, {
    args: [{ wait: '30 seconds', input: tillInput }],
    startWorkflowOperation: new WithStartWorkflowOperation(SALE_WORKFLOW_TYPE, { workflowId: tillId, taskQueue: stack.taskQueue, args: [tillInput], workflowIdConflictPolicy: 'USE_EXISTING' }),
  });
  const till = stack.client.workflow.getHandle(tillId);
  await till.result();
  runs.push({ name: 'sale-till-receipt', handle: till });

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

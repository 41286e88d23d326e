import { ApplicationFailure, condition, getExternalWorkflowHandle, patched, setHandler } from '@temporalio/workflow';
import { TRADER_INVOICE_NUMBER_MAX, isCreditNoteReason } from '../../src/contracts/compliance-rules.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { callbackReceivedSignal, cancelUpdate, confirmStockMovementUpdate, getSaleStateQuery, itemFixedUpdate, itemRegistrationSettledSignal, refundUpdate, resendStockMovementUpdate, retryUpdate, type RefundRequest } from '../../src/contracts/sale.js';
import { itemFixedSignal, itemRegistrationWorkflowId } from '../../src/contracts/item-registration.js';
import type { SaleContext, SaleInbox } from './context.js';
import { REFUND_BY_PROCESS_PATCH } from './patches.js';
import { issueRefund } from './refund.js';


export function emptyInbox(): SaleInbox {
  return { callbackHints: 0, registrations: new Map(), operatorRetry: false, operatorCancel: undefined, stockWork: false, refund: undefined };
}

function assertAllowed(condition: boolean, message: string): void {
  if (!condition) throw ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidOperation);
}

/**
 * The sale's query, signals and operator updates. Validators refuse what the sale cannot do now; handlers only
 * record into the inbox, and the process acts on it.
 */
export function handleSaleMessages(ctx: SaleContext): void {
  const { input, record, inbox } = ctx;
  const { state } = record;
  const waitingForConfirmation = (referenceId: string) =>
    assertAllowed(record.movement(referenceId)?.status === 'needs_confirmation', `stock movement ${referenceId} is not waiting for confirmation`);
  /** An operator's word on a movement whose fate was unknown: it was recorded (confirmed), or is to be sent again. */
  const decideMovement = (referenceId: string, status: 'confirmed' | 'pending', event: string) => {
    const movement = record.movement(referenceId)!;
    movement.status = status;
    delete movement.problem;
    record.note(`${event} ${referenceId}`);
  };

  setHandler(getSaleStateQuery, () => state);
  setHandler(callbackReceivedSignal, () => {
    inbox.callbackHints++;
  });
  setHandler(itemRegistrationSettledSignal, (outcome) => {
    inbox.registrations.set(outcome.itemId, outcome);
  });

  setHandler(
    retryUpdate,
    () => {
      inbox.operatorRetry = true;
      return state;
    },
    { validator: () => assertAllowed(record.isParkedFor('retry'), 'retry is possible only while the sale is parked for a retryable reason') },
  );
  setHandler(
    cancelUpdate,
    ({ reason }) => {
      inbox.operatorCancel = reason || 'cancelled by an operator';
      return state;
    },
    {
      validator: ({ reason }) => {
        assertAllowed(record.isParkedFor('cancel'), 'cancel is possible only while the sale is parked and unsigned');
        assertAllowed(typeof reason === 'string' && reason.trim().length > 0, 'a cancel needs a reason');
      },
    },
  );
  setHandler(
    itemFixedUpdate,
    async ({ itemId }) => {
      // Passed on to the item's registration workflow, which tries again and tells every sale waiting on it.
      try {
        await getExternalWorkflowHandle(itemRegistrationWorkflowId(input.businessId, itemId)).signal(itemFixedSignal);
      } catch (err) {
        throw ApplicationFailure.nonRetryable(`could not reach the registration of item ${itemId}: ${String(err)}`, FAILURE_TYPES.invalidOperation);
      }
      record.note(`operator reported item ${itemId} fixed`);
      return state;
    },
    {
      validator: ({ itemId }) =>
        assertAllowed(record.isParkedFor('itemFixed') && (state.parked?.itemIds ?? []).includes(itemId), `item ${itemId} is not waiting for a fix`),
    },
  );
  setHandler(
    confirmStockMovementUpdate,
    ({ referenceId }) => {
      decideMovement(referenceId, 'confirmed', 'operator confirmed stock movement');
      record.refreshAttention();
      return state;
    },
    { validator: ({ referenceId }) => waitingForConfirmation(referenceId) },
  );
  setHandler(
    resendStockMovementUpdate,
    ({ referenceId }) => {
      decideMovement(referenceId, 'pending', 'operator asked to re-send stock movement');
      inbox.stockWork = true;
      return state;
    },
    { validator: ({ referenceId }) => waitingForConfirmation(referenceId) },
  );
  setHandler(
    refundUpdate,
    async (request) => {
      const refund: NonNullable<SaleInbox['refund']> = { request };
      inbox.refund = refund;
      if (!patched(REFUND_BY_PROCESS_PATCH)) refund.issuing = issueRefund(ctx, request);
      await condition(() => refund.issuing !== undefined);
      return refund.issuing!;
    },
    { validator: (request) => validateRefund(ctx, request) },
  );
}

function validateRefund({ record, inbox }: SaleContext, request: RefundRequest): void {
  const { state } = record;
  // First, so a second refund arriving while the first is being signed is told why.
  assertAllowed(inbox.refund === undefined && state.creditNote === null, 'this sale has already been refunded');
  assertAllowed(
    state.step === 'refund_window' && state.sale?.status === 'completed' && state.refundDeadline !== null && Date.now() < Date.parse(state.refundDeadline),
    'only a signed sale inside its refund window can be refunded',
  );
  assertAllowed(isCreditNoteReason(request?.reason), 'reason must be one of 01..06');
  assertAllowed(/^\d{4}-\d{2}-\d{2}$/.test(request?.returnDate ?? ''), 'returnDate must be YYYY-MM-DD');
  const tin = request?.traderInvoiceNumber ?? '';
  assertAllowed(tin.length >= 1 && tin.length <= TRADER_INVOICE_NUMBER_MAX, `traderInvoiceNumber must be 1..${TRADER_INVOICE_NUMBER_MAX} characters`);
}

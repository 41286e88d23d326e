import { setHandler } from '@temporalio/workflow';
import { parseDuration } from '../../src/contracts/duration.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import {
  checkInput,
  describeProblems,
  saleInputDifferences,
  saleSchemas,
  type InputProblem,
} from '../../src/contracts/sale-input.js';
import {
  awaitReceiptUpdate,
  businessServedSignal,
  cancelUpdate,
  getSaleInputQuery,
  getSaleStateQuery,
  type AwaitReceiptRequest,
  type ReceiptAnswer,
  type SaleInput,
  type SaleState,
} from '../../src/contracts/sale.js';
import { assertAllowed, handleProcessMessages, hold, refuseOtherRequest } from '../document/messages.js';
import { SIDE_NAMES, SaleRecord } from '../document/record.js';
import { refuse, required, wording } from '../update-arguments.js';
import { signed, type Sale } from './sale.js';

/** The sale's own doors: its input, the till's `awaitReceipt` and an operator's `cancel` of a parked unsigned sale. */
export function handleSaleMessages(sale: Sale): void {
  const { record, inbox, subject: input } = sale;
  const { state } = record;
  handleProcessMessages(sale);
  setHandler(getSaleInputQuery, () => input);
  setHandler(businessServedSignal, () => void inbox.businessServed++);
  setHandler(
    cancelUpdate,
    async ({ reason }) => {
      // A repeat (the UI gives every send its own update id) answers the same cancelled state; the first reason stays.
      inbox.operatorCancel ??= reason.trim();
      await hold(() => state.step === 'cancelled');
      return state;
    },
    {
      validator: (argument) => {
        required('cancel', '{"reason": "…"}', saleSchemas().cancelArgs, argument);
        const cancelling = inbox.operatorCancel !== undefined || state.step === 'cancelled';
        assertAllowed(
          cancelling || sale.cancelOpen,
          'cancel is possible only while the sale is parked and unsigned, or waits for its business to be served',
        );
      },
    },
  );
  setHandler(
    awaitReceiptUpdate,
    async (argument: AwaitReceiptRequest | undefined) => {
      const waitMs = parseDuration(argument?.wait ?? '30 seconds') ?? 30_000;
      if (!tillCanBeAnswered(state)) await hold(() => tillCanBeAnswered(state), waitMs);
      return receiptAnswer(state);
    },
    {
      validator: (argument) => {
        // Optional as a whole: no data asks for the default wait without comparing inputs.
        if (argument === undefined || argument === null) return;
        const checked = checkInput(saleSchemas().awaitReceiptRequest, argument);
        if (!checked.ok)
          refuse(
            `awaitReceipt takes {"wait"?: "30 seconds", "input"?: the sale's input}: ${wording(checked.problems)}`,
            checked.problems,
          );
        if (checked.value.input !== undefined)
          refuseOtherRequest(
            FAILURE_TYPES.saleInputConflict,
            `sale ${input.traderInvoiceNumber} of business ${input.businessId} was started with another input`,
            saleInputDifferences(input, checked.value.input),
          );
      },
    },
  );
}

/** Ends the sale, not a task failing for ever; `awaitReceipt` refuses an update-with-start naming the fields too. */
export function refuseInput(input: unknown, problems: [InputProblem, ...InputProblem[]]): never {
  const text = (field: 'businessId' | 'traderInvoiceNumber') => {
    const value = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : undefined;
    return typeof value === 'string' ? value : '';
  };
  const record = new SaleRecord({ businessId: text('businessId'), traderInvoiceNumber: text('traderInvoiceNumber') });
  const refused: () => never = () => refuse(describeProblems('sale input', problems), problems);
  setHandler(getSaleStateQuery, () => record.state);
  setHandler(getSaleInputQuery, () => input as SaleInput);
  setHandler(awaitReceiptUpdate, (_request: AwaitReceiptRequest) => receiptAnswer(record.state), {
    validator: (_request: AwaitReceiptRequest) => refused(),
  });
  record.failed(FAILURE_TYPES.invalidInput, problems);
  refused();
}

/** Signed, or why not when a person or an outage holds it: a till is not held through an outage. */
function receiptAnswer(state: SaleState): ReceiptAnswer {
  const { parked, outage, awaitingBusiness } = state;
  const reason = signed(state)
    ? null
    : parked
      ? `parked: ${parked.message}`
      : outage
        ? `waiting out an outage of the ${SIDE_NAMES[outage.side]} since ${outage.since} (${outage.cause}): ` +
          'it is signed once that answers, nobody needs to act'
        : awaitingBusiness
          ? `waiting since ${awaitingBusiness.since} for business ${state.businessId} to be served ` +
            `(${FAILURE_TYPES.businessNotServed}): nothing is sent until a tenants reload serves it`
          : null;
  return { signed: signed(state), receipt: signed(state) ? state.sale!.receipt : null, reason, state };
}

function tillCanBeAnswered(state: SaleState): boolean {
  const { signed, reason } = receiptAnswer(state);
  return signed || reason !== null || ['cancelled', 'failed', 'completed'].includes(state.step);
}

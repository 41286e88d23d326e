import { ApplicationFailure } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { refuse, required, wording } from '../update-arguments.js';
import {
  awaitReceiptRequestSchema,
  cancelArgsSchema,
  checkInput,
  describeProblems,
  itemFixedArgsSchema,
  refundRequestSchema,
  type InputProblem,
} from '../../src/contracts/sale-input.js';
import type { AwaitReceiptRequest, RefundRequest } from '../../src/contracts/sale.js';

/** The arguments of the sale's updates, checked in their validators (workflows/update-arguments.ts says why). */

export const checkCancelArgs = (argument: unknown) => required('cancel', '{"reason": "…"}', cancelArgsSchema, argument);
export const checkItemFixedArgs = (argument: unknown) =>
  required('itemFixed', '{"itemId": "…"}', itemFixedArgsSchema, argument);

export function checkRefundArgs(argument: unknown): RefundRequest {
  return required(
    'refund',
    '{"reason": "01".."06", "returnDate": "YYYY-MM-DD", "traderInvoiceNumber": "…", "restock"?: true}',
    refundRequestSchema,
    argument,
  );
}

/** `retry` takes nothing; a form that sends `{}` or null means the same. */
export function checkRetryArgs(argument: unknown): void {
  const empty =
    argument === undefined ||
    argument === null ||
    (typeof argument === 'object' && !Array.isArray(argument) && Object.keys(argument).length === 0);
  if (!empty)
    refuse(
      `retry takes no data (send nothing, or {}): got ${
        Array.isArray(argument) ? 'a list' : typeof argument === 'object' ? 'fields' : `a ${typeof argument}`
      }`,
      [{ field: '(input)', reason: 'must be empty' }],
    );
}

/** Optional as a whole: no data asks for the default wait without comparing inputs. */
export function checkAwaitReceiptArgs(argument: unknown): AwaitReceiptRequest {
  if (argument === undefined || argument === null) return {};
  const checked = checkInput(awaitReceiptRequestSchema, argument);
  if (!checked.ok)
    refuse(
      `awaitReceipt takes {"wait"?: "30 seconds", "input"?: the sale's input}: ${wording(checked.problems)}`,
      checked.problems,
    );
  return checked.value;
}

/** The failure a sale ends with when its own input is unusable; also the answer to an update-with-start of it. */
export function invalidSaleInput(problems: readonly [InputProblem, ...InputProblem[]]): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.invalidInput,
    message: describeProblems('sale input', problems),
    nonRetryable: true,
    details: [problems],
  });
}

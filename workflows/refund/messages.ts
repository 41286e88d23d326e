import { ApplicationFailure, setHandler } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { getRefundInputQuery, refundUpdate, type RefundInput } from '../../src/contracts/refund.js';
import { saleInputDifferences, saleSchemas } from '../../src/contracts/sale-input.js';
import type { RefundResult } from '../../src/contracts/sale.js';
import type { DocumentProcess } from '../document/process.js';
import { handleProcessMessages, hold } from '../document/messages.js';
import { required } from '../update-arguments.js';

/** How the refund ended, for the `refund` update to answer: its result, or why it was refused. */
export interface RefundOutcome {
  result?: RefundResult;
  refused?: ApplicationFailure;
}

/** `refund` answers with the credit note once issued; the same request again joins it, another is refused. */
export function handleRefundMessages(refund: DocumentProcess, input: RefundInput, outcome: RefundOutcome): void {
  handleProcessMessages(refund);
  setHandler(getRefundInputQuery, () => input);
  setHandler(
    refundUpdate,
    async () => {
      await hold(() => outcome.result !== undefined || outcome.refused !== undefined);
      if (outcome.refused) throw outcome.refused;
      return outcome.result!;
    },
    {
      validator: (argument) => {
        const asked = required(
          'refund',
          '{"reason": "01".."06", "returnDate": "YYYY-MM-DD", "traderInvoiceNumber": "…", "restock"?: true}',
          saleSchemas().refundRequest,
          argument,
        );
        const fields = saleInputDifferences(input.request, asked);
        if (fields.length > 0)
          throw ApplicationFailure.create({
            type: FAILURE_TYPES.alreadyCredited,
            message:
              `sale ${input.traderInvoiceNumber} is already refunded with another request: ` +
              `${fields.join(', ')} differ${fields.length === 1 ? 's' : ''}`,
            nonRetryable: true,
            details: [{ fields }],
          });
      },
    },
  );
}

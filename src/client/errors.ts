/**
 * How a call on the sales client fails: bad input (nothing was sent), a sale already started with another input,
 * or a refused operation.
 */

import { describeProblems, type InputProblem } from '../contracts/sale-input.js';

export type { InputProblem };

/** The input was refused before anything reached Temporal: no sale was started, no update was sent. */
export class SaleInputError extends Error {
  override readonly name = 'SaleInputError';
  readonly field: string;
  readonly reason: string;

  constructor(
    /** What was being validated, e.g. `sale input`, `refund request`. */
    readonly subject: string,
    /** Every problem found, the one named in the message first. */
    readonly problems: readonly [InputProblem, ...InputProblem[]],
  ) {
    super(describeProblems(subject, problems));
    this.field = problems[0].field;
    this.reason = problems[0].reason;
  }
}

/**
 * A sale with this business and trader invoice number was already started with another input: the new input was
 * not used (a sale is filed once per invoice number). `fields` names where the inputs differ, never their values,
 * which may be customer data. Starting again with the same input as before is not a conflict.
 */
export class SaleInputConflictError extends Error {
  override readonly name = 'SaleInputConflictError';

  constructor(
    readonly workflowId: string,
    /** Paths of the differing fields, e.g. `lines[0].quantity`, `customer.name`. */
    readonly fields: readonly string[],
    options: { cause?: unknown } = {},
  ) {
    const named = fields.length > 0 ? fields.join(', ') : 'the input';
    super(
      `sale ${workflowId} was already started with another input (differing: ${named}); nothing was changed. ` +
        'Use a new trader invoice number for a new sale, or the same input to find this one',
      { cause: options.cause },
    );
  }
}

export type SaleOperation = 'getState' | 'awaitReceipt' | 'refund' | 'retry' | 'cancel' | 'itemFixed';

export type SaleOperationFailure =
  /** No sale with this business and trader invoice number, or it has already finished. */
  | 'not_found'
  /** The workflow refused the operation (its validator or handler said why). */
  | 'rejected'
  /** The call timed out before the workflow answered; the update may still complete. Repeating it is safe. */
  | 'timed_out';

/** The sale exists (or was looked for) but the operation did not go through. */
export class SaleOperationError extends Error {
  override readonly name = 'SaleOperationError';

  constructor(
    readonly operation: SaleOperation,
    readonly workflowId: string,
    readonly failure: SaleOperationFailure,
    message: string,
    options: { cause?: unknown; updateId?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.updateId = options.updateId;
  }

  /** The update's id, when the operation was an update: pass it again to get the same update's answer. */
  readonly updateId: string | undefined;
}

/** The two ways a call on the sales client fails: bad input (nothing was sent) or a refused operation. */

export interface InputProblem {
  /** Path of the wrong field, e.g. `lines[0].quantity`; `(input)` when the whole value is wrong. */
  field: string;
  reason: string;
}

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
    const [first] = problems;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
    super(`invalid ${subject}: ${first.field} ${first.reason}${more}`);
    this.field = first.field;
    this.reason = first.reason;
  }
}

export type SaleOperation =
  | 'getState'
  | 'refund'
  | 'retry'
  | 'cancel'
  | 'itemFixed'
  | 'confirmStockMovement'
  | 'resendStockMovement';

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

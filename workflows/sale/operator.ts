import { ActivityFailure, ApplicationFailure, condition } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { DocumentContext } from './context.js';

/** An operator cancelled the parked sale: unwinds the process to its end. */
export class OperatorCancelled extends Error {}

/** Parks until an operator asks for a retry (returns) or cancels a sale not yet signed (throws OperatorCancelled). */
export async function awaitOperator(ctx: DocumentContext, code: string, message: string): Promise<void> {
  const { record, inbox } = ctx;
  inbox.operatorRetry = false;
  inbox.operatorCancel = undefined;
  record.park(code, message, record.cancellable ? ['retry', 'cancel'] : ['retry']);
  await condition(() => inbox.operatorRetry || inbox.operatorCancel !== undefined);
  if (inbox.operatorCancel !== undefined) throw new OperatorCancelled(inbox.operatorCancel);
  record.note('operator asked for a retry');
  record.unpark();
  // The retry update answers once unparked: its state then says the process is moving on, not parked.
  record.enter('retrying');
}

/** A refusal the worker cannot fix parks for an operator; a second credit note is the service's to refuse. */
export async function parkOnRefusal<T>(
  ctx: DocumentContext,
  call: () => Promise<T>,
  asksNoService = false,
): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      // A local activity's failure (asksNoService: placement) reaches the workflow as the activity's own error.
      const failure =
        err instanceof ActivityFailure
          ? err.cause
          : asksNoService && err instanceof ApplicationFailure
            ? err
            : undefined;
      if (
        !(failure instanceof ApplicationFailure) ||
        !failure.nonRetryable ||
        failure.type === FAILURE_TYPES.alreadyCredited
      )
        throw err;
      await awaitOperator(ctx, failure.type ?? 'error', failure.message);
    }
  }
}

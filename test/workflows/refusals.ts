import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';

/**
 * An update whose validator refused it as `type` with `message` (non-retryable): `invalid_input` for an argument the
 * sale cannot use (checked against its schema), `sale_input_conflict` for another sale's input. Returns the failure.
 */
export async function expectRefusedAs(update: Promise<unknown>, type: string, message: RegExp): Promise<ApplicationFailure> {
  const error = await update.then(
    (value: unknown) => ({ notRefused: value }),
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).message).toMatch(message);
  expect((cause as ApplicationFailure).type).toBe(type);
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  return cause as ApplicationFailure;
}

/** An update refused because its argument cannot be used. */
export const expectInvalidArgument = (update: Promise<unknown>, message: RegExp) => expectRefusedAs(update, FAILURE_TYPES.invalidInput, message);

import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';

/** The failure an update was refused with: WorkflowUpdateFailedError caused by an ApplicationFailure. */
export async function updateRefusal(update: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await update.then(
    (value: unknown) => ({ notRefused: value }),
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

/**
 * An update whose validator (or handler) refused it as `type` with `message`, non-retryable: `invalid_operation`
 * for what the workflow cannot do now, `invalid_input` for an argument it cannot use (checked against its schema),
 * `sale_input_conflict` for another sale's input. Returns the failure.
 */
export async function expectRefusedAs(
  update: Promise<unknown>,
  type: string,
  message: RegExp,
): Promise<ApplicationFailure> {
  const failure = await updateRefusal(update);
  expect(failure.message).toMatch(message);
  expect(failure.type).toBe(type);
  expect(failure.nonRetryable).toBe(true);
  return failure;
}

/** An update the workflow refused in its current state. */
export async function expectUpdateRefused(update: Promise<unknown>, message: RegExp): Promise<void> {
  await expectRefusedAs(update, FAILURE_TYPES.invalidOperation, message);
}

/** An update refused because its argument cannot be used. */
export const expectInvalidArgument = (update: Promise<unknown>, message: RegExp) =>
  expectRefusedAs(update, FAILURE_TYPES.invalidInput, message);

import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'vitest';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';

/** An update the workflow's validator (or handler) refused: WorkflowUpdateFailedError with an invalid_operation cause. */
export async function expectUpdateRefused(update: Promise<unknown>, message: RegExp): Promise<void> {
  const error = await update.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(FAILURE_TYPES.invalidOperation);
  expect((cause as ApplicationFailure).message).toMatch(message);
}

import { ApplicationFailure } from '@temporalio/workflow';
import type { z } from 'zod';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { checkInput, type InputProblem } from '../src/contracts/sale-input.js';

/** Validators check update arguments: UI forms and other SDKs send whatever was typed. */
export function refuse(message: string, problems: readonly InputProblem[]): never {
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.invalidInput,
    message,
    nonRetryable: true,
    details: [problems],
  });
}

export function wording(problems: readonly InputProblem[]): string {
  return problems.map((p) => `${p.field === '(input)' ? 'the data' : p.field} ${p.reason}`).join('; ');
}

export function required<T>(update: string, shape: string, schema: z.ZodType<T>, argument: unknown): T {
  if (argument === undefined || argument === null)
    refuse(`${update} needs ${shape}: no data was given`, [{ field: '(input)', reason: 'is required' }]);
  const checked = checkInput(schema, argument);
  if (!checked.ok) refuse(`${update} needs ${shape}: ${wording(checked.problems)}`, checked.problems);
  return checked.value;
}

import { z } from 'zod';
import { parseWith, type Env } from './env.js';

// Fleet-wide activity starts per second: the accounting service publishes no rate limit (A3), so this is our guard.
export const DEFAULT_ACCOUNTING_ACTIVITIES_PER_SECOND = 2;
const MAX_ACCOUNTING_ACTIVITIES_PER_SECOND = 10_000;

const activitiesPerSecond = z
  .string()
  .regex(/^\d*\.?\d+$/, {
    error: (issue) => `must be a number of activities per second, e.g. 2 or 0.5 (got "${String(issue.input)}")`,
  })
  .transform(Number)
  .refine((n) => n > 0 && n <= MAX_ACCOUNTING_ACTIVITIES_PER_SECOND, {
    error: (issue) =>
      `must be greater than 0 and at most ${MAX_ACCOUNTING_ACTIVITIES_PER_SECOND} (got ${String(issue.input)})`,
  });

export function loadAccountingWorkerConfig(env: Env): { activitiesPerSecond: number } {
  const name = 'ACCOUNTING_ACTIVITIES_PER_SECOND';
  return { activitiesPerSecond: parseWith(activitiesPerSecond, env, name, DEFAULT_ACCOUNTING_ACTIVITIES_PER_SECOND) };
}

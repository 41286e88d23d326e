import { z } from 'zod';
import { ConfigError, type Env } from './env.js';

// Fleet-wide activity starts per second: the accounting service publishes no rate limit (A3), so this is our guard.
export const DEFAULT_ACCOUNTING_ACTIVITIES_PER_SECOND = 2;
const MAX_ACCOUNTING_ACTIVITIES_PER_SECOND = 10_000;

const activitiesPerSecond = z
  .string()
  .trim()
  .regex(/^\d*\.?\d+$/, 'must be a number of activities per second, e.g. 2 or 0.5')
  .transform(Number)
  .refine(
    (n) => n > 0 && n <= MAX_ACCOUNTING_ACTIVITIES_PER_SECOND,
    `must be greater than 0 and at most ${MAX_ACCOUNTING_ACTIVITIES_PER_SECOND}`,
  );

export function loadAccountingWorkerConfig(env: Env): { activitiesPerSecond: number } {
  const raw = env.ACCOUNTING_ACTIVITIES_PER_SECOND;
  if (raw === undefined || raw.trim() === '') return { activitiesPerSecond: DEFAULT_ACCOUNTING_ACTIVITIES_PER_SECOND };
  const parsed = activitiesPerSecond.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      `ACCOUNTING_ACTIVITIES_PER_SECOND: ${parsed.error.issues[0]?.message ?? 'invalid value'} (got "${raw.trim()}")`,
    );
  }
  return { activitiesPerSecond: parsed.data };
}

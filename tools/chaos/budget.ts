/**
 * Whether an application kept to its budget, from the requests the sandbox recorded alone. The sandbox attributes
 * a request to an application once its key is read (faults that answer before that, and the storms' 429s, belong
 * to no application); a request it refused with 429 for the application's own window is counted apart, every other
 * one was counted by its rate limiter. The check is stricter than the sandbox's fixed windows: no interval of a
 * window's length, wherever it starts, may hold more counted requests than the limit (a fleet that spent one
 * window's budget at its end and the next one's at its start would pass the sandbox and fail here).
 */
import type { RequestRecord } from '../../sandbox/shared/request-stats.js';

export interface BudgetVerdict {
  /** Requests allowed per window (the application's `requestsPerMinute` on the sandbox). */
  limit: number;
  windowMs: number;
  /** Requests the sandbox counted against the application (attributed to it, not refused with 429). */
  requests: number;
  /** Requests the sandbox refused with 429 for the application's own window. */
  rateLimited: number;
  /** The most counted requests in any interval of `windowMs`, and when the first of the busiest began (ISO). */
  busiestWindow: { requests: number; startedAt: string | null };
  /** busiestWindow.requests ÷ limit. */
  ratio: number;
  /** More requests than the limit in some window. */
  over: boolean;
}

/** The most of `times` (epoch ms, in any order) in any interval [t, t + windowMs), and the earliest t reaching it. */
export function busiestWindow(times: readonly number[], windowMs: number): { count: number; startedAt: number | null } {
  const sorted = [...times].sort((a, b) => a - b);
  let best = { count: 0, startedAt: null as number | null };
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    const count = last - first + 1;
    if (count > best.count) best = { count, startedAt: sorted[first]! };
  }
  return best;
}

export function budgetOf(
  requests: readonly RequestRecord[],
  applicationId: string,
  limit: number,
  windowMs: number,
): BudgetVerdict {
  const own = requests.filter((r) => r.service === 'compliance' && r.applicationId === applicationId);
  const counted = own.filter((r) => r.status !== 429);
  const busiest = busiestWindow(
    counted.map((r) => r.at),
    windowMs,
  );
  return {
    limit,
    windowMs,
    requests: counted.length,
    rateLimited: own.length - counted.length,
    busiestWindow: {
      requests: busiest.count,
      startedAt: busiest.startedAt === null ? null : new Date(busiest.startedAt).toISOString(),
    },
    ratio: limit > 0 ? busiest.count / limit : Number.POSITIVE_INFINITY,
    over: busiest.count > limit,
  };
}

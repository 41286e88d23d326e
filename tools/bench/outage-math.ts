/**
 * The outage section's arithmetic, kept apart from the run so it can be tested: the busiest sliding minute of an
 * application while its outage lasted, the share of waiting sales signed out of their order, and the time the
 * recovery took beyond what the rate budget itself needs for the backlog. Every input comes from the sandbox's
 * records (its request log, its documents' history) and the bench's own start times.
 */
import { busiestWindow } from './tenancy-math.js';

/**
 * The most requests in any `windowMs` (sliding, half-open) that lies within [from, to): when the interval is shorter
 * than a window, every request in it. Only requests inside the interval count, so traffic before or after the outage
 * (the backlog draining) is not charged to the outage.
 */
export function mostInWindowWithin(times: readonly number[], from: number, to: number, windowMs: number): number {
  return busiestWindow(
    times.filter((at) => at >= from && at < to),
    windowMs,
  ).count;
}

/** The routes an authority outage refuses: filing a sale or a credit note, and resubmitting a sale. */
export const SUBMISSION_ROUTES: readonly string[] = ['/v1/sales', '/v1/credit-notes', '/v1/sales/:id/retry'];

/**
 * Whether a request is one the outage answers, so one that could only be spent on it: every request while the
 * service is down; only submissions while the authority is, since reads, items and stock keep working then and the
 * backlog's other work rightly goes on.
 */
export function metByOutage(side: 'service' | 'authority', request: { method: string; route: string }): boolean {
  return side === 'service' || (request.method === 'POST' && SUBMISSION_ROUTES.includes(request.route));
}

/** The busiest sliding `windowMs` of the whole run over the limit per window: above 1, the budget was overdrawn. */
export function busiestShareOfLimit(times: readonly number[], windowMs: number, limitPerWindow: number): number {
  return busiestWindow(times, windowMs).count / limitPerWindow;
}

export interface WaitedSale {
  /** When the bench started it, epoch ms. */
  startedAt: number;
  /** When the sandbox signed it (its document's first `completed`), epoch ms; NaN: never signed. */
  signedAt: number;
}

/**
 * Of every pair of sales with different start times, the share signed in the opposite order (the later started
 * signed strictly first). Pairs signed at the same instant are not inverted. A sale never signed counts as signed
 * after every other, so leaving the oldest behind shows; 0 with fewer than two sales.
 */
export function orderInversionShare(sales: readonly WaitedSale[]): number {
  const signed = (s: WaitedSale) => (Number.isNaN(s.signedAt) ? Number.POSITIVE_INFINITY : s.signedAt);
  let pairs = 0;
  let inverted = 0;
  for (let i = 0; i < sales.length; i++) {
    for (let j = i + 1; j < sales.length; j++) {
      const a = sales[i]!;
      const b = sales[j]!;
      if (a.startedAt === b.startedAt) continue;
      pairs += 1;
      const [first, second] = a.startedAt < b.startedAt ? [a, b] : [b, a];
      if (signed(first) > signed(second)) inverted += 1;
    }
  }
  return pairs === 0 ? 0 : inverted / pairs;
}

export interface Recovery {
  /** From the outage's end to the last waiting sale signed, seconds; NaN when one was never signed. */
  lastSignedAfterSeconds: number;
  /** What the budget alone needs to sign the backlog: waiting sales ÷ the application's requests per second. */
  budgetSeconds: number;
  /** The difference: time lost to the way the sales wait, not to the budget. NaN when a sale was never signed. */
  overheadSeconds: number;
}

/**
 * How long the backlog took to clear once the outage ended, beyond the budget's own share: a sale is one signing
 * request, so `waiting` sales need at least `waiting ÷ (requestsPerMinute / 60)` seconds however well they are paced.
 */
export function recovery(signedAt: readonly number[], outageEndedAt: number, requestsPerMinute: number): Recovery {
  const budgetSeconds = signedAt.length / (requestsPerMinute / 60);
  if (signedAt.length === 0) return { lastSignedAfterSeconds: 0, budgetSeconds: 0, overheadSeconds: 0 };
  const last = signedAt.some(Number.isNaN) ? Number.NaN : Math.max(...signedAt);
  const lastSignedAfterSeconds = (last - outageEndedAt) / 1000;
  return { lastSignedAfterSeconds, budgetSeconds, overheadSeconds: lastSignedAfterSeconds - budgetSeconds };
}

/** How many entries beyond the first each key has (0 when every key is unique): a document or reference twice. */
export function repeats(keys: readonly string[]): { extra: number; repeated: string[] } {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  const repeated = [...counts].filter(([, n]) => n > 1);
  return { extra: repeated.reduce((sum, [, n]) => sum + n - 1, 0), repeated: repeated.map(([k]) => k) };
}

/**
 * When each sale is started so the backlog arrives through the outage rather than at once: `sales` starts spread
 * evenly over the first `share` of it, the first at its beginning. Distinct start times make the order measurable.
 */
export function startOffsets(sales: number, durationMs: number, share: number): number[] {
  const span = durationMs * share;
  return Array.from({ length: sales }, (_, i) => Math.round((i * span) / sales));
}

/**
 * The stock section's arithmetic, pure so the unit tests hold it to the definitions in docs/benchmarks.md:
 * the time scale (a run k times faster than real: the sandbox's rate window, the worker's budget and its
 * STOCK_MAX_DELAY scaled alike, every figure scaled back), which recorded movement carried each sold line (matched
 * from the sandbox's movement records alone), the exactly-once balance of each item, and the sales whose lines
 * needed an operator.
 */
import type { LedgerMovement } from '../../src/contracts/stock-ledger.js';
import { perMinute } from './budget-math.js';
import { percentile } from './stats.js';

const MINUTE_MS = 60_000;

/** A run k times faster than real time, and what it sets. */
export interface StockScale {
  k: number;
  /** The sandbox's rate window: a real minute over k. */
  windowMs: number;
  /** The application's limit per window: its real limit per minute. */
  requestsPerWindow: number;
  /** COMPLIANCE_REQUESTS_PER_MINUTE of the worker: the same limit per (real) minute of the scaled run. */
  workerRequestsPerMinute: number;
  /** STOCK_MAX_DELAY of the worker, scaled, in ms. */
  maxDelayMs: number;
}

/**
 * The scale of a run: `k` must divide a minute into whole milliseconds and leave a max delay of at least the
 * second the worker accepts (src/config/stock-reporting.ts).
 */
export function stockScale(k: number, options: { requestsPerMinute: number; maxDelaySeconds: number }): StockScale {
  const windowMs = MINUTE_MS / k;
  const maxDelayMs = (options.maxDelaySeconds * 1000) / k;
  if (!Number.isInteger(windowMs) || !Number.isInteger(maxDelayMs) || k < 1)
    throw new RangeError(
      `stock: k = ${k} does not scale a minute and ${options.maxDelaySeconds} s to whole milliseconds`,
    );
  if (maxDelayMs < 1000)
    throw new RangeError(`stock: k = ${k} makes the max delay ${maxDelayMs} ms, below the worker's 1 s`);
  return {
    k,
    windowMs,
    requestsPerWindow: options.requestsPerMinute,
    workerRequestsPerMinute: perMinute(options.requestsPerMinute, windowMs),
    maxDelayMs,
  };
}

/** Real milliseconds of the run for `scaledMinutes` minutes of the time it stands for. */
export const runMs = (scaledMinutes: number, k: number): number => (scaledMinutes * MINUTE_MS) / k;

/** `count` events over [from, to) of the scaled run, per minute of the time it stands for. */
export function perScaledMinute(count: number, from: number, to: number, k: number): number {
  return to > from ? count / (((to - from) * k) / MINUTE_MS) : Number.NaN;
}

/** Events at `times` within [from, to). */
export const countWithin = (times: readonly number[], from: number, to: number): number =>
  times.filter((t) => t >= from && t < to).length;

/** A stock-tracked line of a sale the sandbox signed. */
export interface SoldLine {
  saleWorkflowId: string;
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  /** When the sandbox signed its sale (epoch ms). */
  signedAt: number;
}

/** A movement as the sandbox recorded it (GET /__sandbox/compliance/stock/movements), its time as epoch ms. */
export interface RecordedMovement {
  itemId: string;
  action: 'ADD' | 'DEDUCT';
  quantity: number;
  referenceId: string | null;
  at: number;
}

export interface CarriedLine {
  line: SoldLine;
  /** The movement that carried it; undefined when none recorded after its sale covers it. */
  movement: RecordedMovement | undefined;
}

const groupKey = (itemId: string, action: string) => `${itemId}\u0000${action}`;

function groupBy<T>(values: readonly T[], key: (v: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const v of values) {
    const k = key(v);
    const group = groups.get(k);
    if (group) group.push(v);
    else groups.set(k, [v]);
  }
  return groups;
}

/**
 * Which recorded movement carried each line. A coalesced movement's referenceId is not a line's, so lines are matched
 * by quantity: per item and action, the lines in the order their sales were signed, the movements (probes, of
 * quantity 0, left out) in the order the sandbox recorded them; a line is carried by the first movement recorded
 * after its sale was signed whose running total reaches the line's running total. The ledger takes lines in the order
 * they are handed over and sends all of an item's pending ones at once, so this is exact up to sales signed within
 * moments of each other (whose order of hand-over may differ from their order of signing).
 */
export function carryLines(lines: readonly SoldLine[], movements: readonly RecordedMovement[]): CarriedLine[] {
  const moved = groupBy(
    movements.filter((m) => m.quantity > 0),
    (m) => groupKey(m.itemId, m.action),
  );
  const out: CarriedLine[] = [];
  for (const [key, group] of groupBy(lines, (l) => groupKey(l.itemId, l.action))) {
    // Stable sorts: equal times keep the order given (the sandbox's records are in the order it made them).
    const sold = [...group].sort((a, b) => a.signedAt - b.signedAt);
    const recorded = [...(moved.get(key) ?? [])].sort((a, b) => a.at - b.at);
    let lineTotal = 0;
    let movedTotal = 0;
    let next = 0;
    for (const line of sold) {
      lineTotal += line.quantity;
      while (
        next < recorded.length &&
        (movedTotal + recorded[next]!.quantity < lineTotal || recorded[next]!.at < line.signedAt)
      ) {
        movedTotal += recorded[next]!.quantity;
        next += 1;
      }
      // The covering movement itself is not passed over: the next line may be carried by it too.
      out.push({ line, movement: recorded[next] });
    }
  }
  return out;
}

/** Each carried line's lag (signed → its movement recorded) in seconds of the time the run stands for; uncarried lines left out. */
export const scaledLagSeconds = (carried: readonly CarriedLine[], k: number): number[] =>
  carried.flatMap((c) => (c.movement ? [((c.movement.at - c.line.signedAt) * k) / 1000] : []));

export interface LagSummary {
  lines: number;
  /** Lines no recorded movement carried (none should be). */
  uncarried: number;
  p50Seconds: number;
  p99Seconds: number;
  maxSeconds: number;
}

/** Over `carried`; a line no movement carried counts as an infinite lag (it was never reported), so it shows in the p99. */
export function lagSummary(carried: readonly CarriedLine[], k: number): LagSummary {
  const lags = scaledLagSeconds(carried, k);
  const uncarried = carried.length - lags.length;
  const all = [...lags, ...Array.from({ length: uncarried }, () => Number.POSITIVE_INFINITY)];
  return {
    lines: carried.length,
    uncarried,
    p50Seconds: percentile(all, 50),
    p99Seconds: percentile(all, 99),
    maxSeconds: all.length ? Math.max(...all) : Number.NaN,
  };
}

/** The exactly-once rule, from the sandbox's records and the lines sold: every item's recorded quantity is its lines', no referenceId twice. */
export interface ExactlyOnce {
  /** (item, action) pairs whose recorded quantity is not the sum of their lines'. */
  mismatched: Array<{ itemId: string; action: 'ADD' | 'DEDUCT'; sold: number; recorded: number }>;
  /** referenceIds the sandbox recorded more than once. */
  duplicateReferenceIds: string[];
}

export function exactlyOnce(lines: readonly SoldLine[], movements: readonly RecordedMovement[]): ExactlyOnce {
  const totals = new Map<string, { itemId: string; action: 'ADD' | 'DEDUCT'; sold: number; recorded: number }>();
  const entry = (itemId: string, action: 'ADD' | 'DEDUCT') => {
    const key = groupKey(itemId, action);
    let e = totals.get(key);
    if (!e) totals.set(key, (e = { itemId, action, sold: 0, recorded: 0 }));
    return e;
  };
  for (const l of lines) entry(l.itemId, l.action).sold += l.quantity;
  for (const m of movements) entry(m.itemId, m.action).recorded += m.quantity;
  const seen = new Map<string, number>();
  for (const m of movements) if (m.referenceId !== null) seen.set(m.referenceId, (seen.get(m.referenceId) ?? 0) + 1);
  return {
    mismatched: [...totals.values()].filter((e) => e.sold !== e.recorded),
    duplicateReferenceIds: [...seen].filter(([, n]) => n > 1).map(([id]) => id),
  };
}

/** A movement that needed a person: waiting for one, or settled by one. */
export const neededOperator = (m: Pick<LedgerMovement, 'status' | 'settledBy'>): boolean =>
  m.status === 'needs_operator' || m.settledBy === 'operator';

/** The sales with a line in a movement that needed an operator. */
export function salesNeedingOperator(
  movements: ReadonlyArray<Pick<LedgerMovement, 'status' | 'settledBy' | 'lines'>>,
): Set<string> {
  return new Set(movements.filter(neededOperator).flatMap((m) => m.lines.map((l) => l.saleWorkflowId)));
}

/**
 * The steady part of a backlog: from `warmMs` after its first sale was signed (the first max delay, while no line
 * is old enough to go out at till priority, signs more than the steady state can) to when the tills stopped.
 */
export function steadyWindow(
  firstSignedAt: number,
  tillsStoppedAt: number,
  warmMs: number,
): { from: number; to: number } {
  return { from: firstSignedAt + warmMs, to: tillsStoppedAt };
}

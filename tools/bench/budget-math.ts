/**
 * How much of the compliance service's rate limit a backlog used, from the service's own request log. The
 * sandbox's limiter has fixed windows that open with the first request counted in them and last `windowMs`
 * (contract decision C43); refused (429) requests are not counted. The windows are rebuilt from the log the same way.
 */

export interface LoggedRequest {
  /** Arrival, epoch ms. */
  at: number;
  status: number;
}

export interface RateWindow {
  start: number;
  end: number;
  /** Requests the limiter counted in it (every answer but 429). */
  counted: number;
}

export interface Utilisation {
  /** Complete windows counted: opened and closed while the backlog still held a window's worth of requests. */
  windows: number;
  /** Non-429 answers in those windows. */
  productive: number;
  /** limit × (time from the first counted window's start to the last one's end) / windowMs: idle gaps count as unused. */
  allowed: number;
  utilisation: number;
  /** Every request in the log given (the whole run), and the 429 answers among them. */
  requests: number;
  rateLimited: number;
  rateLimitedShare: number;
  /** Requests counted in each complete window, and the idle gap before each (ms): where the unused budget went. */
  perWindow: Array<{ counted: number; gapBeforeMs: number }>;
}

export const isProductive = (r: LoggedRequest) => r.status !== 429;

/** The limiter's windows, rebuilt from the requests it counted. */
export function rebuildWindows(requests: readonly LoggedRequest[], windowMs: number): RateWindow[] {
  const windows: RateWindow[] = [];
  for (const r of [...requests].sort((a, b) => a.at - b.at)) {
    if (!isProductive(r)) continue;
    const open = windows.at(-1);
    if (open && r.at < open.end) open.counted += 1;
    else windows.push({ start: r.at, end: r.at + windowMs, counted: 1 });
  }
  return windows;
}

/**
 * Utilisation of `limit` requests per `windowMs` over the complete windows of the backlog: opened at or after
 * `backlogStartedAt` (see backlogReadyAt), closed before
 * `backlogDrainedAt` (the moment its last work was sent), and with at least a whole window's worth of its requests
 * still to come after them. Once less than that is left, a window can only be part-filled however the worker
 * behaves: the last sales' stock movements wait for their own signing, so the tail drains, it is not a backlog.
 */
export function utilisation(
  log: readonly LoggedRequest[],
  options: {
    windowMs: number;
    limit: number;
    runStartedAt?: number;
    backlogStartedAt?: number;
    backlogDrainedAt: number;
  },
): Utilisation {
  const { windowMs, limit, backlogDrainedAt } = options;
  const startedAt = options.backlogStartedAt ?? -Infinity;
  // The windows are rebuilt from the whole log: a request before the backlog (the worker's start-up reads) opened the
  // window the backlog's first request fell in, and every window after it follows from there.
  // `requests` and the 429s among them: the whole run's, from its first start.
  const requests = log.filter((r) => r.at >= (options.runStartedAt ?? startedAt));
  const productiveTimes = requests.filter(isProductive).map((r) => r.at);
  const stillToCome = (t: number) => productiveTimes.filter((at) => at >= t).length;
  const complete = rebuildWindows(log, windowMs).filter(
    (w) => w.start >= startedAt && w.end <= backlogDrainedAt && stillToCome(w.end) >= limit,
  );
  const from = complete[0]?.start ?? 0;
  const to = complete.at(-1)?.end ?? 0;
  const productive = requests.filter((r) => isProductive(r) && r.at >= from && r.at < to).length;
  const allowed = complete.length === 0 ? 0 : (limit * (to - from)) / windowMs;
  const rateLimited = requests.filter((r) => r.status === 429).length;
  return {
    windows: complete.length,
    productive,
    allowed: Math.round(allowed * 10) / 10,
    utilisation: allowed > 0 ? productive / allowed : Number.NaN,
    requests: requests.length,
    rateLimited,
    rateLimitedShare: requests.length > 0 ? rateLimited / requests.length : 0,
    perWindow: complete.map((w, i) => ({
      counted: w.counted,
      gapBeforeMs: i === 0 ? 0 : w.start - complete[i - 1]!.end,
    })),
  };
}

/** The per-minute figure a worker is configured with for `limit` requests per `windowMs`. */
export function perMinute(limit: number, windowMs: number): number {
  return Math.round((limit * 60_000) / windowMs);
}

/**
 * The first moment at least `limit` activities were waiting in their queue (scheduled, not yet started): from then on
 * a window left part-empty is the pacing's doing. Before it, the worker was still turning started workflows into
 * scheduled activities, which is the cost of its workflow tasks, not the use of its rate budget. Undefined if never.
 */
export function backlogReadyAt(
  activities: ReadonlyArray<{ scheduledAt: number; startedAt: number }>,
  limit: number,
): number | undefined {
  for (const t of activities.map((a) => a.scheduledAt).sort((a, b) => a - b)) {
    const waiting = activities.filter((a) => a.scheduledAt <= t && a.startedAt > t).length;
    if (waiting >= limit) return t;
  }
  return undefined;
}

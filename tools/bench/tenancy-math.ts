/**
 * The tenancy section's arithmetic over the compliance sandbox's request log, per application (each request is
 * tagged there with the application whose key sent it, and its arrival time and answer): the most any application
 * sent in any window, the use of its budget while it had a backlog, and the share of 429s. Pure, so the unit tests
 * hold it to the definitions in docs/benchmarks.md.
 */
import { isProductive, rebuildWindows, type LoggedRequest } from './budget-math.js';
import { median } from './stats.js';

/** One application's requests in the log and its limit. */
export interface ApplicationRequests {
  application: string;
  /** Requests allowed per rate window (the sandbox's figure; the tenants file says the same per minute). */
  limitPerWindow: number;
  requests: readonly RoutedRequest[];
}

/** A logged request, with its route when known ("POST /v1/sales"), to say what filled a window. */
export interface RoutedRequest extends LoggedRequest {
  route?: string;
}

/**
 * The busiest `windowMs` (half-open [t, t + windowMs), t anywhere: a sliding window, so the result does not depend on
 * where the service's windows happen to open): how many requests it holds and where it starts. Every request counts,
 * a refused one too: it was sent.
 */
export function busiestWindow(times: readonly number[], windowMs: number): { count: number; start: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let best = { count: 0, start: Number.NaN };
  let first = 0;
  // The busiest window can always be slid to start at one of the requests.
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    if (last - first + 1 > best.count) best = { count: last - first + 1, start: sorted[first]! };
  }
  return best;
}

export const mostInAnyWindow = (times: readonly number[], windowMs: number): number =>
  busiestWindow(times, windowMs).count;

/** The most requests sent (429s included) in one of the service's own windows, rebuilt as its limiter opens them. */
export function mostInLimiterWindow(requests: readonly LoggedRequest[], windowMs: number): number {
  const windows = rebuildWindows(requests, windowMs);
  return Math.max(0, ...windows.map((w) => requests.filter((r) => r.at >= w.start && r.at < w.end).length));
}

export interface BusiestApplication {
  /** The most requests any application sent in any window, over its limit per window. */
  ratio: number;
  application: string;
  sent: number;
  limitPerWindow: number;
  /** What its busiest window held, by route (and status when not 2xx): e.g. an activity that makes two requests. */
  routes: Record<string, number>;
  /** The same in the service's own (fixed) windows, where more than the limit means 429s. */
  limiterWindowRatio: number;
}

/** Over all applications: the one that came nearest its limit (sliding window), and the worst in the limiter's windows. */
export function busiestApplication(applications: readonly ApplicationRequests[], windowMs: number): BusiestApplication {
  let busiest: BusiestApplication = {
    ratio: 0,
    application: '',
    sent: 0,
    limitPerWindow: 0,
    routes: {},
    limiterWindowRatio: 0,
  };
  let limiterWorst = 0;
  for (const a of applications) {
    const window = busiestWindow(
      a.requests.map((r) => r.at),
      windowMs,
    );
    const ratio = window.count / a.limitPerWindow;
    if (ratio > busiest.ratio) {
      const inWindow = a.requests.filter((r) => r.at >= window.start && r.at < window.start + windowMs);
      busiest = {
        ratio,
        application: a.application,
        sent: window.count,
        limitPerWindow: a.limitPerWindow,
        routes: countRoutes(inWindow),
        limiterWindowRatio: 0,
      };
    }
    limiterWorst = Math.max(limiterWorst, mostInLimiterWindow(a.requests, windowMs) / a.limitPerWindow);
  }
  return { ...busiest, limiterWindowRatio: limiterWorst };
}

function countRoutes(requests: readonly RoutedRequest[]): Record<string, number> {
  const routes: Record<string, number> = {};
  for (const r of requests) {
    const key = `${r.route ?? '?'}${r.status >= 200 && r.status < 300 ? '' : ` ${r.status}`}`;
    routes[key] = (routes[key] ?? 0) + 1;
  }
  return routes;
}

export interface BacklogUse {
  /** Requests the service served (every answer but 429) from the backlog's start to its end. */
  productive: number;
  /** limit × (end − start) / windowMs: what the application's budget allowed over that time. */
  allowed: number;
  utilisation: number;
  seconds: number;
}

/**
 * How much of its budget an application used while it had a backlog: from `from` (its sales were started) to `to`
 * (the bench ended the backlog, or its last request if it drained first). The time to the first request counts as
 * unused budget, as any idle time does.
 */
export function backlogUse(
  requests: readonly LoggedRequest[],
  options: { from: number; to: number; limitPerWindow: number; windowMs: number },
): BacklogUse {
  const { from, to, limitPerWindow, windowMs } = options;
  const productive = requests.filter((r) => isProductive(r) && r.at >= from && r.at < to).length;
  const allowed = to > from ? (limitPerWindow * (to - from)) / windowMs : 0;
  return {
    productive,
    allowed: Math.round(allowed * 10) / 10,
    utilisation: allowed > 0 ? productive / allowed : Number.NaN,
    seconds: Math.round((to - from) / 100) / 10,
  };
}

/** 429 answers over all requests, every application together (0 for no requests). */
export function rateLimitedShare(applications: readonly ApplicationRequests[]): {
  requests: number;
  rateLimited: number;
  share: number;
} {
  const all = applications.flatMap((a) => a.requests);
  const rateLimited = all.filter((r) => r.status === 429).length;
  return { requests: all.length, rateLimited, share: all.length > 0 ? rateLimited / all.length : 0 };
}

/** The quiet merchant's median time to signed under the flood, over its median alone. */
export function isolationRatio(aloneMs: readonly number[], floodedMs: readonly number[]): number {
  return median(floodedMs) / median(aloneMs);
}

/**
 * What goes wrong during a chaos run, decided from the seed alone: the sandbox's fault rules (5xx, connection
 * resets, commit-then-fail on every write route, callback faults), the 429 storms, when a worker is killed and
 * when the Temporal server restarts, and two outages with a start and an end (the compliance service down, the tax
 * authority down).
 */
import type { FaultRuleInput } from '../../sandbox/shared/faults.js';
import type { OutageInput } from '../../sandbox/shared/outages.js';
import { deriveSeed, Dice } from './seed.js';

/** Shares of compliance API requests answered by each fault while faults are on. */
export const FAULT_SHARES = {
  /** 5xx without handling the request (half 500, half 503), every route. */
  serverError: 0.1,
  /** Connection dropped before handling, every route. */
  reset: 0.05,
  /** Handled, then answered 503 or dropped (half each), write routes only. */
  commitThenFail: 0.05,
} as const;

/** Every compliance route that files or records something. */
export const WRITE_ROUTES = [
  '/v1/sales',
  '/v1/credit-notes',
  '/v1/sales/:id/retry',
  '/v1/stock/adjustments',
  '/v1/items',
  '/v1/items/:id/register',
] as const;
const WRITE_PATHS = 're:^/v1/(sales|credit-notes|sales/[^/]+/retry|stock/adjustments|items|items/[^/]+/register)$';
const API_PATHS = 're:^/v1/';

export const WORKER_KILL_EVERY_MS = 20_000;

export interface Storm {
  atMs: number;
  durationMs: number;
  rule: FaultRuleInput;
}

/** Outages last 20–40 s, less in a short run so both fit in it one after the other. */
export const OUTAGE_MS = { min: 20_000, max: 40_000 } as const;
/** At most this share of the fault time each, so both fit with room before, between and after. */
const OUTAGE_SHARE_MAX = 0.35;

/** An outage the sandbox makes at `atMs` (from the faults' start) for `durationMs`, ended before the faults stop. */
export interface PlannedOutage {
  atMs: number;
  durationMs: number;
  outage: OutageInput & { id: string };
}

export interface FaultPlan {
  /** Added when the faults start, all removed when they stop. */
  rules: FaultRuleInput[];
  /** 429 storms: each rule is added at `atMs` and removed `durationMs` later. */
  storms: Storm[];
  /** When the restartable worker is SIGKILLed (and started again at once). */
  workerKillsAtMs: number[];
  /** When the Temporal server is stopped and started again on the same port and file. */
  serverRestartAtMs: number;
  /** One service outage and one authority outage, in a seeded order, not overlapping, both within the faults. */
  outages: PlannedOutage[];
}

/**
 * Rules are tried in order and the first that fires answers, so each rule's probability is its share of what the
 * rules before it let through: the shares above are then the shares of all requests.
 */
function conditional(share: number, takenBefore: number): number {
  return share / (1 - takenBefore);
}

/** `rateLimit`: the limit the storms' 429 answers announce, the sandbox's own (a budget may read the header). */
export function faultPlan(seed: number, faultMs: number, rateLimit: number): FaultPlan {
  const dice = new Dice(deriveSeed(seed, 'fault-plan'));
  const half = (share: number) => share / 2;
  const { serverError, reset, commitThenFail } = FAULT_SHARES;
  const rules: FaultRuleInput[] = [
    {
      id: 'chaos-500',
      service: 'compliance',
      path: API_PATHS,
      kind: 'error',
      status: 500,
      probability: conditional(half(serverError), 0),
    },
    {
      id: 'chaos-503',
      service: 'compliance',
      path: API_PATHS,
      kind: 'error',
      status: 503,
      probability: conditional(half(serverError), half(serverError)),
    },
    {
      id: 'chaos-reset',
      service: 'compliance',
      path: API_PATHS,
      kind: 'reset',
      probability: conditional(reset, serverError),
    },
    {
      id: 'chaos-commit-then-503',
      service: 'compliance',
      method: 'POST',
      path: WRITE_PATHS,
      kind: 'commit-then-fail',
      status: 503,
      probability: conditional(half(commitThenFail), serverError + reset),
    },
    {
      id: 'chaos-commit-then-reset',
      service: 'compliance',
      method: 'POST',
      path: WRITE_PATHS,
      kind: 'commit-then-fail',
      failWith: 'reset',
      probability: conditional(half(commitThenFail), serverError + reset + half(commitThenFail)),
    },
    {
      id: 'chaos-callback-duplicate',
      service: 'compliance',
      kind: 'callback-duplicate',
      duplicates: dice.int(1, 2),
      probability: 0.2,
    },
    {
      id: 'chaos-callback-delay',
      service: 'compliance',
      kind: 'callback-delay',
      delayMs: dice.int(2_000, 5_000),
      probability: 0.2,
    },
    { id: 'chaos-callback-out-of-order', service: 'compliance', kind: 'callback-out-of-order', probability: 0.15 },
  ];

  const storms: Storm[] = [];
  for (let at = dice.int(3_000, 8_000); at < faultMs - 2_000; at += dice.int(10_000, 20_000)) {
    const durationMs = Math.min(dice.int(1_500, 4_000), faultMs - at);
    const retryAfterSeconds = dice.int(1, 2);
    storms.push({
      atMs: at,
      durationMs,
      rule: {
        id: `chaos-429-storm-${storms.length + 1}`,
        service: 'compliance',
        path: API_PATHS,
        kind: 'rate-limit',
        retryAfterSeconds,
        limit: rateLimit,
        probability: 0.8,
      },
    });
  }

  const workerKillsAtMs: number[] = [];
  for (let at = WORKER_KILL_EVERY_MS; at < faultMs; at += WORKER_KILL_EVERY_MS) workerKillsAtMs.push(at);

  // Mid-run, away from the very start (workers busy) and the end (faults about to stop).
  const serverRestartAtMs = Math.round(faultMs * (0.4 + 0.2 * dice.roll()));
  // Drawn last, so the rest of a seed's plan is what it was before outages were part of it.
  const outages = plannedOutages(dice, faultMs);
  return { rules, storms, workerKillsAtMs, serverRestartAtMs, outages };
}

/**
 * Both outages, each mode picked by the seed (a service answering 503 or dropping connections; an authority refusing
 * submissions as `authority_unavailable`, or holding them in flight and failing them at its end), one after the
 * other: the first starts after a sale or two had their chance, the second after the first ended, and it ends while
 * the faults are still on, so sales started during either meet the rest of the faults after it.
 */
function plannedOutages(dice: Dice, faultMs: number): PlannedOutage[] {
  const longest = Math.max(1_000, Math.min(OUTAGE_MS.max, Math.floor(faultMs * OUTAGE_SHARE_MAX)));
  const duration = () => dice.int(Math.min(OUTAGE_MS.min, longest), longest);
  const serviceFirst = dice.roll() < 0.5;
  const first = duration();
  const second = duration();
  // The room left is shared out at random before, between and after, at least a tenth of it after the last.
  const room = faultMs - first - second;
  const firstAt = Math.round(room * (0.05 + 0.4 * dice.roll()));
  const secondAt = firstAt + first + Math.round((room * 0.9 - firstAt) * dice.roll());
  const service = (atMs: number, durationMs: number): PlannedOutage => ({
    atMs,
    durationMs,
    outage: {
      id: 'chaos-service-outage',
      kind: 'service',
      service: 'compliance',
      mode: dice.roll() < 0.5 ? 'unavailable' : 'refuse',
    },
  });
  const authority = (atMs: number, durationMs: number): PlannedOutage => ({
    atMs,
    durationMs,
    outage: { id: 'chaos-authority-outage', kind: 'authority', mode: dice.roll() < 0.5 ? 'reject' : 'in_flight' },
  });
  return serviceFirst
    ? [service(firstAt, first), authority(secondAt, second)]
    : [authority(firstAt, first), service(secondAt, second)];
}

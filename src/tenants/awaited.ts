/** Entries whose service was down at start, asked again with a backoff (docs/tenancy.md, "…during an outage"). */
import type { Logger } from '../logger.js';
import type { AwaitedEntry } from './directory.js';
import {
  errorText,
  mapBounded,
  probeAccounting,
  probeComplianceOnce,
  variableFailure,
  type ComplianceProbe,
  type Outcome,
} from './probes.js';
import { ENVIRONMENT_ORIGIN } from './single-key.js';
import type { TenantsConfig } from './types.js';

/** The first wait is doubled after each try that did not settle everything, up to the longest. */
export interface OutageRetry {
  firstDelayMs?: number;
  maxDelayMs?: number;
}

const DEFAULT_FIRST_DELAY_MS = 5_000;
const DEFAULT_MAX_DELAY_MS = 60_000;
/** As at start-up: hundreds of keys down must not open hundreds of connections at each try. */
const ASKED_AT_ONCE = 8;

/**
 * Calls `attempt` after each wait until it returns no entry still awaited. When it throws (the service answered, but
 * what it said is refused), the asking goes on: a suspended application may come back, and a file change settles it.
 */
export function askAgainUntilAnswered(options: {
  retry: OutageRetry;
  awaited: readonly AwaitedEntry[];
  attempt: () => Promise<readonly AwaitedEntry[]>;
  logger: Logger | undefined;
}): { stop(): Promise<void> } {
  const { logger } = options;
  const first = options.retry.firstDelayMs ?? DEFAULT_FIRST_DELAY_MS;
  const max = Math.max(first, options.retry.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
  for (const entry of options.awaited) {
    logger?.warn(
      { service: entry.service, application: entry.application, entry: entry.source, cause: entry.reason },
      `the ${entry.service} service is unavailable: starting without this key, asked again until it answers ` +
        '(its businesses wait)',
    );
  }
  let waiting = options.awaited;
  let delayMs = first;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let trying: Promise<void> = Promise.resolve();
  const refusals = new Set<string>();

  const tryOnce = async () => {
    let still: readonly AwaitedEntry[];
    try {
      still = await options.attempt();
    } catch (err) {
      const message = errorText(err);
      if (!refusals.has(message)) {
        refusals.add(message);
        logger?.error(
          { err: message },
          'a service answered again, but the tenants it settles were refused: still waiting for them',
        );
      }
      still = waiting;
    }
    const left = new Set(still.map((entry) => entry.source));
    for (const entry of waiting) {
      if (!left.has(entry.source))
        logger?.info({ service: entry.service, application: entry.application }, 'the awaited key answered: served');
    }
    waiting = still;
    if (waiting.length === 0 || stopped) return;
    for (const entry of waiting) {
      logger?.debug(
        { application: entry.application, cause: entry.reason, retryInSeconds: delayMs / 1000 },
        'still waiting for the service',
      );
    }
    schedule();
  };
  const schedule = () => {
    timer = setTimeout(() => {
      timer = undefined;
      delayMs = Math.min(max, delayMs * 2);
      trying = tryOnce();
    }, delayMs);
    timer.unref();
  };
  schedule();

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await trying;
    },
  };
}

/**
 * The awaited entries whose service is still down, asking only them: while all are, a try costs one request per key.
 * An accepted compliance answer is kept in `cache`, so resolving the file afterwards does not ask it twice.
 */
export async function stillDown(
  config: TenantsConfig,
  awaited: readonly AwaitedEntry[],
  cache: Map<string, ComplianceProbe>,
): Promise<AwaitedEntry[]> {
  const singleKey = config.origin === ENVIRONMENT_ORIGIN;
  const answers = await mapBounded(awaited, ASKED_AT_ONCE, async (entry) => {
    const asked = await ask(config, entry, cache);
    if (!asked || !('failure' in asked.outcome) || !asked.outcome.outage) return undefined;
    const { outcome, service } = asked;
    return { ...entry, reason: singleKey ? variableFailure(entry.service, service, outcome.error) : outcome.failure };
  });
  return answers.filter((entry) => entry !== undefined);
}

async function ask(
  config: TenantsConfig,
  entry: AwaitedEntry,
  cache: Map<string, ComplianceProbe>,
): Promise<{ outcome: Outcome<unknown>; service: { baseUrl: string; signRequests?: boolean } } | undefined> {
  if (entry.service === 'compliance') {
    const tenant = config.compliance.find((candidate) => candidate.source === entry.source);
    return tenant && { outcome: await probeComplianceOnce(tenant, cache), service: tenant.service };
  }
  const tenant = config.accounting.find((candidate) => candidate.source === entry.source);
  if (!tenant) return undefined;
  const outcome = await probeAccounting(tenant);
  if ('ok' in outcome) await outcome.ok.client.close();
  return { outcome, service: tenant.service };
}

import type { Logger } from 'pino';
import type { FaultEngine } from '../shared/faults.js';
import { IdempotencyStore } from '../shared/idempotency-store.js';
import type { OutageSchedule } from '../shared/outages.js';
import { FixedWindowRateLimiter } from '../shared/rate-limiter.js';
import type { RequestStats } from '../shared/request-stats.js';
import { SimulatedAuthority } from './authority.js';
import { CallbackDispatcher } from './callbacks.js';
import { Filing } from './filing.js';
import type { ComplianceFixture } from './fixture-schema.js';
import { ComplianceState } from './state.js';
import { Timers } from './timers.js';

/** Everything the compliance routes share. */
export interface ComplianceContext {
  fixture: ComplianceFixture;
  state: ComplianceState;
  limiter: FixedWindowRateLimiter;
  /** Idempotency keys of document creation; the stored value is the id of the document filed. */
  idempotency: IdempotencyStore<string>;
  authority: SimulatedAuthority;
  filing: Filing;
  callbacks: CallbackDispatcher;
  timers: Timers;
  faults: FaultEngine;
  /** Outages of both services (shared with the accounting sandbox). */
  outages: OutageSchedule;
  stats: RequestStats;
  now: () => number;
  /** Back to the fixture: data, counters, rules, windows, keys, timers, outages. */
  reset(): void;
  close(): Promise<void>;
}

export function createContext(options: {
  fixture: ComplianceFixture;
  faults: FaultEngine;
  outages: OutageSchedule;
  stats: RequestStats;
  now: () => number;
  logger: Logger | undefined;
  onReset?: () => void;
}): ComplianceContext {
  const { fixture, faults, outages, stats, now } = options;
  const timers = new Timers();
  const state = new ComplianceState(fixture);
  const limiter = new FixedWindowRateLimiter({ windowMs: fixture.rateLimitWindowMs, now });
  const idempotency = new IdempotencyStore<string>({ ttlMs: fixture.idempotencyTtlMs, now });
  const authority = new SimulatedAuthority(fixture.authority);
  const callbacks = new CallbackDispatcher({ config: fixture.callbacks, faults, timers, now });
  const filing = new Filing({ state, authority, callbacks, timers, outages, now, logger: options.logger });
  return {
    fixture,
    state,
    limiter,
    idempotency,
    authority,
    filing,
    callbacks,
    timers,
    faults,
    outages,
    stats,
    now,
    reset() {
      timers.clear();
      callbacks.reset();
      filing.reset();
      state.reset();
      limiter.reset();
      idempotency.reset();
      authority.reset();
      // After filing.reset(): the outages it ends have nothing left to fail.
      outages.reset();
      options.onReset?.();
    },
    async close() {
      filing.close();
      timers.close();
      await callbacks.close();
    },
  };
}

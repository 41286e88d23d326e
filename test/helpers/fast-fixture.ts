import type { ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import { DEMO, defaultComplianceFixtureInput } from '../../sandbox/default-fixture.js';

/** How much shorter than the demo world's a test fixture's delays are. */
interface Pace {
  asyncDelayMs: number;
  /** The SLOW- rule's delay; undefined keeps the demo's. */
  slowRuleDelayMs?: number;
  callbacks: NonNullable<ComplianceFixtureInput['callbacks']>;
}

const PACES = {
  /** Tests of the sandbox itself: as short as its timers allow. */
  sandbox: {
    asyncDelayMs: 100,
    slowRuleDelayMs: 300,
    callbacks: { retryScheduleMs: [0, 50, 100], timeoutMs: 1_000, outOfOrderHoldMs: 400 },
  },
  /** Workflow tests: a worker on a shared Temporal server has time to see an async sale pending. */
  workflows: {
    asyncDelayMs: 300,
    callbacks: { retryScheduleMs: [0, 100, 200], timeoutMs: 1_000, outOfOrderHoldMs: 300 },
  },
} satisfies Record<string, Pace>;

export type TestPace = keyof typeof PACES;

/**
 * The demo world with its authority delays and callback retries at `pace` (default: the workflow tests'),
 * then changed further by `adjust`.
 */
export function fastFixture(
  adjust: (fixture: ComplianceFixtureInput) => void = () => {},
  pace: TestPace = 'workflows',
): ComplianceFixtureInput {
  const { asyncDelayMs, slowRuleDelayMs, callbacks }: Pace = PACES[pace];
  const fixture = structuredClone(defaultComplianceFixtureInput);
  fixture.authority = { ...fixture.authority, asyncDelayMs };
  if (slowRuleDelayMs !== undefined) {
    fixture.authority.rules = (fixture.authority.rules ?? []).map((rule) =>
      rule.id === DEMO.rules.slow ? { ...rule, delayMs: slowRuleDelayMs } : rule,
    );
  }
  fixture.callbacks = structuredClone(callbacks);
  adjust(fixture);
  return fixture;
}

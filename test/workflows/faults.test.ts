import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SubmissionResult } from '../../activities/types.js';
import { DEMO } from '../../sandbox/default-fixture.js';
import { closeTestEnv } from '../helpers/temporal.js';
import { activityResults, fastFixture, saleInput, startSaleHarness, type SaleHarness } from './harness.js';
import { expectRecordedOnce, type LedgerAt } from './ledger-reads.js';

let h: SaleHarness;
/** A stack whose compliance queue is limited to what a small rate budget allows. */
let budget: SaleHarness;

/** 4 requests per 1-second window; the queue starts 2 activities a second (half: Temporal's limiter allows a burst). */
const BUDGET = { windowMs: 1_000, requestsPerWindow: 4, activitiesPerSecond: 2 };

beforeAll(async () => {
  [h, budget] = await Promise.all([
    startSaleHarness(),
    startSaleHarness({
      activitiesPerSecond: BUDGET.activitiesPerSecond,
      // A contended budget holds a ledger's lines up to the max delay (3 minutes by default): kept within the test's.
      stockReporting: () => ({ mode: 'coalesced', maxDelaySeconds: 5 }),
      fixture: fastFixture((f) => {
        f.rateLimitWindowMs = BUDGET.windowMs;
        f.applications = f.applications.map((a) =>
          a.id === DEMO.applications.retail ? { ...a, requestsPerMinute: BUDGET.requestsPerWindow } : a,
        );
      }),
    }),
  ]);
});
afterEach(async () => {
  await h.sandbox.inspector.clearFaults();
});
afterAll(async () => {
  await Promise.all([h?.close(), budget?.close()]);
  await closeTestEnv();
});

/** The Nairobi branch's stock ledger: `h`'s sales start it, on `h`'s queue, so its movements go to `h`'s sandbox. */
const nairobiLedger = (): LedgerAt => ({
  client: h.client,
  taskQueue: h.taskQueue,
  businessId: DEMO.businesses.nairobi,
  branchId: DEMO.branches.nairobiCbd,
});

/** The sale handed its lines to the ledger and closed without waiting for them. */
function expectHandedOver(state: { stockMovements: Array<{ status: string }> }): void {
  expect(state.stockMovements.map((m) => m.status)).toEqual(['handed_over', 'handed_over']);
}

async function salePosts(since: number) {
  return (await h.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
    (r) => r.method === 'POST' && r.route === '/v1/sales',
  );
}

function isSubmission(value: unknown): value is SubmissionResult {
  return typeof value === 'object' && value !== null && 'outcome' in value && 'replayed' in value;
}

/** Every submission a sale's activities answered, signSale's included (it wraps the one it filed). */
function submissionsOf(results: unknown[]): SubmissionResult[] {
  return results
    .map((r) => (typeof r === 'object' && r !== null && 'submission' in r ? r.submission : r))
    .filter(isSubmission);
}

describe('faults of the compliance service', () => {
  it('finishes every sale of a 429 storm without a failure', async () => {
    await h.sandbox.inspector.addFault({ service: 'compliance', kind: 'rate-limit', retryAfterSeconds: 1, times: 10 });
    const since = Date.now();
    const handles = await Promise.all([1, 2, 3].map(() => h.start(saleInput())));
    const states = await Promise.all(handles.map((handle) => handle.result()));
    for (const state of states) {
      expect(state.step).toBe('completed');
      expect(state.sale?.status).toBe('completed');
      expect(state.submissions).toBe(1);
      expect(state.history.map((e) => e.event).filter((e) => e.startsWith('parked'))).toEqual([]);
      expectHandedOver(state);
      expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber })).toHaveLength(1);
    }
    // The ledger's movements met the storm too: every line recorded once all the same (merged lines of an item included).
    await expectRecordedOnce(
      nairobiLedger(),
      h.sandbox.inspector,
      states.flatMap((s) => s.stockMovements),
    );
    const log = await h.sandbox.inspector.requestLog({ since, service: 'compliance' });
    expect(log.filter((r) => r.status === 429)).toHaveLength(10);
    expect((await h.sandbox.inspector.requests()).faultsInjected['rate-limit']).toBe(10);
  });

  it('keeps concurrent sales under a small rate budget: the sandbox never answers 429', async () => {
    // Mombasa's: a business no sale of `h` touches, so its stock ledger runs on this stack and writes to this sandbox.
    const business = DEMO.businesses.mombasa;
    const started = Date.now();
    const handles = await Promise.all(
      [1, 2, 3, 4].map(() =>
        budget.start(
          saleInput({ businessId: business, lines: [{ itemId: DEMO.items.mombasaWater, quantity: 1, unitPrice: 50 }] }),
        ),
      ),
    );
    const states = await Promise.all(handles.map((handle) => handle.result()));
    expect(states.map((s) => s.sale?.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    // The stock ledger's movements spend the same budget.
    await expectRecordedOnce(
      {
        client: budget.client,
        taskQueue: budget.taskQueue,
        businessId: business,
        branchId: DEMO.branches.mombasaNyali,
      },
      budget.sandbox.inspector,
      states.flatMap((s) => s.stockMovements),
    );
    const summary = await budget.sandbox.inspector.requests();
    expect(summary.rateLimited).toBe(0);
    // Every request made was counted by the service, and yet none was refused.
    const made = (await budget.sandbox.inspector.requestLog({ since: started, service: 'compliance' })).length;
    expect(made).toBeGreaterThan(BUDGET.requestsPerWindow);
  }, 30_000);

  it.each([
    ['an error answer', 'error' as const, 503],
    ['a dropped connection', 'reset' as const, 0],
  ])(
    'files exactly one sale when its creation is committed and then lost to %s',
    async (_label, failWith, seenStatus) => {
      await h.sandbox.inspector.addFault({
        service: 'compliance',
        method: 'POST',
        path: '/v1/sales',
        kind: 'commit-then-fail',
        status: 503,
        failWith,
        times: 1,
      });
      const since = Date.now();
      const handle = await h.start(saleInput());
      const state = await handle.result();
      expect(state.sale?.status).toBe('completed');

      const filed = await h.sandbox.inspector.documents({
        businessId: DEMO.businesses.nairobi,
        traderInvoiceNumber: state.traderInvoiceNumber,
      });
      expect(filed).toHaveLength(1);
      expect(filed[0]?.sale.id).toBe(state.sale?.id);
      // The first request was filed but its answer lost; the retry with the same key was answered by a replay.
      expect((await salePosts(since)).map((r) => r.status)).toEqual([seenStatus, 200]);
      const submissions = submissionsOf(await activityResults(handle));
      expect(submissions.map((s) => [s.httpStatus, s.replayed, s.outcome])).toEqual([[200, true, 'signed']]);
      expectHandedOver(state);
      await expectRecordedOnce(nairobiLedger(), h.sandbox.inspector, state.stockMovements);
    },
  );

  it('retries a creation the service refused before handling it, filing one sale', async () => {
    await h.sandbox.inspector.addFault({
      service: 'compliance',
      method: 'POST',
      path: '/v1/sales',
      kind: 'error',
      status: 503,
      times: 2,
    });
    const since = Date.now();
    const state = await (await h.start(saleInput())).result();
    expect(state.sale?.status).toBe('completed');
    expect((await salePosts(since)).map((r) => r.status)).toEqual([503, 503, 201]);
    expect(await h.sandbox.inspector.documents({ traderInvoiceNumber: state.traderInvoiceNumber })).toHaveLength(1);
  });
});

import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { FAULT_SHARES, faultPlan, OUTAGE_MS } from '../../tools/chaos/fault-plan.js';
import { plannedSales } from '../../tools/chaos/sales.js';
import { deriveSeed, seededRandom } from '../../tools/chaos/seed.js';
import { chaosWorld, totalBudgetFor } from '../../tools/chaos/world.js';
import { FaultEngine } from '../../sandbox/shared/faults.js';

const FAULT_MS = 60_000;
const { catalog, applications } = chaosWorld({ totalRequestsPerMinute: 6000 });
const sales = (seed: number) => plannedSales({ seed, sales: 200, faultMs: FAULT_MS, catalog, date: '2026-11-22' });

/** The faults a fresh engine with the plan's rules and the seed's rolls injects into `requests` compliance calls, in order. */
async function injected(seed: number, requests: number): Promise<string[]> {
  const engine = new FaultEngine(faultPlan(seed, FAULT_MS, 6000).rules, seededRandom(deriveSeed(seed, 'sandbox')));
  const app = Fastify();
  engine.install(app, 'compliance', (status, code, message) => ({ error: { code, message, status } }));
  app.post('/v1/stock/adjustments', async () => ({ data: 'recorded' }));
  app.get('/v1/sales/:id', async () => ({ data: 'read' }));
  // Over real HTTP: a reset is a dropped connection, as the worker meets it.
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const seen: string[] = [];
  for (let i = 0; i < requests; i++) {
    const write = i % 2 === 0;
    try {
      const response = await fetch(write ? `${base}/v1/stock/adjustments` : `${base}/v1/sales/s${i}`, {
        method: write ? 'POST' : 'GET',
      });
      seen.push(`${response.status}`);
      await response.body?.cancel();
    } catch {
      seen.push('reset');
    }
  }
  await app.close();
  return seen;
}

describe('the chaos fault plan', () => {
  it('is the same for the same seed, and another for another seed', () => {
    expect(faultPlan(42, FAULT_MS, 6000)).toEqual(faultPlan(42, FAULT_MS, 6000));
    expect(faultPlan(43, FAULT_MS, 6000)).not.toEqual(faultPlan(42, FAULT_MS, 6000));
    expect(sales(42)).toEqual(sales(42));
    expect(sales(43)).not.toEqual(sales(42));
  });

  it('kills a worker every 20 s while faults are on, restarts the server mid-run, and storms only while faults are on', () => {
    const plan = faultPlan(7, FAULT_MS, 6000);
    expect(plan.workerKillsAtMs).toEqual([20_000, 40_000]);
    expect(plan.serverRestartAtMs).toBeGreaterThanOrEqual(0.4 * FAULT_MS);
    expect(plan.serverRestartAtMs).toBeLessThanOrEqual(0.6 * FAULT_MS);
    expect(plan.storms.length).toBeGreaterThanOrEqual(2);
    for (const storm of plan.storms) expect(storm.atMs + storm.durationMs).toBeLessThanOrEqual(FAULT_MS);
    expect(plan.storms[0]!.rule).toMatchObject({ kind: 'rate-limit', limit: 6000 });
  });

  it('adds a service outage and an authority outage, one after the other, each ending while the faults are on', () => {
    const kinds = new Set<string>();
    const modes = new Set<string>();
    for (let seed = 0; seed < 50; seed++) {
      for (const faultMs of [FAULT_MS, 200_000]) {
        const { outages } = faultPlan(seed, faultMs, 6000);
        expect(outages.map((o) => o.outage.kind).sort()).toEqual(['authority', 'service']);
        kinds.add(outages[0]!.outage.kind);
        const [first, second] = outages as [(typeof outages)[0], (typeof outages)[0]];
        expect(first.atMs).toBeGreaterThan(0);
        expect(second.atMs).toBeGreaterThanOrEqual(first.atMs + first.durationMs);
        expect(second.atMs + second.durationMs).toBeLessThan(faultMs);
        for (const o of outages) {
          expect(o.durationMs).toBeGreaterThanOrEqual(OUTAGE_MS.min);
          expect(o.durationMs).toBeLessThanOrEqual(OUTAGE_MS.max);
          modes.add(`${o.outage.kind}:${String(o.outage.mode)}`);
        }
      }
    }
    // Either may come first, and each mode of each is planned by some seed.
    expect(kinds).toEqual(new Set(['service', 'authority']));
    expect(modes).toEqual(
      new Set(['service:unavailable', 'service:refuse', 'authority:reject', 'authority:in_flight']),
    );
    // A short run still holds both, shorter.
    const short = faultPlan(3, 10_000, 6000).outages;
    expect(short).toHaveLength(2);
    expect(short[1]!.atMs + short[1]!.durationMs).toBeLessThan(10_000);
  });

  it('answers each fault in the share asked for: each rule takes its share of what the rules before it let through', () => {
    const rules = faultPlan(1, FAULT_MS, 6000).rules;
    const p = (id: string) => rules.find((r) => r.id === id)!.probability!;
    // The chance that a write request meets each fault, rules tried in order.
    let through = 1;
    const share = (id: string) => {
      const taken = through * p(id);
      through -= taken;
      return taken;
    };
    expect(share('chaos-500') + share('chaos-503')).toBeCloseTo(FAULT_SHARES.serverError, 10);
    expect(share('chaos-reset')).toBeCloseTo(FAULT_SHARES.reset, 10);
    expect(share('chaos-commit-then-503') + share('chaos-commit-then-reset')).toBeCloseTo(
      FAULT_SHARES.commitThenFail,
      10,
    );
  });

  it('makes 20 % of the sales refunds, with 1 to 3 lines each', () => {
    const planned = sales(5);
    expect(planned.filter((s) => s.refund).length).toBe(40);
    expect(planned.every((s) => s.input.lines.length >= 1 && s.input.lines.length <= 3)).toBe(true);
    expect(new Set(planned.map((s) => s.input.businessId)).size).toBe(4);
    expect(new Set(planned.map((s) => s.path))).toEqual(new Set(['immediate', 'async', 'flaky']));
    expect(planned.every((s) => s.startAtMs >= 0 && s.startAtMs <= FAULT_MS)).toBe(true);
  });

  it('spreads the sales over the three applications and all four businesses, each application with its own budget', () => {
    expect(applications.map((a) => [a.name, a.keyKind, a.businesses.length, a.requestsPerMinute])).toEqual([
      ['retail-group', 'organisation-wide', 2, 3000],
      ['lakeside', 'organisation-wide', 1, 1500],
      ['highlands', 'business-bound', 1, 1500],
    ]);
    // Sized from the plan's pace: CI's 60 sales started over 48 s, and the 1000 the issue asks for over 160 s.
    expect(totalBudgetFor(60, 48_000)).toBe(1200);
    expect(totalBudgetFor(1000, 160_000)).toBe(6000);
    expect(totalBudgetFor(1, 48_000)).toBe(600);
    expect(chaosWorld({ totalRequestsPerMinute: 1200 }).applications.map((a) => a.requestsPerMinute)).toEqual([
      600, 300, 300,
    ]);
    const planned = sales(9);
    const applicationOf = new Map(catalog.map((b) => [b.businessId, b.applicationId]));
    const perApplication = applications.map(
      (a) => planned.filter((s) => applicationOf.get(s.input.businessId) === a.applicationId).length,
    );
    // By business, evenly: retail-group's two businesses take about half.
    expect(perApplication.reduce((a, b) => a + b, 0)).toBe(200);
    expect(perApplication[0]).toBeGreaterThan(70);
    for (const n of perApplication.slice(1)) expect(n).toBeGreaterThan(30);
    // Every sale sells what its own business has, at one of its own branches.
    for (const s of planned) {
      const business = catalog.find((b) => b.businessId === s.input.businessId)!;
      expect(business.branchIds).toContain(s.input.branchId);
      for (const line of s.input.lines) expect(business.items.map((i) => i.itemId)).toContain(line.itemId);
    }
  });

  it('rolls the same faults for the same seed on the same requests', async () => {
    const first = await injected(11, 300);
    expect(await injected(11, 300)).toEqual(first);
    expect(await injected(12, 300)).not.toEqual(first);
    // Faults were injected at all: resets, 5xx and commit-then-fail answers among the 200s.
    expect(first).toContain('reset');
    expect(first.filter((s) => s === '500' || s === '503').length).toBeGreaterThan(10);
  });
});

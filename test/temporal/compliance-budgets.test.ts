/**
 * The plan that holds each rate window to its budget on the compliance queue: the default rate is the
 * most common one, every other window gets the weight that makes default × weight its own rate, and the queue as a
 * whole allows all of them together.
 */
import { describe, expect, it } from 'vitest';
import { planComplianceBudgets } from '../../src/temporal/compliance-budgets.js';

const perSecond = (requestsPerMinute: number) => requestsPerMinute / 60;
const window = (fairnessKey: string, requestsPerMinute: number) => ({
  fairnessKey,
  applications: [fairnessKey],
  requestsPerMinute,
  businesses: [`biz_${fairnessKey}`],
  ownQueue: false,
});

describe('planComplianceBudgets', () => {
  it('gives every window its own rate as default × weight, overriding only those off the most common budget', () => {
    const windows = [window('app_a', 120), window('app_b', 120), window('app_c', 60), window('app_d', 600)];
    const plan = planComplianceBudgets(windows, perSecond);
    expect(plan.defaultPerSecond).toBe(2);
    expect(plan.weights).toEqual({ app_c: 0.5, app_d: 5 });
    for (const w of windows)
      expect(plan.defaultPerSecond * (plan.weights[w.fairnessKey] ?? 1)).toBeCloseTo(w.requestsPerMinute / 60);
    expect(plan.queuePerSecond).toBeCloseTo((120 + 120 + 60 + 600) / 60);
  });

  it('with no window yet keeps one application’s budget, so the queue stays open and idle', () => {
    expect(planComplianceBudgets([], perSecond)).toEqual({ defaultPerSecond: 2, weights: {}, queuePerSecond: 2 });
  });
});

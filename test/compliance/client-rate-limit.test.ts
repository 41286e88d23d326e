import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEMO, defaultComplianceFixtureInput } from '../../sandbox/default-fixture.js';
import { apiErrorOf, useClients, useSandbox } from './helpers.js';

const LIMIT = 3;
const WINDOW_MS = 2_000;

// The demo world, with the retail application allowed 3 requests per 2-second window.
const sandbox = useSandbox({
  fixture: {
    compliance: {
      ...defaultComplianceFixtureInput,
      rateLimitWindowMs: WINDOW_MS,
      applications: defaultComplianceFixtureInput.applications.map((app) =>
        app.id === DEMO.applications.retail ? { ...app, requestsPerMinute: LIMIT } : app,
      ),
    },
  },
});
const client = useClients(sandbox);

describe('429 rate_limited', () => {
  it('counts down X-RateLimit-Remaining, then refuses with Retry-After; waiting that long is enough', async () => {
    const nairobi = client(DEMO.keys.nairobi);
    const remaining: Array<number | undefined> = [];
    for (let i = 0; i < LIMIT; i++) {
      const { meta } = await nairobi.listItems();
      expect(meta.rateLimit.limit).toBe(LIMIT);
      expect(meta.rateLimit.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(meta.rateLimit.resetSeconds).toBeLessThanOrEqual(WINDOW_MS / 1000);
      remaining.push(meta.rateLimit.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);

    // Another key of the same application shares the window.
    const err = await apiErrorOf(client(DEMO.keys.orgWide).getIdentity());
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retry: 'safe', requestSent: true });
    expect(err.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(err.retryAfterSeconds).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(err.rateLimit).toMatchObject({ limit: LIMIT, remaining: 0 });

    // Another application has its own window.
    const other = await client(DEMO.keys.otherApplication).getIdentity();
    expect(other.meta.rateLimit.limit).toBe(60);

    await sleep(err.retryAfterSeconds! * 1000 + 50);
    const after = await nairobi.listItems();
    expect(after.meta.rateLimit.remaining).toBe(LIMIT - 1);
  });

  it('the rate-limit headers are read from error answers too (C44)', async () => {
    const nairobi = client(DEMO.keys.nairobi);
    await sleep(WINDOW_MS + 50); // a fresh window
    const err = await apiErrorOf(nairobi.getSale('sale_does_not_exist'));
    expect(err).toMatchObject({ status: 404, code: 'not_found', rateLimit: { limit: LIMIT, remaining: LIMIT - 1 } });
    expect(err.rateLimit?.resetSeconds).toBeGreaterThanOrEqual(1);
  });
});

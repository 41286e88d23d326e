import { describe, expect, it } from 'vitest';
import { DEMO, errorOf, fastFixture, useTestSandbox } from './harness.js';

const LIMIT = 3;
const WINDOW_MS = 1_000;
const { sbx } = useTestSandbox({
  compliance: fastFixture((f) => {
    f.rateLimitWindowMs = WINDOW_MS;
    for (const app of f.applications) app.requestsPerMinute = LIMIT;
  }, 'sandbox'),
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('rate limiting per application (C43, C44)', () => {
  it('sends the three X-RateLimit headers on every authenticated answer and counts down', async () => {
    const client = sbx.client(DEMO.keys.nairobi);
    const first = await client.get('/v1/identity');
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(first.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
    expect(first.headers['x-ratelimit-reset']).toBe('1');
    // A 4xx answer counts too, and carries the headers.
    const refused = await client.get('/v1/sales/sale_unknown');
    expect(refused.status).toBe(404);
    expect(refused.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 2));
  });

  it('answers 429 rate_limited with Retry-After once the window is used up, and does not count it', async () => {
    const client = sbx.client(DEMO.keys.nairobi);
    for (let i = 0; i < LIMIT; i++) expect((await client.get('/v1/identity')).status).toBe(200);
    const limited = await client.get('/v1/identity');
    expect(limited.status).toBe(429);
    const error = errorOf(limited);
    expect(error.code).toBe('rate_limited');
    expect(error.message).toContain(`Rate limit of ${LIMIT} requests`);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-reset']).toBe('1');
    expect((await client.get('/v1/identity')).status).toBe(429);

    await sleep(WINDOW_MS + 50);
    const fresh = await client.get('/v1/identity');
    expect(fresh.status).toBe(200);
    expect(fresh.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('shares one window between the keys of an application and keeps applications apart', async () => {
    await sbx.client(DEMO.keys.nairobi).get('/v1/identity');
    await sbx.client(DEMO.keys.mombasa).get('/v1/identity');
    await sbx.client(DEMO.keys.orgWide).get('/v1/identity');
    expect((await sbx.client(DEMO.keys.readOnly).get('/v1/identity')).status).toBe(429);
    const other = await sbx.client(DEMO.keys.otherApplication).get('/v1/identity');
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('does not count 401s or the inspection API', async () => {
    const client = sbx.client(DEMO.keys.nairobi);
    for (let i = 0; i < 5; i++) await client.call('GET', '/v1/identity', { key: DEMO.keys.revoked });
    for (let i = 0; i < 5; i++) await sbx.sandbox.inspector.health();
    const answer = await client.get('/v1/identity');
    expect(answer.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('reports rate-limited requests in the inspection summary, tagged with the application', async () => {
    const client = sbx.client(DEMO.keys.nairobi);
    for (let i = 0; i < LIMIT + 2; i++) await client.get('/v1/identity');
    const summary = await sbx.sandbox.inspector.requests();
    expect(summary.rateLimited).toBe(2);
    const log = await sbx.sandbox.inspector.requestLog({ applicationId: DEMO.applications.retail });
    expect(log.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
  });
});

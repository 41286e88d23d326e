import { describe, expect, it } from 'vitest';
import { BusinessListEnvelopeSchema, IdentityEnvelopeSchema } from '../../../src/compliance/schemas.js';
import { DEMO, errorOf, saleRequest, useTestSandbox, type TestClient } from './harness.js';

const { sbx, client: nairobi } = useTestSandbox();
const orgWide = () => sbx.client(DEMO.keys.orgWide);

describe('API keys (401)', () => {
  const unusable: Array<[string, string | null]> = [
    ['missing', null],
    ['malformed', 'not-a-key'],
    ['too short after the prefix', 'cmp_sk_test_short'],
    ['unknown', 'cmp_sk_test_unknown_key_000000000'],
    ['revoked', DEMO.keys.revoked],
    ['expired', DEMO.keys.expired],
    ['of a suspended application', DEMO.keys.suspended],
  ];

  it.each(unusable)('refuses a %s key with one fixed message and no rate-limit headers', async (_what, key) => {
    const answer = await nairobi.call('GET', '/v1/identity', { key });
    expect(answer.status).toBe(401);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_api_key');
    expect(error.message).toBe('The API key is missing or not valid');
    expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('never echoes the presented key', async () => {
    const answer = await nairobi.call('GET', '/v1/identity', { key: DEMO.keys.revoked });
    expect(answer.body.toString()).not.toContain(DEMO.keys.revoked);
  });

  it('takes the key as a Bearer token too', async () => {
    const answer = await nairobi.call('GET', '/v1/identity', {
      key: null,
      headers: { authorization: `Bearer ${DEMO.keys.nairobi}` },
    });
    expect(answer.status).toBe(200);
  });

  it('refuses a malformed Authorization header', async () => {
    const answer = await nairobi.call('GET', '/v1/identity', {
      key: null,
      headers: { authorization: `Basic ${DEMO.keys.nairobi}` },
    });
    expect(answer.status).toBe(401);
  });
});

describe('identity and businesses (no scope needed)', () => {
  it('describes the application and the key', async () => {
    const answer = await sbx.client(DEMO.keys.readOnly).get('/v1/identity');
    expect(answer.status).toBe(200);
    const { data } = IdentityEnvelopeSchema.parse(answer.json);
    expect(data.application).toEqual({
      id: DEMO.applications.retail,
      name: 'Demo Retail POS',
      rateLimitPerMinute: 120,
    });
    expect(data.apiKey).toMatchObject({
      environment: 'test',
      scopes: ['sales:read'],
      businessId: DEMO.businesses.nairobi,
    });
  });

  it('lists only the businesses a key may act for', async () => {
    const ids = async (client: TestClient) =>
      BusinessListEnvelopeSchema.parse((await client.get('/v1/businesses')).json).data.businesses.map((b) => b.id);
    expect(await ids(orgWide())).toEqual([DEMO.businesses.nairobi, DEMO.businesses.mombasa]);
    expect(await ids(nairobi)).toEqual([DEMO.businesses.nairobi]);
    expect(await ids(sbx.client(DEMO.keys.live))).toEqual([DEMO.businesses.production]);
    expect(await ids(sbx.client(DEMO.keys.otherApplication))).toEqual([DEMO.businesses.kisumu]);
  });

  it('returns branches with their authority branch-office ids', async () => {
    const { data } = BusinessListEnvelopeSchema.parse((await nairobi.get('/v1/businesses')).json);
    expect(data.businesses[0]?.branches).toEqual([
      { id: DEMO.branches.nairobiCbd, name: 'Nairobi CBD', authorityBhfId: '00' },
      { id: DEMO.branches.nairobiWestlands, name: 'Westlands', authorityBhfId: '01' },
    ]);
  });
});

describe('scopes (403)', () => {
  it('refuses an operation whose scope the key lacks, before reading the body', async () => {
    const readOnly = sbx.client(DEMO.keys.readOnly);
    const answer = await readOnly.post('/v1/sales', { not: 'a sale' });
    expect(answer.status).toBe(403);
    expect(errorOf(answer)).toMatchObject({ code: 'forbidden', message: expect.stringContaining('sales:write') });
    expect(answer.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  });

  it.each([
    ['GET', '/v1/items', 'catalog:read'],
    ['POST', '/v1/items', 'catalog:write'],
    ['POST', '/v1/stock/adjustments', 'stock:write'],
    ['GET', '/v1/purchases', 'purchases:read'],
    ['POST', '/v1/credit-notes', 'sales:write'],
  ] as const)('%s %s needs %s', async (method, path, scope) => {
    const answer = await sbx.client(DEMO.keys.readOnly).call(method, path, method === 'POST' ? { body: {} } : {});
    expect(answer.status).toBe(403);
    expect(errorOf(answer).message).toContain(scope);
  });

  it('lets a sales:read key read sales', async () => {
    const created = await nairobi.post('/v1/sales', saleRequest());
    const id = (created.json as { data: { sale: { id: string } } }).data.sale.id;
    const answer = await sbx.client(DEMO.keys.readOnly).get(`/v1/sales/${id}`);
    expect(answer.status).toBe(200);
  });
});

describe('business resolution', () => {
  it('requires businessId from an organisation-wide key (400 naming businessId)', async () => {
    const answer = await orgWide().get('/v1/items');
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(/^businessId: /);
    expect(error.errors?.[0]).toMatchObject({ field: 'businessId' });
  });

  it('acts for the named business with an organisation-wide key', async () => {
    const answer = await orgWide().get('/v1/items', { businessId: DEMO.businesses.mombasa });
    expect(answer.status).toBe(200);
  });

  it('lets a bound key name its own business (C42) and refuses another (403)', async () => {
    expect((await nairobi.get('/v1/items', { businessId: DEMO.businesses.nairobi })).status).toBe(200);
    const other = await nairobi.get('/v1/items', { businessId: DEMO.businesses.mombasa });
    expect(other.status).toBe(403);
    expect(errorOf(other).code).toBe('forbidden');
  });

  it('refuses a business of another application and an unknown one alike (403, C41)', async () => {
    const foreign = await orgWide().get('/v1/items', { businessId: DEMO.businesses.kisumu });
    const unknown = await orgWide().get('/v1/items', { businessId: 'biz_does_not_exist' });
    expect(foreign.status).toBe(403);
    expect(unknown.status).toBe(403);
    expect(errorOf(foreign).message).toBe(errorOf(unknown).message);
  });

  it('refuses a test key on a production business and a live key on a sandbox business', async () => {
    const testOnProduction = await orgWide().get('/v1/items', { businessId: DEMO.businesses.production });
    expect(testOnProduction.status).toBe(403);
    expect(errorOf(testOnProduction).message).toContain('test key');
    const live = sbx.client(DEMO.keys.live);
    const liveOnSandbox = await live.get('/v1/items', { businessId: DEMO.businesses.nairobi });
    expect(liveOnSandbox.status).toBe(403);
    expect(errorOf(liveOnSandbox).message).toContain('live key');
    expect((await live.get('/v1/items', { businessId: DEMO.businesses.production })).status).toBe(200);
  });
});

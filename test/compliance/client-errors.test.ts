import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RequestValidationError } from '../../src/http/errors.js';
import { callJson } from '../../src/http/json-api.js';
import { DEMO, apiErrorOf, idempotencyKey, nairobiSale, useClients, useRawTransport, useSandbox } from './helpers.js';

const sandbox = useSandbox();
const client = useClients(sandbox);
const raw = useRawTransport(sandbox);

describe('401 invalid_api_key never says why', () => {
  it.each([
    ['revoked', DEMO.keys.revoked],
    ['expired', DEMO.keys.expired],
    ['suspended application', DEMO.keys.suspended],
    ['unknown', 'cmp_sk_test_not_a_key_that_exists_01'],
  ])('a %s key', async (_label, key) => {
    const err = await apiErrorOf(client(key).getIdentity());
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key', retry: 'final', requestSent: true });
    const known = await apiErrorOf(client(DEMO.keys.revoked).getIdentity());
    expect(err.message).toBe(known.message);
    expect(err.message).not.toContain(key);
    expect(JSON.stringify(err)).not.toContain(key);
  });

  it('a missing or malformed key (sent raw) gets the same answer', async () => {
    const reference = await apiErrorOf(client(DEMO.keys.revoked).getIdentity());
    const noKey = await apiErrorOf(
      callJson(raw(), { operation: 'raw', method: 'GET', path: '/v1/identity', idempotent: true }, z.unknown()),
    );
    const malformed = await apiErrorOf(
      callJson(
        raw(),
        { operation: 'raw', method: 'GET', path: '/v1/identity', idempotent: true, headers: { 'x-api-key': 'nope' } },
        z.unknown(),
      ),
    );
    for (const err of [noKey, malformed]) {
      expect(err).toMatchObject({ status: 401, code: 'invalid_api_key', message: reference.message });
    }
  });
});

describe('403 forbidden', () => {
  it('a key without the scope', async () => {
    const err = await apiErrorOf(client(DEMO.keys.readOnly).createSale(nairobiSale(), idempotencyKey()));
    expect(err).toMatchObject({ status: 403, code: 'forbidden', retry: 'final' });
  });

  it('a business-bound key naming another business', async () => {
    const err = await apiErrorOf(client(DEMO.keys.nairobi).listItems({ businessId: DEMO.businesses.mombasa }));
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('a business of another application (C41)', async () => {
    const err = await apiErrorOf(client(DEMO.keys.orgWide).listItems({ businessId: DEMO.businesses.kisumu }));
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('a test key against a production business, and a live key against a sandbox business', async () => {
    const testOnProduction = await apiErrorOf(
      client(DEMO.keys.orgWide).listItems({ businessId: DEMO.businesses.production }),
    );
    expect(testOnProduction).toMatchObject({ status: 403, code: 'forbidden' });
    const liveOnSandbox = await apiErrorOf(client(DEMO.keys.live).listItems({ businessId: DEMO.businesses.nairobi }));
    expect(liveOnSandbox).toMatchObject({ status: 403, code: 'forbidden' });
    // The live key does work for its own environment.
    const { data } = await client(DEMO.keys.live).listItems({ businessId: DEMO.businesses.production });
    expect(data.map((i) => i.id)).toContain(DEMO.items.productionTea);
  });
});

describe('404 not_found', () => {
  it("another business's sale is as unknown as a missing one", async () => {
    const { data: sale } = await client(DEMO.keys.nairobi).createSale(nairobiSale(), idempotencyKey());
    const other = await apiErrorOf(client(DEMO.keys.mombasa).getSale(sale.id));
    expect(other).toMatchObject({ status: 404, code: 'not_found', retry: 'final' });
    const missing = await apiErrorOf(client(DEMO.keys.mombasa).getSale('sale_does_not_exist'));
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    expect(Object.keys(other.details)).toEqual(Object.keys(missing.details));
  });
});

describe('400 invalid_request', () => {
  it.each([0, 101, -1, 'twenty'])('pageSize=%s sent raw is refused, not clamped', async (pageSize) => {
    const err = await apiErrorOf(
      callJson(
        raw(),
        {
          operation: 'listPurchases',
          method: 'GET',
          path: '/v1/purchases',
          query: { pageSize },
          headers: { 'x-api-key': DEMO.keys.nairobi },
          idempotent: true,
        },
        z.unknown(),
      ),
    );
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', retry: 'final' });
    expect(err.message).toContain('pageSize');
  });

  it('the client refuses the same page sizes before sending', async () => {
    const before = (await sandbox().inspector.requests()).total;
    for (const pageSize of [0, 101]) {
      await expect(client(DEMO.keys.nairobi).listPurchases({ pageSize })).rejects.toBeInstanceOf(
        RequestValidationError,
      );
    }
    expect((await sandbox().inspector.requests()).total).toBe(before);
    // Both edges are accepted by client and service alike.
    for (const pageSize of [1, 100]) {
      const { data } = await client(DEMO.keys.nairobi).listPurchases({ pageSize });
      expect(data.pagination.pageSize).toBe(pageSize);
    }
  });

  it('a malformed Idempotency-Key sent raw is refused naming the header', async () => {
    const err = await apiErrorOf(
      callJson(
        raw(),
        {
          operation: 'createSale',
          method: 'POST',
          path: '/v1/sales',
          headers: { 'x-api-key': DEMO.keys.nairobi, 'idempotency-key': 'bad key!' },
          body: JSON.stringify(nairobiSale()),
          idempotent: true,
        },
        z.unknown(),
      ),
    );
    expect(err).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(err.message).toContain('Idempotency-Key');
  });

  it('an unknown branch lists the branches in details', async () => {
    const err = await apiErrorOf(client(DEMO.keys.nairobi).registerItem(DEMO.items.sugar, { branchId: 'br_nowhere' }));
    expect(err).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(err.details.branches).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: DEMO.branches.nairobiCbd })]),
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient, type BillPaymentFilters } from '../../../src/accounting/client.js';
import {
  PAYMENT_METHODS,
  SORT_DIRECTIONS,
  SORT_FIELDS,
  SYNC_STATUSES,
  type BillPayment,
} from '../../../src/accounting/schemas.js';
import { ApiError, RequestValidationError } from '../../../src/http/errors.js';
import { HttpTransport } from '../../../src/http/transport.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  DEMO_COMPANY_IDS,
  OTHER_COMPANY_ID,
} from '../../../sandbox/accounting/default-fixture.js';
import type { FixtureBillPayment } from '../../../sandbox/accounting/fixture.js';
import { inspect, startAccountingSandbox, type RunningAccountingSandbox } from './start-accounting.js';

let sandbox: RunningAccountingSandbox;
let client: AccountingClient;
/** Ground truth from the inspection API: the demo application's bill payments. */
let demoPayments: FixtureBillPayment[];

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  client = new AccountingClient({
    baseUrl: sandbox.url,
    apiKey: DEMO_ACCOUNTING_API_KEY,
    clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
  });
  const all = await inspect<{ data: FixtureBillPayment[] }>(sandbox, '/bill-payments');
  demoPayments = all.data.filter((b) => (DEMO_COMPANY_IDS as readonly string[]).includes(b.companyId));
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

async function collect(filters: BillPaymentFilters = {}): Promise<BillPayment[]> {
  const items: BillPayment[] = [];
  for await (const item of client.iterateBillPayments({ limit: 100, ...filters })) items.push(item);
  return items;
}

const ids = (items: ReadonlyArray<{ id: string }>) => items.map((b) => b.id).sort();

/**
 * A moment later than every request made so far: the sandbox stamps requests in whole milliseconds, so the
 * previous test's last one can carry the very millisecond a test starts in.
 */
async function freshSince(): Promise<number> {
  const since = Date.now() + 1;
  while (Date.now() < since) await new Promise((resolve) => setTimeout(resolve, 1));
  return since;
}

describe('GET /bill-payments through the client', () => {
  it('has demo data worth testing against', () => {
    expect(demoPayments.length).toBeGreaterThanOrEqual(25);
  });

  it('filters by each payment method', async () => {
    for (const method of PAYMENT_METHODS) {
      const items = await collect({ paymentMethod: method });
      const expected = demoPayments.filter((b) => b.paymentMethod === method);
      expect(expected.length, method).toBeGreaterThan(0);
      expect(ids(items), method).toEqual(ids(expected));
      expect(items.every((b) => b.paymentMethod === method)).toBe(true);
    }
  });

  it('filters by each sync status', async () => {
    for (const status of SYNC_STATUSES) {
      const items = await collect({ status });
      const expected = demoPayments.filter((b) => b.status === status);
      expect(expected.length, status).toBeGreaterThan(0);
      expect(ids(items), status).toEqual(ids(expected));
    }
  });

  it('filters by company, alone and combined with other filters', async () => {
    for (const companyId of DEMO_COMPANY_IDS) {
      expect(ids(await collect({ companyId }))).toEqual(ids(demoPayments.filter((b) => b.companyId === companyId)));
    }
    const combined = await collect({
      companyId: DEMO_COMPANY_IDS[0],
      status: 'synced',
      paymentMethod: 'bank_transfer',
    });
    expect(ids(combined)).toEqual(
      ids(
        demoPayments.filter(
          (b) => b.companyId === DEMO_COMPANY_IDS[0] && b.status === 'synced' && b.paymentMethod === 'bank_transfer',
        ),
      ),
    );
  });

  it('sorts by each field in both directions', async () => {
    const keyOf: Record<(typeof SORT_FIELDS)[number], (b: BillPayment) => string | number> = {
      paymentDate: (b) => b.date,
      totalAmount: (b) => b.totalAmount,
      createdAt: (b) => Date.parse(b.createdAt ?? ''),
      updatedAt: (b) => Date.parse(b.updatedAt ?? ''),
    };
    for (const sortBy of SORT_FIELDS) {
      for (const sortOrder of SORT_DIRECTIONS) {
        const { data } = await client.listBillPayments({ sortBy, sortOrder, limit: 100 });
        const keys = data.data.map(keyOf[sortBy]);
        const label = `${sortBy} ${sortOrder}`;
        expect(ids(data.data), label).toEqual(ids(demoPayments));
        expect(new Set(keys).size, `${label}: keys should differ so the order is meaningful`).toBeGreaterThan(
          keys.length / 2,
        );
        for (let i = 1; i < keys.length; i++) {
          const [a, b] = [keys[i - 1]!, keys[i]!];
          expect(sortOrder === 'asc' ? a <= b : a >= b, `${label} at ${i}: ${a} then ${b}`).toBe(true);
        }
      }
    }
  });

  it('defaults to createdAt descending, page 1, 20 per page (A5)', async () => {
    const { data } = await client.listBillPayments();
    expect(data).toMatchObject({ page: 1, limit: 20, total: demoPayments.length, hasPreviousPage: false });
    const newestFirst = [...demoPayments]
      .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt))
      .slice(0, 20);
    expect(data.data.map((b) => b.id)).toEqual(newestFirst.map((b) => b.id));
  });

  it('computes the envelope arithmetic for every page of several page sizes', async () => {
    const total = demoPayments.length;
    for (const limit of [1, 7, total, 100]) {
      const totalPages = Math.ceil(total / limit);
      for (let page = 1; page <= totalPages + 1; page++) {
        const { data } = await client.listBillPayments({ limit, page, sortBy: 'totalAmount', sortOrder: 'asc' });
        const expectedSize = page <= totalPages ? Math.min(limit, total - (page - 1) * limit) : 0;
        expect(data, `limit ${limit} page ${page}`).toMatchObject({
          total,
          page,
          limit,
          totalPages,
          hasNextPage: page < totalPages,
          hasPreviousPage: page > 1,
        });
        expect(data.data).toHaveLength(expectedSize);
      }
    }
  });

  it('iterates every record exactly once, one request per page', async () => {
    const since = await freshSince();
    const pages: number[] = [];
    for await (const page of client.iterateBillPaymentPages({ limit: 7, sortBy: 'paymentDate', sortOrder: 'asc' })) {
      pages.push(page.data.length);
    }
    expect(pages).toHaveLength(Math.ceil(demoPayments.length / 7));
    const requests = sandbox.stats.records({ since }).filter((r) => r.route === '/bill-payments');
    expect(requests).toHaveLength(pages.length);

    const seen: string[] = [];
    for await (const item of client.iterateBillPayments({ limit: 7, sortBy: 'paymentDate', sortOrder: 'asc' }))
      seen.push(item.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual(ids(demoPayments));
  });

  it('answers 403 for a company of another application, or one that does not exist (A9)', async () => {
    for (const companyId of [OTHER_COMPANY_ID, 'cmp_does_not_exist']) {
      const error = await client.listBillPayments({ companyId }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        status: 403,
        retry: 'final',
        code: 'forbidden',
        message: `Not authorized for company ${companyId}`,
      });
    }
  });

  it('lists the key’s companies in the envelope (A8)', async () => {
    const { data } = await client.listCompanies();
    expect(data.data.map((c) => c.id).sort()).toEqual([...DEMO_COMPANY_IDS].sort());
    expect(data).toMatchObject({ total: 2, page: 1, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const second = await client.listCompanies({ page: 2, limit: 1 });
    expect(second.data).toMatchObject({
      total: 2,
      page: 2,
      limit: 1,
      totalPages: 2,
      hasNextPage: false,
      hasPreviousPage: true,
    });
  });
});

describe('bill payment query validation', () => {
  it('refuses limit 101 and other bad inputs in the client, before sending', async () => {
    const since = await freshSince();
    const cases: Array<[BillPaymentFilters, string]> = [
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ page: 0 }, 'page'],
      [{ paymentMethod: 'mpesa' as never }, 'paymentMethod'],
      [{ status: 'done' as never }, 'status'],
      [{ sortBy: 'amount' as never }, 'sortBy'],
      [{ sortOrder: 'up' as never }, 'sortOrder'],
      [{ companyId: ' ' }, 'companyId'],
    ];
    for (const [filters, field] of cases) {
      const error = await client.listBillPayments(filters).catch((err: unknown) => err);
      expect(error, JSON.stringify(filters)).toBeInstanceOf(RequestValidationError);
      expect(error).toMatchObject({ field, operation: 'listBillPayments', requestSent: false });
    }
    await expect(client.iterateBillPayments({ limit: 101 }).next()).rejects.toBeInstanceOf(RequestValidationError);
    expect(sandbox.stats.records({ since })).toEqual([]);
  });

  it('answers 400 naming the parameter when bad values are sent raw', async () => {
    const transport = new HttpTransport({ service: 'accounting', baseUrl: sandbox.url });
    try {
      const cases: Array<[Record<string, string>, string]> = [
        [{ limit: '101' }, 'limit'],
        [{ limit: '0' }, 'limit'],
        [{ limit: 'ten' }, 'limit'],
        [{ page: '0' }, 'page'],
        [{ paymentMethod: 'mpesa' }, 'paymentMethod'],
        [{ status: 'done' }, 'status'],
        [{ sortBy: 'amount' }, 'sortBy'],
        [{ sortOrder: 'up' }, 'sortOrder'],
      ];
      for (const [query, name] of cases) {
        const res = await transport.send({
          operation: 'raw',
          method: 'GET',
          path: '/bill-payments',
          query,
          headers: { 'X-API-Key': DEMO_ACCOUNTING_API_KEY },
          idempotent: true,
        });
        expect(res.status, JSON.stringify(query)).toBe(400);
        const body = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
        expect(body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          message: expect.stringContaining(`parameter ${name} `),
        });
      }
      const repeated = await transport.send({
        operation: 'raw',
        method: 'GET',
        path: '/bill-payments?status=synced&status=failed',
        headers: { 'X-API-Key': DEMO_ACCOUNTING_API_KEY },
        idempotent: true,
      });
      expect(repeated.status).toBe(400);
      expect(repeated.body.toString('utf8')).toContain('status must be given once');
      const atLimit = await transport.send({
        operation: 'raw',
        method: 'GET',
        path: '/bill-payments',
        query: { limit: 100 },
        headers: { 'X-API-Key': DEMO_ACCOUNTING_API_KEY },
        idempotent: true,
      });
      expect(atLimit.status).toBe(200);
    } finally {
      await transport.close();
    }
  });
});

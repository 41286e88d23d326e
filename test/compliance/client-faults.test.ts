import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreateSaleInput } from '../../src/compliance/requests.js';
import { DEMO, apiErrorOf, closedPort, idempotencyKey, nairobiSale, useClients, useSandbox } from './helpers.js';

/**
 * What each transport or server failure means for repeating the call: a write that carries an
 * Idempotency-Key (or that the service makes safe to repeat) is `safe`; a stock adjustment, which the
 * service never de-duplicates, is `ambiguous` whenever the request may have been processed.
 */
const sandbox = useSandbox();
const client = useClients(sandbox);
const nairobi = () => client(DEMO.keys.nairobi);

afterEach(() => {
  sandbox().faults.clear();
});

const stockInput = () =>
  ({ itemId: DEMO.items.sugar, action: 'ADD', quantity: 1, referenceId: `ADJ-${randomUUID()}` }) as const;
const movementsOf = async (referenceId: string) => (await sandbox().inspector.stockMovements({ referenceId })).length;
const documentsOf = async (sale: CreateSaleInput) =>
  (await sandbox().inspector.documents({ traderInvoiceNumber: sale.traderInvoiceNumber })).length;

describe('dropped connection before the service processed the request (reset)', () => {
  it('adjustStock: ambiguous (the client cannot know the movement was not recorded)', async () => {
    sandbox().faults.add({
      service: 'compliance',
      method: 'POST',
      path: '/v1/stock/adjustments',
      kind: 'reset',
      times: 1,
    });
    const input = stockInput();
    const err = await apiErrorOf(nairobi().adjustStock(input));
    expect(err).toMatchObject({ code: 'connection_reset', retry: 'ambiguous', requestSent: true, status: undefined });
    expect(await movementsOf(input.referenceId)).toBe(0);
  });

  it('createSale: safe; repeating with the same key files exactly one document', async () => {
    sandbox().faults.add({ service: 'compliance', method: 'POST', path: '/v1/sales', kind: 'reset', times: 1 });
    const input = nairobiSale();
    const key = idempotencyKey();
    const err = await apiErrorOf(nairobi().createSale(input, key));
    expect(err).toMatchObject({ code: 'connection_reset', retry: 'safe', requestSent: true });
    const retried = await nairobi().createSale(input, key);
    expect(retried.meta.status).toBe(201);
    expect(await documentsOf(input)).toBe(1);
  });
});

describe('5xx after the write happened (commit-then-fail)', () => {
  it('adjustStock: 503 is ambiguous, and indeed the movement was recorded', async () => {
    sandbox().faults.add({ path: '/v1/stock/adjustments', kind: 'commit-then-fail', status: 503, times: 1 });
    const input = stockInput();
    const err = await apiErrorOf(nairobi().adjustStock(input));
    expect(err).toMatchObject({ status: 503, retry: 'ambiguous', requestSent: true });
    expect(await movementsOf(input.referenceId)).toBe(1);
  });

  it('createSale: 500 is safe; the repeat is a replay of the document already filed', async () => {
    sandbox().faults.add({ path: '/v1/sales', method: 'POST', kind: 'commit-then-fail', status: 500, times: 1 });
    const input = nairobiSale();
    const key = idempotencyKey();
    const err = await apiErrorOf(nairobi().createSale(input, key));
    expect(err).toMatchObject({ status: 500, code: 'internal_error', retry: 'safe' });
    const retried = await nairobi().createSale(input, key);
    expect(retried.meta).toMatchObject({ status: 200, idempotentReplayed: true });
    expect(await documentsOf(input)).toBe(1);
  });

  it('createCreditNote: a reset after the write is safe; the repeat replays', async () => {
    const { data: sale } = await nairobi().createSale(nairobiSale(), idempotencyKey());
    sandbox().faults.add({ path: '/v1/credit-notes', kind: 'commit-then-fail', failWith: 'reset', times: 1 });
    const input = {
      traderInvoiceNumber: `CN-${randomUUID().slice(0, 8)}`,
      returnDate: '2025-06-30',
      saleId: sale.id,
      reason: '06',
    } as const;
    const key = idempotencyKey();
    const err = await apiErrorOf(nairobi().createCreditNote(input, key));
    expect(err).toMatchObject({ code: 'connection_reset', retry: 'safe' });
    const retried = await nairobi().createCreditNote(input, key);
    expect(retried.meta.idempotentReplayed).toBe(true);
    expect(retried.data.originalSaleId).toBe(sale.id);
  });
});

describe('5xx before processing (error)', () => {
  it.each([
    ['adjustStock', 'POST', '/v1/stock/adjustments', 'ambiguous'],
    ['createSale', 'POST', '/v1/sales', 'safe'],
    ['retrySale', 'POST', '/v1/sales/:id/retry', 'safe'],
    ['registerItem', 'POST', '/v1/items/:id/register', 'safe'],
    ['pullPurchases', 'POST', '/v1/purchases/pull', 'safe'],
    ['getSale', 'GET', '/v1/sales/:id', 'safe'],
  ] as const)('%s (%s %s): 503 is %s', async (operation, method, path, retry) => {
    sandbox().faults.add({ service: 'compliance', method, path, kind: 'error', status: 503, times: 1 });
    const calls = {
      adjustStock: () => nairobi().adjustStock(stockInput()),
      createSale: () => nairobi().createSale(nairobiSale(), idempotencyKey()),
      retrySale: () => nairobi().retrySale('sale_any'),
      registerItem: () => nairobi().registerItem(DEMO.items.sugar),
      pullPurchases: () => nairobi().pullPurchases(),
      getSale: () => nairobi().getSale('sale_any'),
    };
    const err = await apiErrorOf(calls[operation]());
    expect(err).toMatchObject({ operation, status: 503, code: 'service_unavailable', retry, requestSent: true });
  });
});

describe('connection refused (nothing listening)', () => {
  it('is safe for every operation, with requestSent false', async () => {
    const offline = client(DEMO.keys.nairobi, { baseUrl: `http://127.0.0.1:${await closedPort()}` });
    for (const call of [
      () => offline.adjustStock(stockInput()),
      () => offline.createSale(nairobiSale(), idempotencyKey()),
    ]) {
      const err = await apiErrorOf(call());
      expect(err).toMatchObject({ code: 'network_error', retry: 'safe', requestSent: false, status: undefined });
    }
  });
});

describe('no answer in time', () => {
  it('adjustStock: a timeout is ambiguous (the client cannot know whether the movement was recorded)', async () => {
    sandbox().faults.add({ path: '/v1/stock/adjustments', kind: 'latency', delayMs: 1_000, times: 1 });
    const started = Date.now();
    const err = await apiErrorOf(nairobi().adjustStock(stockInput(), { timeoutMs: 150 }));
    expect(Date.now() - started).toBeLessThan(900);
    expect(err).toMatchObject({ code: 'timeout', retry: 'ambiguous', requestSent: true });
  });

  it('getSale: a timeout is safe; the client-wide timeout applies when none is given per call', async () => {
    sandbox().faults.add({ method: 'GET', path: '/v1/sales/:id', kind: 'latency', delayMs: 1_000, times: 1 });
    const impatient = client(DEMO.keys.nairobi, { timeoutMs: 150 });
    const err = await apiErrorOf(impatient.getSale('sale_any'));
    expect(err).toMatchObject({ code: 'timeout', retry: 'safe' });
  });

  it('a caller abort in flight is reported as aborted, ambiguous for adjustStock', async () => {
    sandbox().faults.add({ path: '/v1/stock/adjustments', kind: 'latency', delayMs: 1_000, times: 1 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await apiErrorOf(nairobi().adjustStock(stockInput(), { signal: controller.signal }));
    expect(err).toMatchObject({ code: 'aborted', retry: 'ambiguous', requestSent: true });
  });
});

describe('injected 429 (rate-limit fault)', () => {
  it('is safe, with Retry-After and the rate-limit headers parsed', async () => {
    sandbox().faults.add({
      path: '/v1/items',
      method: 'GET',
      kind: 'rate-limit',
      retryAfterSeconds: 7,
      limit: 50,
      times: 1,
    });
    const err = await apiErrorOf(nairobi().listItems());
    expect(err).toMatchObject({
      status: 429,
      code: 'rate_limited',
      retry: 'safe',
      retryAfterSeconds: 7,
      rateLimit: { limit: 50, remaining: 0 },
    });
  });
});

import { randomUUID } from 'node:crypto';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdjustStockInput, CreateSaleInput } from '../../activities/types.js';
import {
  DEMO,
  TODAY,
  failureOf,
  idempotencyKey,
  invoiceNumber,
  requestsTo,
  runActivity,
  useActivities,
  useSandbox,
} from './helpers.js';

/**
 * How failures of real HTTP calls to the sandbox (with injected faults) reach Temporal: what is retried,
 * after how long, and what never is.
 */
const sandbox = useSandbox();
const harness = useActivities(sandbox);
const activities = () => harness().activities;
const business = DEMO.businesses.nairobi;

afterEach(() => {
  sandbox().faults.clear();
});

function saleInput(): CreateSaleInput {
  const traderInvoiceNumber = invoiceNumber();
  return {
    businessId: business,
    workflowId: `sale:${business}:${traderInvoiceNumber}`,
    idempotencyKey: idempotencyKey(),
    request: {
      traderInvoiceNumber,
      saleDate: TODAY,
      lines: [{ itemId: DEMO.items.sugar, quantity: 1, unitPrice: 250 }],
    },
  };
}

function stockInput(overrides: Partial<AdjustStockInput> = {}): AdjustStockInput {
  return {
    businessId: business,
    itemId: DEMO.items.sugar,
    action: 'DEDUCT',
    quantity: 1,
    unitPrice: 250,
    referenceId: `test:${randomUUID()}:0:DEDUCT`,
    ...overrides,
  };
}

const documentsFiled = async (input: CreateSaleInput) =>
  (await sandbox().inspector.documents({ traderInvoiceNumber: input.request.traderInvoiceNumber })).length;
const movementsRecorded = async (referenceId: string) =>
  (await sandbox().inspector.stockMovements({ referenceId })).length;

describe('429', () => {
  it('is a retryable rate_limited failure whose next attempt waits Retry-After (plus at most 20 %)', async () => {
    const created = await runActivity(activities().createSale, saleInput());
    sandbox().faults.add({
      service: 'compliance',
      method: 'GET',
      path: '/v1/sales/:id',
      kind: 'rate-limit',
      retryAfterSeconds: 3,
      times: 1,
    });
    const ref = { businessId: business, documentId: created.document.id };

    const failure = await failureOf(runActivity(activities().getDocument, ref));
    expect(failure).toMatchObject({ type: 'rate_limited', nonRetryable: false });
    expect(failure.nextRetryDelay).toBeGreaterThanOrEqual(3_000);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(3_600);

    // The next attempt gets through and counts both calls.
    expect(await runActivity(activities().getDocument, ref, { attempt: 2 })).toMatchObject({
      document: { id: ref.documentId },
    });
  });
});

describe('5xx', () => {
  it('createSale, refused before processing (safe): retryable with the API code and backoff; nothing filed', async () => {
    sandbox().faults.add({ method: 'POST', path: '/v1/sales', kind: 'error', status: 503, times: 1 });
    const input = saleInput();
    const failure = await failureOf(runActivity(activities().createSale, input, { attempt: 2 }));
    expect(failure).toMatchObject({ type: 'service_unavailable', nonRetryable: false });
    // attempt 2: [0.5, 1] × 2 s
    expect(failure.nextRetryDelay).toBeGreaterThanOrEqual(1_000);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(2_000);
    expect(await documentsFiled(input)).toBe(0);
  });

  it.each([
    ['a 503 after the movement was recorded', { kind: 'commit-then-fail', status: 503 }, 503, 1],
    ['a dropped connection after the movement was recorded', { kind: 'commit-then-fail', failWith: 'reset' }, null, 1],
    ['a dropped connection before processing', { kind: 'reset' }, null, 0],
  ] as const)('adjustStock, %s: the non-retryable ambiguous_write', async (_name, fault, status, recorded) => {
    sandbox().faults.add({ method: 'POST', path: '/v1/stock/adjustments', times: 1, ...fault });
    const input = stockInput();
    const failure = await failureOf(runActivity(activities().adjustStock, input));
    expect(failure).toMatchObject({ type: 'ambiguous_write', nonRetryable: true });
    expect(failure.details?.[0]).toMatchObject({ operation: 'adjustStock', status });
    // Why it must not be retried blindly: the client cannot tell these cases apart, the service can.
    expect(await movementsRecorded(input.referenceId)).toBe(recorded);
  });
});

describe('final 4xx', () => {
  it('is non-retryable with the API code as the type', async () => {
    const notFound = await failureOf(
      runActivity(activities().getDocument, { businessId: business, documentId: 'sale_does_not_exist' }),
    );
    expect(notFound).toMatchObject({ type: 'not_found', nonRetryable: true });
    expect(notFound.details?.[1]).toBe(404);

    const untracked = await failureOf(
      runActivity(activities().adjustStock, stockInput({ itemId: DEMO.items.giftVoucher })),
    );
    expect(untracked).toMatchObject({ type: 'item_not_stock_tracked', nonRetryable: true });
    expect(untracked.details?.[1]).toBe(422);
  });

  it('a request the client refuses to send: invalid_request naming the field, and nothing sent', async () => {
    const since = Date.now();
    const input = saleInput();
    input.request.lines = [{ itemId: DEMO.items.sugar, quantity: 0, unitPrice: 250 }];
    const failure = await failureOf(runActivity(activities().createSale, input));
    expect(failure).toMatchObject({ type: 'invalid_request', nonRetryable: true });
    expect(failure.message).toContain('lines[0].quantity');
    expect(requestsTo(sandbox(), 'POST', '/v1/sales', since)).toBe(0);
  });
});

describe('commit-then-fail on createSale', () => {
  it.each([
    ['a 500', { status: 500 }, 'internal_error'],
    ['a dropped connection', { failWith: 'reset' }, 'connection_reset'],
  ] as const)(
    'after %s, the second attempt with the same key is a replay: one document only',
    async (_name, fault, type) => {
      sandbox().faults.add({ method: 'POST', path: '/v1/sales', kind: 'commit-then-fail', times: 1, ...fault });
      const input = saleInput();

      const failure = await failureOf(runActivity(activities().createSale, input, { attempt: 1 }));
      expect(failure).toMatchObject({ type, nonRetryable: false });
      expect(await documentsFiled(input)).toBe(1);

      const second = await runActivity(activities().createSale, input, { attempt: 2 });
      expect(second).toMatchObject({ outcome: 'signed', httpStatus: 200, replayed: true });
      const [filed, ...others] = await sandbox().inspector.documents({
        traderInvoiceNumber: input.request.traderInvoiceNumber,
      });
      expect(others).toHaveLength(0);
      expect(filed?.sale.id).toBe(second.document.id);
      expect(filed?.submissions).toBe(1);
    },
  );
});

describe('cancellation', () => {
  it('aborts the HTTP request and reports the cancellation, not a failure of the call', async () => {
    sandbox().faults.add({ method: 'POST', path: '/v1/items/:id/register', kind: 'latency', delayMs: 3_000, times: 1 });
    const env = new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') });
    const pending = env.run(activities().registerItem, { businessId: business, itemId: DEMO.items.milk });
    setTimeout(() => env.cancel(), 100);
    const started = Date.now();
    await expect(pending).rejects.toBeInstanceOf(CancelledFailure);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('a slow call under a heartbeat timeout', () => {
  it('heartbeats while the answer is out, so a call lost with its worker is retried that soon', async () => {
    sandbox().faults.add({ method: 'POST', path: '/v1/items/:id/register', kind: 'latency', delayMs: 1_000, times: 2 });
    const register = (heartbeatTimeoutMs?: number) => {
      const env = new MockActivityEnvironment(
        { attempt: 1, ...(heartbeatTimeoutMs ? { heartbeatTimeoutMs } : {}) },
        { logger: new DefaultLogger('ERROR') },
      );
      let beats = 0;
      env.on('heartbeat', () => beats++);
      const done = env.run(activities().registerItem, { businessId: business, itemId: DEMO.items.milk });
      return done.then((result) => ({ result, beats }));
    };
    const watched = await register(900);
    expect(watched.result).toMatchObject({ outcome: 'registered' });
    // A third of the timeout apart over a second's wait.
    expect(watched.beats).toBeGreaterThanOrEqual(2);
    expect(watched.beats).toBeLessThanOrEqual(4);
    // Without a heartbeat timeout the call says nothing: no request to the server it would not need.
    expect((await register()).beats).toBe(0);
  });
});

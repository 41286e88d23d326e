import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  RATE_LIMIT_MAX_DELAY_MS,
  backoffDelayMs,
  documentInFlight,
  rateLimitDelayMs,
  secretFree,
  toActivityFailure,
} from '../../activities/failures.js';
import { ApiError, RequestValidationError, ResponseValidationError, type ApiErrorInit } from '../../src/http/errors.js';
import { retryDelayMs } from '../../workflows/stock-ledger/send.js';

const low = () => 0;
const high = () => 1;

function apiError(init: Partial<ApiErrorInit> & Pick<ApiErrorInit, 'retry'>): ApiError {
  return new ApiError({
    service: 'compliance',
    operation: 'createSale',
    method: 'POST',
    path: '/v1/sales',
    code: 'internal_error',
    message: 'boom',
    requestSent: true,
    ...init,
  });
}

/** Calls toActivityFailure expecting a failure (not a rethrow). */
function map(err: unknown, attempt = 1, options: Parameters<typeof toActivityFailure>[2] = {}): ApplicationFailure {
  const failure = toActivityFailure(err, attempt, options);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  return failure;
}

describe('toActivityFailure', () => {
  describe('429', () => {
    const limited = (retryAfterSeconds?: number) =>
      apiError({
        status: 429,
        code: 'rate_limited',
        retry: 'safe',
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });

    it('is retryable rate_limited, next attempt after Retry-After plus at most 20 % jitter', () => {
      const earliest = map(limited(7), 1, { random: low });
      const latest = map(limited(7), 1, { random: high });
      expect(earliest).toMatchObject({ type: 'rate_limited', nonRetryable: false, nextRetryDelay: 7_000 });
      expect(latest.nextRetryDelay).toBe(8_400);
      const sampled = map(limited(7)).nextRetryDelay as number;
      expect(sampled).toBeGreaterThanOrEqual(7_000);
      expect(sampled).toBeLessThanOrEqual(8_400);
    });

    it('waits 1 s when Retry-After is absent, and never asks for a zero delay', () => {
      expect(map(limited(), 1, { random: low }).nextRetryDelay).toBe(1_000);
      expect(rateLimitDelayMs(0, low)).toBeGreaterThan(0);
    });

    it('ignores the attempt number: the service said when', () => {
      expect(map(limited(2), 9, { random: low }).nextRetryDelay).toBe(2_000);
    });

    it('never asks for more than the Retry-After bound, jitter included', () => {
      expect(RATE_LIMIT_MAX_DELAY_MS).toBe(300_000);
      for (const seconds of [99_999_999, Number.MAX_VALUE, Number.POSITIVE_INFINITY, 300]) {
        for (const random of [low, high]) {
          const failure = map(limited(seconds), 1, { random });
          expect(failure.nextRetryDelay).toBe(seconds === 300 && random === low ? 300_000 : RATE_LIMIT_MAX_DELAY_MS);
          expect(failure.message).toContain('retrying after 300 s');
        }
      }
      expect(rateLimitDelayMs(250, high)).toBe(300_000);
      expect(rateLimitDelayMs(200, high)).toBe(240_000);
    });

    it('never hands Temporal a delay that is not a number', () => {
      expect(rateLimitDelayMs(Number.NaN, low)).toBe(RATE_LIMIT_MAX_DELAY_MS);
      expect(rateLimitDelayMs(-5, low)).toBe(100);
      expect(rateLimitDelayMs(5, () => 1e9)).toBe(RATE_LIMIT_MAX_DELAY_MS);
    });
  });

  describe('safe to repeat (5xx or never sent on an idempotent request)', () => {
    it('is retryable with the API code as type and exponential backoff with jitter', () => {
      const err = apiError({ status: 503, code: 'service_unavailable', retry: 'safe' });
      expect(map(err, 1, { random: low })).toMatchObject({
        type: 'service_unavailable',
        nonRetryable: false,
        nextRetryDelay: 500,
      });
      expect(map(err, 1, { random: high }).nextRetryDelay).toBe(1_000);
      expect(map(err, 4, { random: low }).nextRetryDelay).toBe(4_000);
      expect(map(err, 4, { random: high }).nextRetryDelay).toBe(8_000);
    });

    it('caps the backoff at 60 s', () => {
      expect(backoffDelayMs(30, high)).toBe(60_000);
      expect(backoffDelayMs(30, low)).toBe(30_000);
    });

    it('keeps the backoff within 60 s whatever the attempt or the random source', () => {
      expect(backoffDelayMs(10_000, high)).toBe(60_000);
      expect(backoffDelayMs(Number.POSITIVE_INFINITY, high)).toBe(60_000);
      expect(backoffDelayMs(Number.NaN, high)).toBe(60_000);
      expect(backoffDelayMs(30, () => 1e9)).toBe(60_000);
      expect(backoffDelayMs(1, () => -1e9)).toBe(100);
    });

    it('maps transport failures that were never sent the same way', () => {
      const err = apiError({
        code: 'network_error',
        retry: 'safe',
        requestSent: false,
        method: 'POST',
        path: '/v1/stock/adjustments',
      });
      expect(map(err)).toMatchObject({ type: 'network_error', nonRetryable: false, details: [{ requestSent: false }] });
    });

    it('treats 409 idempotency_in_progress as "not yet" (C15), although the status is a 4xx', () => {
      const err = apiError({ status: 409, code: 'idempotency_in_progress', retry: 'final' });
      expect(map(err)).toMatchObject({ type: 'idempotency_in_progress', nonRetryable: false });
    });
  });

  describe('ambiguous (a non-idempotent write may have happened)', () => {
    it('is the non-retryable ambiguous_write with operation, code, status and message', () => {
      const err = apiError({
        operation: 'adjustStock',
        path: '/v1/stock/adjustments',
        status: 502,
        code: 'http_502',
        message: 'bad gateway',
        retry: 'ambiguous',
      });
      const failure = map(err);
      expect(failure).toMatchObject({ type: 'ambiguous_write', nonRetryable: true });
      expect(failure.details).toEqual([
        { operation: 'adjustStock', code: 'http_502', status: 502, message: 'bad gateway' },
      ]);
    });

    it('reports a dropped connection with a null status', () => {
      const err = apiError({ operation: 'adjustStock', code: 'connection_reset', retry: 'ambiguous' });
      expect(map(err).details).toEqual([
        { operation: 'adjustStock', code: 'connection_reset', status: null, message: 'boom' },
      ]);
    });
  });

  describe('final (the service said no)', () => {
    it('is non-retryable with the API code as type and [extras, status] as details', () => {
      const err = apiError({
        operation: 'createCreditNote',
        status: 422,
        code: 'already_credited',
        message: 'Sale already credited',
        details: { creditNoteId: 'cn_1' },
        retry: 'final',
      });
      const failure = map(err);
      expect(failure).toMatchObject({ type: 'already_credited', nonRetryable: true });
      expect(failure.details).toEqual([{ creditNoteId: 'cn_1' }, 422]);
      expect(failure.message).toContain('Sale already credited');
    });

    it('strips callback URLs, tokens and keys from the extras at any depth', () => {
      const token = 'SECRET-TOKEN-abc';
      const err = apiError({
        status: 422,
        code: 'authority_rejected',
        retry: 'final',
        details: {
          sale: { id: 's1', callback: { url: `https://x.example/callbacks/wf/${token}`, status: 'pending' } },
          errors: [{ code: 'authority_rejected', callbackUrl: `https://x.example/${token}` }],
          apiKey: `cmp_sk_test_${token}`,
        },
      });
      const failure = map(err);
      expect(JSON.stringify(failure.details)).not.toContain(token);
      expect(failure.details?.[0]).toEqual({ sale: { id: 's1' }, errors: [{ code: 'authority_rejected' }] });
    });
  });

  it('turns a request the client refused to send into invalid_request naming the field', () => {
    const failure = map(new RequestValidationError('createSale', 'lines[0].quantity', 'must be more than 0'));
    expect(failure).toMatchObject({ type: 'invalid_request', nonRetryable: true });
    expect(failure.message).toContain('lines[0].quantity');
    expect(failure.details).toEqual([
      { operation: 'createSale', field: 'lines[0].quantity', reason: 'must be more than 0' },
    ]);
  });

  describe('a success body of the wrong shape', () => {
    const err = new ResponseValidationError('compliance', 'getSale', 200, [
      { path: 'data.sale.id', message: 'Required' },
    ]);

    it('is retryable unexpected_response for an idempotent call', () => {
      expect(map(err, 1, { idempotent: true })).toMatchObject({ type: 'unexpected_response', nonRetryable: false });
    });

    it('is ambiguous_write for a write that may not be repeated, and by default', () => {
      expect(map(err, 1, { idempotent: false })).toMatchObject({ type: 'ambiguous_write', nonRetryable: true });
      expect(map(err)).toMatchObject({ type: 'ambiguous_write', nonRetryable: true });
    });
  });

  it('rethrows anything else unchanged', () => {
    const plain = new TypeError('not an API error');
    expect(() => toActivityFailure(plain, 1)).toThrow(plain);
    const already = ApplicationFailure.nonRetryable('decided elsewhere', 'custom');
    expect(() => toActivityFailure(already, 1)).toThrow(already);
  });
});

describe('documentInFlight', () => {
  it('is a retryable, benign document_in_flight naming the document and its status', () => {
    const failure = documentInFlight('sale_1', 'pending');
    expect(failure).toMatchObject({
      type: 'document_in_flight',
      nonRetryable: false,
      category: ApplicationFailureCategory.BENIGN,
    });
    expect(failure.message).toContain('sale_1');
    expect(failure.details).toEqual([{ documentId: 'sale_1', status: 'pending' }]);
  });
});

describe('secretFree', () => {
  it('keeps everything that is not a secret', () => {
    const value = { a: 1, b: [{ c: 'x' }, null], d: { e: true } };
    expect(secretFree(value)).toEqual(value);
  });
});

describe("the stock ledger's wait between attempts", () => {
  const limited = (retryAfterSeconds: unknown) =>
    ApplicationFailure.create({ type: 'rate_limited', details: [{ retryAfterSeconds }] });
  const unsent = ApplicationFailure.create({ type: 'network_error', details: [{ requestSent: false }] });

  it('follows Retry-After up to its bound, whatever a recorded failure carries', () => {
    expect(retryDelayMs(limited(7), 1)).toBe(7_000);
    expect(retryDelayMs(limited(99_999_999), 1)).toBe(300_000);
    expect(retryDelayMs(limited(Number.POSITIVE_INFINITY), 1)).toBe(300_000);
    expect(retryDelayMs(limited(0), 1)).toBe(1_000);
  });

  it('backs off up to a minute otherwise, also for a Retry-After that is not a number', () => {
    expect(retryDelayMs(unsent, 1)).toBe(1_000);
    expect(retryDelayMs(unsent, 3)).toBe(4_000);
    expect(retryDelayMs(unsent, 10_000)).toBe(60_000);
    expect(retryDelayMs(limited(Number.NaN), 2)).toBe(2_000);
    expect(retryDelayMs(limited('soon'), 2)).toBe(2_000);
  });

  it("is at most the bound of an activity's own 429 delay", () => {
    const failure = map(
      apiError({ status: 429, code: 'rate_limited', retry: 'safe', retryAfterSeconds: 99_999_999 }),
      1,
      { random: high },
    );
    expect(retryDelayMs(failure, 1)).toBeLessThanOrEqual(RATE_LIMIT_MAX_DELAY_MS);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(RATE_LIMIT_MAX_DELAY_MS);
  });
});

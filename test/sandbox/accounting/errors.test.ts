import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../../src/accounting/client.js';
import { ApiError } from '../../../src/http/errors.js';
import { DEMO_ACCOUNTING_API_KEY } from '../../../sandbox/accounting/default-fixture.js';
import { startAccountingSandbox, type RunningAccountingSandbox } from './start-accounting.js';

let sandbox: RunningAccountingSandbox;
let client: AccountingClient;

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  client = new AccountingClient({ baseUrl: sandbox.url, apiKey: DEMO_ACCOUNTING_API_KEY });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

const headers = { 'x-api-key': DEMO_ACCOUNTING_API_KEY, 'content-type': 'application/json' };

describe('accounting sandbox error answers (A1, A2)', () => {
  it('answers unknown routes with 404 in the A1 shape', async () => {
    const res = await fetch(`${sandbox.url}/invoices?x=1`, { headers });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'Route GET /invoices not found' });
  });

  it('answers a body over 1 MiB with 413 and malformed JSON with 400', async () => {
    const big = JSON.stringify({ padding: 'x'.repeat(1024 * 1024) });
    const tooLarge = await fetch(`${sandbox.url}/sync/batches/sb_nbo_done/process`, {
      method: 'POST',
      headers,
      body: big,
    });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: 'Request body is larger than 1 MiB',
    });
    const malformed = await fetch(`${sandbox.url}/sync/batches/sb_nbo_done/process`, {
      method: 'POST',
      headers,
      body: '{"a":',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
  });

  it('accepts the process call with an empty JSON body', async () => {
    const res = await fetch(`${sandbox.url}/sync/batches/sb_nbo_done/process`, { method: 'POST', headers, body: '' });
    expect(res.status).toBe(200);
  });

  it('is read by the client into ApiError with status, code and message', async () => {
    const keyless = new AccountingClient({ baseUrl: sandbox.url, apiKey: 'sk_development_unknown_key_0000000001' });
    try {
      const error = await keyless.listCompanies().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        service: 'accounting',
        operation: 'listCompanies',
        status: 401,
        code: 'unauthorized',
        message: 'Invalid API key',
        retry: 'final',
        requestSent: true,
      });
      expect(JSON.stringify(error)).not.toContain('sk_development_unknown_key');
    } finally {
      await keyless.close();
    }
  });

  it('turns an injected 429 into a safe-to-retry ApiError with Retry-After', async () => {
    sandbox.faults.add({
      service: 'accounting',
      kind: 'rate-limit',
      path: '/bill-payments',
      retryAfterSeconds: 7,
      limit: 50,
      times: 1,
    });
    const error = await client.listBillPayments().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 429,
      code: 'too_many_requests',
      retryAfterSeconds: 7,
      retry: 'safe',
      rateLimit: { limit: 50, remaining: 0 },
    });
    // `times: 1`: the next call goes through.
    expect((await client.listBillPayments()).meta.status).toBe(200);
  });

  it('marks an injected 503 on the repeatable process call as safe to retry', async () => {
    sandbox.faults.add({
      service: 'accounting',
      kind: 'error',
      method: 'POST',
      path: '/sync/batches/:syncBatchId/process',
      status: 503,
      times: 1,
    });
    const error = await client.processSyncBatch('sb_nbo_done').catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 503, retry: 'safe', code: 'service_unavailable' });
  });

  it('never faults the inspection routes', async () => {
    sandbox.faults.add({ id: 'everything', service: 'accounting', kind: 'error', status: 500 });
    try {
      expect((await fetch(`${sandbox.url}/__sandbox/sync-batches`)).status).toBe(200);
      expect((await fetch(`${sandbox.url}/companies`, { headers })).status).toBe(500);
    } finally {
      sandbox.faults.remove('everything');
    }
  });
});

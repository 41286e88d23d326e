import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../../src/accounting/client.js';
import { signRequest } from '../../../src/accounting/signing.js';
import { HttpTransport, type HttpRequest } from '../../../src/http/transport.js';
import {
  DEMO_ACCOUNTING_API_KEY,
  DEMO_ACCOUNTING_CLIENT_SECRET,
  INACTIVE_ACCOUNTING_API_KEY,
  OTHER_ACCOUNTING_CLIENT_SECRET,
  defaultAccountingFixture,
} from '../../../sandbox/accounting/default-fixture.js';
import { startAccountingSandbox, type RunningAccountingSandbox } from './start-accounting.js';

const T = 1_750_000_000_000;
const FIVE_MINUTES = 5 * 60 * 1000;
// A batch that is already processed: posting to it changes nothing, so it can be hit repeatedly.
const DONE_BATCH_PATH = '/sync/batches/sb_nbo_done/process';

let sandbox: RunningAccountingSandbox;
let transport: HttpTransport;

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  sandbox.clock.now = T;
  transport = new HttpTransport({ service: 'accounting', baseUrl: sandbox.url });
});
afterAll(async () => {
  await transport.close();
  await sandbox.close();
});

interface RawCall {
  method?: 'GET' | 'POST';
  path?: string;
  query?: HttpRequest['query'];
  /** Body to sign; `sentBody` (default the same) is what goes on the wire. */
  body?: string;
  sentBody?: string;
  apiKey?: string | null;
  secret?: string;
  timestamp?: number;
  signedPath?: string;
  headers?: Record<string, string>;
  sign?: boolean;
}

async function raw(call: RawCall = {}) {
  const method = call.method ?? 'GET';
  const path = call.path ?? '/companies';
  const headers: Record<string, string> = {};
  if (call.apiKey !== null) headers['X-API-Key'] = call.apiKey ?? DEMO_ACCOUNTING_API_KEY;
  if (call.sign ?? true) {
    const timestamp = call.timestamp ?? T;
    headers['X-Timestamp'] = String(timestamp);
    headers['X-Signature'] = signRequest({
      method,
      path: call.signedPath ?? path,
      body: call.body ?? '',
      timestamp,
      clientSecret: call.secret ?? DEMO_ACCOUNTING_CLIENT_SECRET,
    });
  }
  Object.assign(headers, call.headers);
  const sentBody = call.sentBody ?? call.body;
  const res = await transport.send({
    operation: 'raw',
    method,
    path,
    ...(call.query ? { query: call.query } : {}),
    ...(sentBody === undefined ? {} : { body: sentBody }),
    headers,
    idempotent: true,
  });
  const text = res.body.toString('utf8');
  return { status: res.status, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

describe('accounting sandbox authentication', () => {
  it('accepts the key alone, and a valid signature on GET and POST', async () => {
    expect((await raw({ sign: false })).status).toBe(200);
    expect((await raw()).status).toBe(200);
    const body = JSON.stringify({ reason: 'nightly' });
    const post = await raw({ method: 'POST', path: DONE_BATCH_PATH, body });
    expect(post.status).toBe(200);
    expect(post.json).toHaveProperty('message');
  });

  it('answers 401 in the A1 shape for a missing, unknown or inactive key, without echoing it', async () => {
    const missing = await raw({ apiKey: null, sign: false });
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: expect.stringContaining('X-API-Key'),
    });
    const unknownKey = 'sk_development_not_a_real_key_000000';
    const unknown = await raw({ apiKey: unknownKey, sign: false });
    expect(unknown.json).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Invalid API key' });
    expect(unknown.text).not.toContain(unknownKey);
    const inactive = await raw({ apiKey: INACTIVE_ACCOUNTING_API_KEY, sign: false });
    expect(inactive.status).toBe(401);
    expect(inactive.json?.message).toMatch(/inactive/i);
  });

  it('refuses a tampered body', async () => {
    const body = JSON.stringify({ amount: 100 });
    const tampered = await raw({
      method: 'POST',
      path: DONE_BATCH_PATH,
      body,
      sentBody: JSON.stringify({ amount: 900 }),
    });
    expect(tampered.status).toBe(401);
    // Same JSON value, different bytes: still refused, the signature covers bytes.
    const reformatted = await raw({
      method: 'POST',
      path: DONE_BATCH_PATH,
      body,
      sentBody: JSON.stringify({ amount: 100 }, null, 2),
    });
    expect(reformatted.status).toBe(401);
  });

  it('refuses a wrong secret, another application’s secret, another method or another path', async () => {
    expect((await raw({ secret: 'cs_wrong_secret_000000000000001' })).status).toBe(401);
    expect((await raw({ secret: OTHER_ACCOUNTING_CLIENT_SECRET })).status).toBe(401);
    expect((await raw({ signedPath: '/bill-payments' })).status).toBe(401);
    const signedAsGet = await transport.send({
      operation: 'raw',
      method: 'POST',
      path: DONE_BATCH_PATH,
      headers: {
        'X-API-Key': DEMO_ACCOUNTING_API_KEY,
        'X-Timestamp': String(T),
        'X-Signature': signRequest({
          method: 'GET',
          path: DONE_BATCH_PATH,
          timestamp: T,
          clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
        }),
      },
      idempotent: true,
    });
    expect(signedAsGet.status).toBe(401);
  });

  it('accepts timestamps up to 5 minutes away either way and refuses 5 minutes and 1 second', async () => {
    expect((await raw({ timestamp: T - FIVE_MINUTES })).status).toBe(200);
    expect((await raw({ timestamp: T + FIVE_MINUTES })).status).toBe(200);
    const old = await raw({ timestamp: T - FIVE_MINUTES - 1000 });
    expect(old.status).toBe(401);
    expect(old.json?.message).toMatch(/5 minutes/);
    expect((await raw({ timestamp: T + FIVE_MINUTES + 1000 })).status).toBe(401);
  });

  it('refuses half a signature and malformed signature headers (A12)', async () => {
    const signature = signRequest({
      method: 'GET',
      path: '/companies',
      timestamp: T,
      clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
    });
    const onlySignature = await raw({ sign: false, headers: { 'X-Signature': signature } });
    expect(onlySignature.status).toBe(401);
    expect(onlySignature.json?.message).toMatch(/both/);
    expect((await raw({ sign: false, headers: { 'X-Timestamp': String(T) } })).status).toBe(401);
    expect((await raw({ sign: false, headers: { 'X-Timestamp': 'yesterday', 'X-Signature': signature } })).status).toBe(
      401,
    );
    expect(
      (await raw({ sign: false, headers: { 'X-Timestamp': String(T), 'X-Signature': signature.slice(0, 32) } })).status,
    ).toBe(401);
    // Upper-case hex of the right digest is the same signature.
    expect(
      (await raw({ sign: false, headers: { 'X-Timestamp': String(T), 'X-Signature': signature.toUpperCase() } }))
        .status,
    ).toBe(200);
  });

  it('signs the path without the query by default (A11)', async () => {
    const query = { page: 1, limit: 5 };
    expect((await raw({ path: '/bill-payments', query })).status).toBe(200);
    expect((await raw({ path: '/bill-payments', query, signedPath: '/bill-payments?page=1&limit=5' })).status).toBe(
      401,
    );
  });

  it('signs path and query when the sandbox is configured so, and the client follows with signQuery', async () => {
    const signing = await startAccountingSandbox({ fixture: { ...defaultAccountingFixture, signQuery: true } });
    const clientFor = (signQuery: boolean) =>
      new AccountingClient({
        baseUrl: signing.url,
        apiKey: DEMO_ACCOUNTING_API_KEY,
        clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
        signQuery,
      });
    const withQuery = clientFor(true);
    const withoutQuery = clientFor(false);
    try {
      const page = await withQuery.listBillPayments({ page: 2, limit: 3, status: 'synced' });
      expect(page.data.page).toBe(2);
      await expect(withoutQuery.listBillPayments({ page: 2, limit: 3 })).rejects.toMatchObject({ status: 401 });
      // Without a query string there is nothing to disagree about.
      expect((await withoutQuery.listCompanies()).meta.status).toBe(200);
    } finally {
      await withQuery.close();
      await withoutQuery.close();
      await signing.close();
    }
  });
});

import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CallbackFloodGuard } from '../../src/callbacks/flood-guard.js';
import type { CallbackSignal } from '../../src/callbacks/routes.js';
import { CALLBACK_BODY_LIMIT, callbackRoutes } from '../../src/callbacks/routes.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import type { CallbackHint } from '../../src/contracts/sale.js';

const SECRET = 'any-body-test-secret-0123456789-abcdefghijklmnop';

/**
 * The contract does not show the callback body (compliance-api.md, Events 3). The URL's token names the
 * execution, and the workflow confirms by reading its document, so a valid token with any body is a hint.
 */
describe('a result callback with a body of any shape', () => {
  const calls: Array<{ workflowId: string; hint: CallbackHint }> = [];
  const signal: CallbackSignal = async (workflowId, hint) => {
    calls.push({ workflowId, hint });
    return 'signalled';
  };
  let app: FastifyInstance;
  let minter: CallbackUrlMinter;
  let baseUrl: string;
  let ids = 0;

  beforeAll(async () => {
    app = Fastify();
    const verifier = new CallbackUrlMinter({ publicBaseUrl: 'http://unused.invalid', secret: SECRET });
    await app.register(callbackRoutes, {
      minter: verifier,
      signal,
      guard: new CallbackFloodGuard({ workflowBurst: 2 }),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    minter = new CallbackUrlMinter({ publicBaseUrl: baseUrl, secret: SECRET });
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    calls.length = 0;
  });

  async function post(url: string, body: string | undefined, headers: Record<string, string>) {
    const response = await request(url, { method: 'POST', headers, body });
    const text = await response.body.text();
    return { status: response.statusCode, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  it.each([
    [
      'JSON of another shape',
      '{"saleId":"sal_9","result":"COMPLETED","attempt":1}',
      { 'content-type': 'application/json' },
    ],
    ['a JSON array', '[{"id":"sal_9"}]', { 'content-type': 'application/json' }],
    ['JSON naming the document by a number', '{"data":{"sale":{"id":42}}}', { 'content-type': 'application/json' }],
    ['an empty JSON body', undefined, { 'content-type': 'application/json' }],
    ['no body and no content type', undefined, {}],
    ['text that is not JSON', 'sale sal_9 completed', { 'content-type': 'text/plain' }],
    ['a form-encoded body', 'sale_id=sal_9&status=completed', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['bytes', '\u0000\u00ff\u0001', { 'content-type': 'application/octet-stream' }],
  ])('202 accepted and signalled for %s', async (_label, body, headers) => {
    const workflowId = `sale:biz_any:INV-${++ids}`;
    const response = await post(minter.mint(workflowId), body, headers);

    expect(response).toEqual({ status: 202, json: { status: 'accepted' } });
    expect(calls).toEqual([{ workflowId, hint: { documentId: null, event: null, callbackId: null } }]);
  });

  it('still reads the fields it knows when they are there', async () => {
    const workflowId = `sale:biz_any:INV-${++ids}`;
    const body = JSON.stringify({ id: 'evt_1', event: 'sale.completed', data: { sale: { id: 'sal_1' } } });
    expect((await post(minter.mint(workflowId), body, { 'content-type': 'application/json' })).status).toBe(202);
    expect(calls.map((c) => c.hint)).toEqual([{ documentId: 'sal_1', event: 'sale.completed', callbackId: 'evt_1' }]);
  });

  it('de-duplicates a repeated opaque body and throttles a flood of different ones', async () => {
    const url = minter.mint(`sale:biz_any:INV-${++ids}`);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const answers = [
      await post(url, 'status=completed', form),
      await post(url, 'status=completed', form),
      await post(url, 'status=failed', form),
      await post(url, 'status=other', form),
    ];
    expect(answers).toEqual([
      { status: 202, json: { status: 'accepted' } },
      { status: 200, json: { status: 'duplicate' } },
      { status: 202, json: { status: 'accepted' } },
      // The budget (a burst of 2 here) holds whatever the bodies say.
      { status: 202, json: { status: 'throttled' } },
    ]);
    expect(calls).toHaveLength(2);
  });

  it('still refuses a forged token with any body, and a body over the size cap', async () => {
    const workflowId = `sale:biz_any:INV-${++ids}`;
    const forged = `${baseUrl}/callbacks/${encodeURIComponent(workflowId)}/${'A'.repeat(43)}`;
    for (const body of ['sale_id=sal_9', undefined, '{}']) {
      expect((await post(forged, body, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(401);
    }
    const oversized = 'x'.repeat(CALLBACK_BODY_LIMIT + 1);
    expect((await post(minter.mint(workflowId), oversized, { 'content-type': 'text/plain' })).status).toBe(413);
    expect(calls).toEqual([]);
  });
});

import { createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CallbackFloodGuard } from '../../src/callbacks/flood-guard.js';
import type { CallbackSignal, SignalOutcome } from '../../src/callbacks/routes.js';
import { CALLBACK_BODY_LIMIT, callbackRoutes } from '../../src/callbacks/routes.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import type { CallbackHint } from '../../src/contracts/sale.js';
import { memoryLogger } from './helpers.js';

const SECRET = 'routes-test-secret-0123456789-abcdefghijklmnop';
const WORKFLOW_ID = 'sale:biz_nairobi:INV-42';
const OTHER_WORKFLOW_ID = 'sale:biz_nairobi:INV-43';
const JSON_TYPE = { 'content-type': 'application/json' };

interface SignalRecorder {
  signal: CallbackSignal;
  calls: Array<{ workflowId: string; hint: CallbackHint }>;
  /** What the next signals answer; an Error is thrown. */
  outcome: SignalOutcome | Error;
}

function recordingSignal(): SignalRecorder {
  const recorder: SignalRecorder = {
    calls: [],
    outcome: 'signalled',
    signal: async (workflowId, hint) => {
      recorder.calls.push({ workflowId, hint });
      if (recorder.outcome instanceof Error) throw recorder.outcome;
      return recorder.outcome;
    },
  };
  return recorder;
}

let deliveries = 0;

/** A callback body with a fresh delivery id unless `extra` names one. */
function callbackBody(documentId: string | undefined, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: `evt_${String(++deliveries).padStart(4, '0')}`,
    event: 'sale.completed',
    createdAt: '2025-06-30T10:00:00.000Z',
    data: { sale: documentId === undefined ? { status: 'completed' } : { id: documentId, status: 'completed' } },
    ...extra,
  });
}

describe('callback routes over HTTP', () => {
  const logs = memoryLogger();
  const recorder = recordingSignal();
  // The host's base URL does not matter to verification; the receiver's own address is used for minting.
  let minter: CallbackUrlMinter;
  let app: FastifyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    const loggerInstance: FastifyBaseLogger = logs.logger;
    app = Fastify({ loggerInstance });
    const verifier = new CallbackUrlMinter({ publicBaseUrl: 'http://unused.invalid', secret: SECRET });
    // Budget wide enough for every test here on one workflow id; the guard has its own tests.
    const guard = new CallbackFloodGuard({ workflowBurst: 1_000 });
    await app.register(callbackRoutes, { minter: verifier, signal: recorder.signal, guard });
    // The host's own JSON route, to show the plugin's raw-body parser stays inside the plugin.
    app.post('/echo', async (req) => ({ echoed: req.body }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    minter = new CallbackUrlMinter({ publicBaseUrl: baseUrl, secret: SECRET });
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    recorder.calls.length = 0;
    recorder.outcome = 'signalled';
  });

  async function post(url: string, body: string | Readable | undefined, headers: Record<string, string> = JSON_TYPE) {
    const response = await request(url, { method: 'POST', headers, body });
    const text = await response.body.text();
    return { status: response.statusCode, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  }

  it('202: a valid callback signals the workflow with the document id, event and callback id', async () => {
    const response = await post(minter.mint(WORKFLOW_ID), callbackBody('sal_123'));

    expect(response).toEqual({ status: 202, json: { status: 'accepted' } });
    expect(recorder.calls).toEqual([
      {
        workflowId: WORKFLOW_ID,
        hint: { documentId: 'sal_123', event: 'sale.completed', callbackId: expect.stringMatching(/^evt_\d{4}$/) },
      },
    ]);
  });

  it('a workflow id with slashes, spaces and # survives the URL round trip', async () => {
    const workflowId = 'sale:biz 1:INV/2025#7?x=%41';
    const response = await post(minter.mint(workflowId), callbackBody('sal_131'));

    expect(response.status).toBe(202);
    expect(recorder.calls.map((c) => c.workflowId)).toEqual([workflowId]);
  });

  it('takes the callback id from x-callback-id when the body has none, and reads any content type', async () => {
    const body = JSON.stringify({ event: 'sale.failed', data: { sale: { id: 'sal_124' } } });
    const headers = { 'content-type': 'text/plain', 'x-callback-id': 'evt_header' };
    const response = await post(minter.mint(WORKFLOW_ID), body, headers);

    expect(response.status).toBe(202);
    expect(recorder.calls.map((c) => c.hint)).toEqual([
      { documentId: 'sal_124', event: 'sale.failed', callbackId: 'evt_header' },
    ]);
  });

  it('401 for a forged token, and nothing is signalled', async () => {
    const forged = [
      `${baseUrl}/callbacks/${encodeURIComponent(WORKFLOW_ID)}/${'A'.repeat(43)}`,
      // A real token, but for another workflow.
      minter.mint(OTHER_WORKFLOW_ID).replace(encodeURIComponent(OTHER_WORKFLOW_ID), encodeURIComponent(WORKFLOW_ID)),
      new CallbackUrlMinter({ publicBaseUrl: baseUrl, secret: `${SECRET}-other` }).mint(WORKFLOW_ID),
      `${minter.mint(WORKFLOW_ID)}x`,
    ];
    for (const url of forged) {
      const response = await post(url, callbackBody('sal_125'));
      expect(response).toMatchObject({ status: 401, json: { error: { code: 'invalid_token' } } });
    }
    expect(recorder.calls).toEqual([]);
  });

  it('413 for a body over 64 KiB (declared or streamed), and nothing is signalled', async () => {
    const oversized = callbackBody('sal_126', { padding: 'x'.repeat(CALLBACK_BODY_LIMIT) });
    const declared = await post(minter.mint(WORKFLOW_ID), oversized);
    expect(declared).toMatchObject({ status: 413, json: { error: { code: 'body_too_large' } } });

    const streamed = await post(minter.mint(WORKFLOW_ID), Readable.from([Buffer.from(oversized)]));
    expect(streamed.status).toBe(413);
    expect(recorder.calls).toEqual([]);
  });

  it('a body just under the limit is accepted', async () => {
    const base = callbackBody('sal_127', { padding: '' });
    const body = callbackBody('sal_127', { padding: 'x'.repeat(CALLBACK_BODY_LIMIT - Buffer.byteLength(base)) });
    expect(Buffer.byteLength(body)).toBe(CALLBACK_BODY_LIMIT);
    expect((await post(minter.mint(WORKFLOW_ID), body)).status).toBe(202);
  });

  it('a body that names no document is still a hint: accepted and signalled (test/callbacks/any-body.test.ts has the rest)', async () => {
    const response = await post(minter.mint('sale:biz_nairobi:no-document'), callbackBody(undefined));
    expect(response).toEqual({ status: 202, json: { status: 'accepted' } });
    expect(recorder.calls.map((c) => c.hint)).toEqual([
      { documentId: null, event: 'sale.completed', callbackId: expect.stringMatching(/^evt_/) },
    ]);
  });

  it('a duplicate delivery is acknowledged 200 duplicate and not signalled again', async () => {
    const url = minter.mint(WORKFLOW_ID);
    const first = await post(url, callbackBody('sal_128', { id: 'evt_dup' }));
    const second = await post(url, callbackBody('sal_128', { id: 'evt_dup' }));
    // Another delivery of the same outcome within the outcome window: not signalled either.
    const third = await post(url, callbackBody('sal_128'));

    expect([first, second, third]).toEqual([
      { status: 202, json: { status: 'accepted' } },
      { status: 200, json: { status: 'duplicate' } },
      { status: 200, json: { status: 'duplicate' } },
    ]);
    expect(recorder.calls).toHaveLength(1);
  });

  it('410 for an authentic but expired URL; 401 when its expiry was altered', async () => {
    const token = minter.token(WORKFLOW_ID, 1_000); // anchored in 1970: long expired
    const url = `${baseUrl}/callbacks/${encodeURIComponent(WORKFLOW_ID)}/${token}`;
    const expired = await post(url, callbackBody('sal_132'));
    expect(expired).toMatchObject({ status: 410, json: { error: { code: 'expired_token' } } });

    const [, mac] = token.split('.');
    const extended = `${(Math.ceil(Date.now() / 1000) + 3_600).toString(36)}.${mac}`;
    const forged = await post(
      `${baseUrl}/callbacks/${encodeURIComponent(WORKFLOW_ID)}/${extended}`,
      callbackBody('sal_132'),
    );
    expect(forged.status).toBe(401);
    expect(recorder.calls).toEqual([]);
  });

  it('401 for a URL of the old, non-expiring format', async () => {
    const legacy = createHmac('sha256', SECRET).update(WORKFLOW_ID).digest('base64url');
    const url = `${baseUrl}/callbacks/${encodeURIComponent(WORKFLOW_ID)}/${legacy}`;
    expect((await post(url, callbackBody('sal_133'))).status).toBe(401);
    expect(recorder.calls).toEqual([]);
  });

  it('200 ignored when no running workflow has the id; later callbacks are answered without signalling', async () => {
    recorder.outcome = 'not_found';
    const url = minter.mint('sale:biz_nairobi:closed');
    const response = await post(url, callbackBody('sal_129'));
    const later = await post(url, callbackBody('sal_129b', { event: 'sale.failed' }));

    expect(response).toEqual({ status: 200, json: { status: 'ignored' } });
    expect(later).toEqual({ status: 200, json: { status: 'ignored' } });
    expect(recorder.calls).toHaveLength(1);
  });

  it('503 when signalling fails, and the redelivery of the same callback is signalled', async () => {
    recorder.outcome = new Error('temporal is unavailable');
    const body = callbackBody('sal_130');
    const response = await post(minter.mint(WORKFLOW_ID), body);
    expect(response).toMatchObject({ status: 503, json: { error: { code: 'signal_failed' } } });

    recorder.outcome = 'signalled';
    expect(await post(minter.mint(WORKFLOW_ID), body)).toEqual({ status: 202, json: { status: 'accepted' } });
    expect(recorder.calls).toHaveLength(2);
  });

  it('404 without the URL for other methods and shapes under /callbacks/', async () => {
    const url = minter.mint(WORKFLOW_ID);
    const token = url.slice(url.lastIndexOf('/') + 1);
    for (const [method, target] of [
      ['GET', url],
      ['PUT', url],
      ['POST', `${url}/extra`],
    ] as const) {
      const body = method === 'GET' ? undefined : '{}';
      const response = await request(target, { method, headers: JSON_TYPE, body });
      const text = await response.body.text();
      expect(response.statusCode, `${method} ${target}`).toBe(404);
      expect(text).not.toContain(token);
    }
    expect(recorder.calls).toEqual([]);
  });

  it("leaves the host's body parsing alone outside the plugin", async () => {
    const response = await post(`${baseUrl}/echo`, '{"a":1}');
    expect(response).toEqual({ status: 200, json: { echoed: { a: 1 } } });
  });

  it('logs carry the workflow id and the redacted path, never a token or the full URL', () => {
    const text = logs.text();
    const lines = logs.lines();
    const tokens = [WORKFLOW_ID, OTHER_WORKFLOW_ID].map((id) => {
      const url = minter.mint(id);
      return url.slice(url.lastIndexOf('/') + 1);
    });

    for (const token of tokens) expect(text).not.toContain(token);
    expect(text).not.toContain('A'.repeat(43)); // the forged token
    // Proof that request logging was on and saw these requests.
    const urls = lines.map((line) => (line.req as { url?: string } | undefined)?.url);
    expect(urls).toContain(`/callbacks/${encodeURIComponent(WORKFLOW_ID)}/[redacted]`);
    expect(lines.some((line) => line.workflowId === WORKFLOW_ID && line.documentId === 'sal_123')).toBe(true);
    expect(lines.some((line) => line.msg === 'callback refused: the token does not match the workflow id')).toBe(true);
  });
});

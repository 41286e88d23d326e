import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackFloodGuard } from '../../src/callbacks/flood-guard.js';
import { handleCallback, readHint, type CallbackSignal } from '../../src/callbacks/routes.js';
import { redactCallbackPath } from '../../src/callbacks/answer-log.js';
import { SettledDocuments } from '../../src/callbacks/settled-documents.js';
import { CallbackUrlMinter } from '../../src/callbacks/tokens.js';
import type { CallbackHint } from '../../src/contracts/sale.js';
import { memoryLogger } from './helpers.js';

/** The raw bytes fastify hands on: text as is, anything else as its JSON. */
const bytes = (body: unknown) =>
  body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));

describe('readHint', () => {
  const hintOf = (body: unknown, headers = {}) => readHint(bytes(body), headers).hint;

  it('reads data.sale.id, event and id from the JSON bytes', () => {
    const body = { id: 'evt_1', event: 'sale.completed', data: { sale: { id: 'sal_1' } } };
    expect(hintOf(body)).toEqual({ documentId: 'sal_1', event: 'sale.completed', callbackId: 'evt_1' });
  });

  it('accepts a body whose data is the document itself', () => {
    expect(hintOf({ data: { id: 'sal_2', status: 'completed' } })).toEqual({
      documentId: 'sal_2',
      event: null,
      callbackId: null,
    });
  });

  it('prefers the body id to the x-callback-id header, and falls back to the header', () => {
    const sale = { data: { sale: { id: 'sal_3' } } };
    expect(hintOf({ ...sale, id: 'evt_body' }, { 'x-callback-id': 'evt_header' }).callbackId).toBe('evt_body');
    expect(hintOf(sale, { 'x-callback-id': ['evt_first', 'evt_second'] }).callbackId).toBe('evt_first');
  });

  it('drops fields of the wrong type or absurd length instead of refusing the callback', () => {
    expect(hintOf({ id: 7, event: 'x'.repeat(101), data: { sale: { id: ' sal_4 ' } } })).toEqual({
      documentId: 'sal_4',
      event: null,
      callbackId: null,
    });
  });

  it.each([
    ['no data', { id: 'evt' }, 'evt'],
    ['a numeric id', { data: { sale: { id: 42 } } }, null],
    ['a blank id', { data: { sale: { id: '  ' } } }, null],
    ['an id too long to be one', { data: { sale: { id: 'x'.repeat(257) } } }, null],
    ['an array', [{ data: { sale: { id: 'sal' } } }], null],
    ['text that is not JSON', 'data.sale.id=sal_5', null],
    ['nothing', undefined, null],
  ])('is still a hint, naming no document, for %s', (_label, body, callbackId) => {
    expect(hintOf(body)).toEqual({ documentId: null, event: null, callbackId });
  });

  it('fingerprints the bytes: the same body the same, another body another', () => {
    expect(readHint(bytes('a=1')).fingerprint).toBe(readHint(bytes('a=1')).fingerprint);
    expect(readHint(bytes('a=1')).fingerprint).not.toBe(readHint(bytes('a=2')).fingerprint);
    expect(readHint(undefined).fingerprint).toBe(readHint(bytes('')).fingerprint);
  });

  it('reads no field at all with CALLBACK_BODY_FIELDS=none', () => {
    const body = { id: 'evt_1', event: 'sale.completed', data: { sale: { id: 'sal_1' } } };
    expect(readHint(bytes(body), { 'x-callback-id': 'evt_h' }, 'none').hint).toEqual({
      documentId: null,
      event: null,
      callbackId: null,
    });
  });
});

describe('redactCallbackPath', () => {
  it.each([
    ['/callbacks/sale%3Ab%3A1/TOKEN', '/callbacks/sale%3Ab%3A1/[redacted]'],
    ['/callbacks/wf/TOKEN/extra?x=1', '/callbacks/wf/[redacted]'],
    ['/hooks/callbacks/wf/TOKEN', '/hooks/callbacks/wf/[redacted]'],
    ['/callbacks/wf?token=TOKEN', '/callbacks/wf/[redacted]'],
    ['/health', '/health'],
  ])('%s → %s', (url, expected) => {
    expect(redactCallbackPath(url)).toBe(expected);
  });
});

describe('handleCallback hosted by a plain node:http server', () => {
  const secret = 'plain-host-secret-0123456789-abcdefghij';
  const minter = new CallbackUrlMinter({ publicBaseUrl: 'http://127.0.0.1', secret });
  const logs = memoryLogger();
  const signalled: Array<{ workflowId: string; hint: CallbackHint }> = [];
  const signal: CallbackSignal = async (workflowId, hint) => {
    signalled.push({ workflowId, hint });
    return 'signalled';
  };
  const guard = new CallbackFloodGuard();
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const [, , workflowSegment = '', token = ''] = (req.url ?? '').split('/');
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void handleCallback({
          workflowId: decodeURIComponent(workflowSegment),
          token,
          body: Buffer.concat(chunks),
          headers: req.headers,
          minter,
          signal,
          guard,
          logger: logs.logger,
        }).then((result) => {
          res.writeHead(result.statusCode, { 'content-type': 'application/json' }).end(JSON.stringify(result.body));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('verifies, reads the raw body and signals, with any host', async () => {
    const url = new CallbackUrlMinter({ publicBaseUrl: baseUrl, secret }).mint('sale:b:7');
    const body = JSON.stringify({ event: 'sale.completed', data: { sale: { id: 'sal_7' } } });

    const accepted = await request(url, { method: 'POST', body, headers: { 'x-callback-id': 'evt_7' } });
    expect(accepted.statusCode).toBe(202);
    await accepted.body.dump();
    const refused = await request(
      url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
      { method: 'POST', body },
    );
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();
    const again = await request(url, { method: 'POST', body, headers: { 'x-callback-id': 'evt_7' } });
    expect(again.statusCode).toBe(200);
    expect(await again.body.json()).toEqual({ status: 'duplicate' });

    expect(signalled).toEqual([
      { workflowId: 'sale:b:7', hint: { documentId: 'sal_7', event: 'sale.completed', callbackId: 'evt_7' } },
    ]);
    expect(logs.text()).not.toContain(url.slice(url.lastIndexOf('/') + 1));
  });
});

describe('handleCallback under a flood', () => {
  it('1,000 callbacks on one valid URL: one signal, all answered 2xx, no line at info', async () => {
    const minter = new CallbackUrlMinter({
      publicBaseUrl: 'http://127.0.0.1',
      secret: 'flood-unit-secret-0123456789-abcdefghij',
    });
    const workflowId = 'sale:b:flood';
    const token = minter.mint(workflowId).split('/').pop() ?? '';
    const logs = memoryLogger();
    const guard = new CallbackFloodGuard();
    let signals = 0;
    const signal: CallbackSignal = async () => {
      signals++;
      return 'signalled';
    };
    const answers = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        handleCallback({
          workflowId,
          token,
          body: bytes({
            id: i % 2 === 0 ? 'evt_loop' : `evt_${i}`,
            event: 'sale.completed',
            data: { sale: { id: 'sal_1' } },
          }),
          minter,
          signal,
          guard,
          logger: logs.logger,
        }),
      ),
    );
    expect(signals).toBe(1);
    expect(answers.filter((a) => a.statusCode === 202)).toHaveLength(1);
    expect(answers.every((a) => a.statusCode === 200 || a.statusCode === 202)).toBe(true);
    // Each request's own line is at debug; nothing here reaches info.
    expect(logs.lines().filter((line) => Number(line.level) >= 30)).toEqual([]);
  });
});

describe('handleCallback for a document this process saw signed', () => {
  it('acknowledges its callback without a signal, and still signals the others', async () => {
    const minter = new CallbackUrlMinter({
      publicBaseUrl: 'http://127.0.0.1',
      secret: 'settled-unit-secret-0123456789-abcdefghij',
    });
    const settled = new SettledDocuments();
    settled.signedInAnswer('sal_signed');
    const signalled: string[] = [];
    const signal: CallbackSignal = async (_workflowId, hint) => {
      signalled.push(hint.documentId ?? '(none)');
      return 'signalled';
    };
    const callback = (workflowId: string, documentId: string | null) =>
      handleCallback({
        workflowId,
        token: minter.mint(workflowId).split('/').pop() ?? '',
        body: bytes(documentId === null ? 'not json' : { event: 'sale.completed', data: { sale: { id: documentId } } }),
        minter,
        signal,
        guard: new CallbackFloodGuard(),
        logger: memoryLogger().logger,
        settled,
      });
    expect(await callback('sale:b:signed', 'sal_signed')).toEqual({ statusCode: 200, body: { status: 'duplicate' } });
    expect(await callback('sale:b:other', 'sal_other')).toEqual({ statusCode: 202, body: { status: 'accepted' } });
    // A body naming no document is a hint like any other.
    expect(await callback('sale:b:anonymous', null)).toEqual({ statusCode: 202, body: { status: 'accepted' } });
    expect(signalled).toEqual(['sal_other', '(none)']);
  });
});

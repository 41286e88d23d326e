import { createServer, type Server } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, ResponseValidationError } from '../../src/http/errors.js';
import { callJson } from '../../src/http/json-api.js';
import { HttpTransport, type HttpRequest } from '../../src/http/transport.js';

let app: FastifyInstance;
let baseUrl: string;
let writes = 0;

beforeAll(async () => {
  app = Fastify();
  app.get('/ok', async (_req, reply) =>
    reply
      .headers({
        'x-ratelimit-limit': '120',
        'x-ratelimit-remaining': '119',
        'x-ratelimit-reset': '60',
        'idempotent-replayed': 'true',
      })
      .send({ data: { value: 1 } }),
  );
  app.post('/echo', async (req) => ({ data: { body: req.body, headers: req.headers } }));
  app.post('/write', async (_req, reply) => {
    writes++;
    return reply.code(503).send({ error: { code: 'unavailable', message: 'try later' } });
  });
  app.get('/limited', async (_req, reply) =>
    reply
      .code(429)
      .headers({ 'retry-after': '3', 'x-ratelimit-remaining': '0' })
      .send({ error: { code: 'rate_limited', message: 'slow down' } }),
  );
  app.get('/rejected', async (_req, reply) =>
    reply
      .code(422)
      .send({ error: { code: 'authority_rejected', message: 'no', sale: { id: 's1' }, errors: [{ code: 'x' }] } }),
  );
  app.get('/framework-error', async (_req, reply) =>
    reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'Invalid API key' }),
  );
  app.get('/text-error', async (_req, reply) => reply.code(502).type('text/html').send('<html>bad gateway</html>'));
  app.get('/slow', async () => {
    await new Promise((r) => setTimeout(r, 500));
    return { data: {} };
  });
  app.post('/drop', async (req) => {
    writes++;
    req.raw.socket.destroy();
    return new Promise(() => undefined);
  });
  app.get('/bad-shape', async () => ({ data: { value: 'not a number' } }));
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app.close();
});

const read = (path: string, extra: Partial<HttpRequest> = {}): HttpRequest => ({
  operation: 'test',
  method: 'GET',
  path,
  idempotent: true,
  ...extra,
});
const ValueSchema = z.object({ data: z.object({ value: z.number() }) });

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('HttpTransport and callJson', () => {
  it('parses a success with its rate-limit and replay headers', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const result = await callJson(transport, read('/ok'), ValueSchema);
    expect(result.data.data.value).toBe(1);
    expect(result.meta).toMatchObject({
      status: 200,
      idempotentReplayed: true,
      rateLimit: { limit: 120, remaining: 119, resetSeconds: 60 },
    });
    await transport.close();
  });

  it('sends the exact body bytes and headers given', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const body = JSON.stringify({ b: 2, a: 1 });
    const schema = z.object({ data: z.object({ body: z.unknown(), headers: z.record(z.string(), z.unknown()) }) });
    const result = await callJson(
      transport,
      read('/echo', { method: 'POST', body, headers: { 'idempotency-key': 'key-12345' } }),
      schema,
    );
    expect(result.data.data.body).toEqual({ b: 2, a: 1 });
    expect(result.data.data.headers['idempotency-key']).toBe('key-12345');
    expect(result.data.data.headers['content-type']).toBe('application/json');
    await transport.close();
  });

  it('keeps a base URL path prefix and encodes the query', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl: 'https://example.test/api/' });
    expect(transport.target('/v1/items', { businessId: 'b 1', skip: undefined, n: 2 })).toBe(
      '/api/v1/items?businessId=b+1&n=2',
    );
    await transport.close();
  });

  it('marks 5xx on a non-idempotent write ambiguous, and safe when idempotent', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const ambiguous = await failure(
      callJson(transport, read('/write', { method: 'POST', body: '{}', idempotent: false }), ValueSchema),
    );
    expect(ambiguous).toMatchObject({ status: 503, code: 'unavailable', retry: 'ambiguous', requestSent: true });
    const safe = await failure(
      callJson(transport, read('/write', { method: 'POST', body: '{}', idempotent: true }), ValueSchema),
    );
    expect(safe.retry).toBe('safe');
    await transport.close();
  });

  it('makes 429 safe and carries Retry-After and the rate-limit headers', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const err = await failure(callJson(transport, read('/limited'), ValueSchema));
    expect(err).toMatchObject({
      status: 429,
      code: 'rate_limited',
      retry: 'safe',
      retryAfterSeconds: 3,
      rateLimit: { remaining: 0 },
    });
    await transport.close();
  });

  it('makes 4xx final and keeps the extras', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const err = await failure(callJson(transport, read('/rejected'), ValueSchema));
    expect(err).toMatchObject({ status: 422, code: 'authority_rejected', retry: 'final' });
    expect(err.details).toEqual({ sale: { id: 's1' }, errors: [{ code: 'x' }] });
    await transport.close();
  });

  it('reads framework-style and non-JSON error bodies', async () => {
    const transport = new HttpTransport({ service: 'accounting', baseUrl });
    expect(await failure(callJson(transport, read('/framework-error'), ValueSchema))).toMatchObject({
      status: 401,
      code: 'unauthorized',
      message: 'Invalid API key',
      retry: 'final',
    });
    expect(await failure(callJson(transport, read('/text-error', { idempotent: false }), ValueSchema))).toMatchObject({
      status: 502,
      code: 'http_502',
      retry: 'ambiguous',
    });
    await transport.close();
  });

  it('reports a missing or wrong field in a 2xx body as a ResponseValidationError naming it', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const err = await callJson(transport, read('/bad-shape'), ValueSchema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as ResponseValidationError).issues[0]?.path).toBe('data.value');
    await transport.close();
  });

  it('classifies a refused connection as not sent and safe, even for a write', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe: Server = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const transport = new HttpTransport({ service: 'compliance', baseUrl: `http://127.0.0.1:${port}` });
    const err = await failure(transport.send(read('/write', { method: 'POST', body: '{}', idempotent: false })));
    expect(err).toMatchObject({ code: 'network_error', requestSent: false, retry: 'safe' });
    await transport.close();
  });

  it('classifies a timeout after sending as ambiguous for a non-idempotent write', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl, timeoutMs: 100 });
    const err = await failure(transport.send(read('/slow', { idempotent: false })));
    expect(err).toMatchObject({ code: 'timeout', requestSent: true, retry: 'ambiguous' });
    await transport.close();
  });

  it('classifies a connection dropped after the write as ambiguous', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const before = writes;
    const err = await failure(transport.send(read('/drop', { method: 'POST', body: '{}', idempotent: false })));
    expect(writes).toBe(before + 1);
    expect(err).toMatchObject({ code: 'connection_reset', requestSent: true, retry: 'ambiguous' });
    await transport.close();
  });

  it('honours the caller’s AbortSignal', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const before = await failure(transport.send(read('/slow', { signal: AbortSignal.abort() })));
    expect(before).toMatchObject({ code: 'aborted', requestSent: false, retry: 'safe' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const during = await failure(transport.send(read('/slow', { idempotent: false, signal: controller.signal })));
    expect(during).toMatchObject({ code: 'aborted', requestSent: true, retry: 'ambiguous' });
    await transport.close();
  });
});

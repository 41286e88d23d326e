import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../src/http/errors.js';
import { callJson } from '../../src/http/json-api.js';
import { DEFAULT_MAX_RESPONSE_BYTES, HttpTransport, type HttpRequest } from '../../src/http/transport.js';

/** A real HTTP server whose answers are as long as the test asks, or never end. */
let server: Server;
let baseUrl: string;
let endlessBytesWritten = 0;

/** Writes 64 KiB chunks while the client reads, until it hangs up. */
function writeForever(res: ServerResponse): void {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let open = true;
  res.on('close', () => (open = false));
  const pump = () => {
    while (open && res.write(chunk)) endlessBytesWritten += chunk.length;
    if (open) res.once('drain', pump);
  };
  pump();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const status = Number(url.searchParams.get('status') ?? 200);
    if (url.pathname === '/endless') {
      res.writeHead(status, { 'content-type': 'application/json' });
      writeForever(res);
      return;
    }
    // `{"data":"xxx…"}` of exactly `bytes` bytes.
    const bytes = Number(url.searchParams.get('bytes'));
    res.writeHead(status, { 'content-type': 'application/json' }).end(`{"data":"${'x'.repeat(bytes - 11)}"}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request = (path: string, extra: Partial<HttpRequest> = {}): HttpRequest => ({
  operation: 'listItems',
  method: 'GET',
  path,
  idempotent: true,
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('the size bound of an answer', () => {
  it('reads an answer of exactly 8 MiB and refuses one byte more, as a malformed answer', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const schema = z.object({ data: z.string() });
    const whole = await callJson(transport, request(`/sized?bytes=${DEFAULT_MAX_RESPONSE_BYTES}`), schema);
    expect(whole.data.data).toHaveLength(DEFAULT_MAX_RESPONSE_BYTES - 11);

    const err = await failure(callJson(transport, request(`/sized?bytes=${DEFAULT_MAX_RESPONSE_BYTES + 1}`), schema));
    expect(err).toMatchObject({ status: 200, code: 'invalid_response', retry: 'safe', requestSent: true });
    expect(err.message).toBe(
      `listItems: the compliance service answered HTTP 200 with a body over ${DEFAULT_MAX_RESPONSE_BYTES} bytes; ` +
        'it was not read',
    );
    await transport.close();
  });

  it('stops reading an answer that never ends', async () => {
    const transport = new HttpTransport({ service: 'accounting', baseUrl, maxResponseBytes: 256 * 1024 });
    const err = await failure(transport.send(request('/endless')));
    expect(err).toMatchObject({ code: 'invalid_response', retry: 'safe' });
    expect(err.message).toMatch(/over 262144 bytes; it was not read$/);
    expect(endlessBytesWritten).toBeLessThan(16 * 1024 * 1024);
    await transport.close();
  });

  it('makes an oversized 2xx answer to a non-idempotent write ambiguous: the write may have happened', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl, maxResponseBytes: 1024 });
    const err = await failure(
      transport.send(request('/sized?bytes=2048', { method: 'POST', body: '{}', idempotent: false })),
    );
    expect(err).toMatchObject({ status: 200, code: 'invalid_response', retry: 'ambiguous', requestSent: true });
    await transport.close();
  });

  it('reads an error answer up to 1 MiB; a longer one keeps the retry its status gives', async () => {
    const transport = new HttpTransport({ service: 'compliance', baseUrl });
    const read = await transport.send(request(`/sized?status=422&bytes=${1024 * 1024}`));
    expect(read.status).toBe(422);
    const rejected = await failure(transport.send(request(`/sized?status=422&bytes=${1024 * 1024 + 1}`)));
    expect(rejected).toMatchObject({ status: 422, code: 'invalid_response', retry: 'final' });
    expect(rejected.message).toMatch(/HTTP 422 with a body over 1048576 bytes/);
    const unavailable = await failure(transport.send(request('/endless?status=503')));
    expect(unavailable).toMatchObject({ status: 503, code: 'invalid_response', retry: 'safe' });
    await transport.close();
  });
});

import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec.js';
import { ConfigError } from '../../src/config/env.js';
import { codecServerOptionsFromEnv, startCodecServer, type CodecServer } from '../../src/codec/server.js';
import { newKey, ring } from './helpers.js';

const UI = 'http://localhost:8233';
const TOKEN = 'codec-test-token-0123456789abcdef0123';
const customer = { name: 'Achieng Odhiambo', pin: 'P051234567X' };
const b64 = (text: string) => Buffer.from(text).toString('base64');
const plainJson = { metadata: { encoding: b64('json/plain') }, data: b64(JSON.stringify(customer)) };

/** Everything the servers log, to check that no payload or token reaches a log line. */
const logLines: string[] = [];
const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  }),
);

const codec = new AesGcmPayloadCodec(ring([['k1', newKey()]]));
let open: CodecServer;
let guarded: CodecServer;

beforeAll(async () => {
  open = await startCodecServer({ codec, logger, corsOrigins: [UI] });
  guarded = await startCodecServer({ codec, logger, corsOrigins: [UI], authToken: TOKEN });
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
});

function post(server: CodecServer, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}

describe('codec server over HTTP', () => {
  it('encodes and decodes the proto-JSON payloads the UI and CLI send', async () => {
    const encodedRes = await post(open, '/encode', { payloads: [plainJson] });
    expect(encodedRes.status).toBe(200);
    const encoded = (await encodedRes.json()) as {
      payloads: Array<{ metadata: Record<string, string>; data: string }>;
    };
    expect(encoded.payloads).toHaveLength(1);
    const [payload] = encoded.payloads;
    expect(Buffer.from(payload!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(payload!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
    expect(Buffer.from(payload!.data, 'base64').includes(customer.name)).toBe(false);

    const decodedRes = await post(open, '/decode', { payloads: [payload, plainJson] });
    expect(decodedRes.status).toBe(200);
    const decoded = (await decodedRes.json()) as { payloads: unknown[] };
    // The encrypted one comes back as it was; the plain one passes through.
    expect(decoded.payloads).toEqual([plainJson, plainJson]);
  });

  it('refuses a malformed body and an undecryptable payload with a clear error', async () => {
    const bad = await post(open, '/decode', { payload: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_body');

    const foreign = {
      metadata: { encoding: b64('binary/encrypted'), 'encryption-key-id': b64('k9') },
      data: b64('x'.repeat(40)),
    };
    const res = await post(open, '/decode', { payloads: [foreign] });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('payload_not_decryptable');
    expect(body.error.message).toContain('key "k9"');
  });

  it('CORS: the UI origin is allowed, with credentials and Vary', async () => {
    const res = await post(open, '/decode', { payloads: [plainJson] }, { Origin: UI });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  it('CORS: any other origin is refused, with no allow-origin header', async () => {
    for (const origin of ['https://evil.example', 'http://localhost:8234', 'null']) {
      const res = await post(open, '/decode', { payloads: [plainJson] }, { Origin: origin });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await res.text()).not.toContain(customer.name);
    }
  });

  it('CORS preflight: allowed origin gets methods and the X-Namespace, Content-Type, Authorization headers', async () => {
    const res = await fetch(`${open.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: UI,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe('X-Namespace, Content-Type, Authorization');

    const refused = await fetch(`${open.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('an origin can be allowed once known (the UI on a free port)', async () => {
    const late = 'http://localhost:40123';
    expect((await post(open, '/decode', { payloads: [plainJson] }, { Origin: late })).status).toBe(403);
    open.allowOrigin(`${late}/`);
    const res = await post(open, '/decode', { payloads: [plainJson] }, { Origin: late });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(late);
    expect(() => open.allowOrigin('*')).toThrow(ConfigError);
  });

  it('authorisation: a bearer token is required when configured; preflight needs none', async () => {
    const missing = await post(guarded, '/decode', { payloads: [plainJson] });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');

    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, 'Basic abc']) {
      expect((await post(guarded, '/encode', { payloads: [plainJson] }, { Authorization: wrong })).status).toBe(401);
    }
    const ok = await post(
      guarded,
      '/encode',
      { payloads: [plainJson] },
      { Authorization: `Bearer ${TOKEN}`, Origin: UI },
    );
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI);

    const preflight = await fetch(`${guarded.url}/encode`, {
      method: 'OPTIONS',
      headers: {
        Origin: UI,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
  });

  it('the UI through the browser: /sign-in asks for the token once (HTTP Basic), which then opens /decode', async () => {
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    const challenge = await fetch(`${guarded.url}/sign-in`);
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toMatch(/^Basic realm="codec server"/);
    expect((await fetch(`${guarded.url}/sign-in`, { headers: { Authorization: basic('ops', 'wrong') } })).status).toBe(
      401,
    );
    expect((await fetch(`${guarded.url}/sign-in`, { headers: { Authorization: basic('ops', TOKEN) } })).status).toBe(
      200,
    );

    const decoded = await post(
      guarded,
      '/decode',
      { payloads: [plainJson] },
      { Authorization: basic('anyone', TOKEN), Origin: UI },
    );
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-credentials')).toBe('true');
    for (const wrong of [
      basic('ops', `${TOKEN}x`),
      basic(TOKEN, ''),
      `Basic ${Buffer.from(TOKEN).toString('base64')}`,
    ]) {
      expect((await post(guarded, '/decode', { payloads: [plainJson] }, { Authorization: wrong })).status).toBe(401);
    }
  });

  it('enforces a body limit, after the token check (no parsing for callers without one)', async () => {
    const small = await startCodecServer({ codec, logger, bodyLimit: 1024, authToken: TOKEN });
    try {
      const big = { payloads: [{ data: b64('x'.repeat(4096)) }] };
      expect((await post(small, '/encode', big)).status).toBe(401);
      expect((await post(small, '/encode', big, { Authorization: `Bearer ${TOKEN}` })).status).toBe(413);
    } finally {
      await small.close();
    }
  });

  it('accepts protobuf JSON\'s empty payload list, {} (the CLI\'s query arguments), and {"payloads": []}', async () => {
    for (const path of ['/encode', '/decode']) {
      for (const body of [{}, { payloads: [] }]) {
        const res = await post(open, path, body);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(200);
        expect(await res.json()).toEqual({ payloads: [] });
      }
    }
    // Still refused: a body that is not an object, or whose payloads are not a list.
    for (const body of [[], { payloads: {} }, { payloads: null }]) {
      expect((await post(open, '/decode', body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('with a token, an empty list is refused without it too (every payload route needs the token)', async () => {
    for (const path of ['/encode', '/decode']) {
      expect((await post(guarded, path, {})).status).toBe(401);
      expect((await post(guarded, path, {}, { Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    }
  });

  it('logs requests without payloads or the token', () => {
    const all = logLines.join('');
    expect(all).toContain('codec request');
    expect(all).toContain('"namespace":"default"');
    for (const secret of [customer.name, plainJson.data, TOKEN]) expect(all).not.toContain(secret);
  });
});

describe('codecServerOptionsFromEnv', () => {
  it('defaults to loopback, port 8234 and the local UI', () => {
    expect(codecServerOptionsFromEnv({})).toEqual({
      host: '127.0.0.1',
      port: 8234,
      corsOrigins: ['http://localhost:8233', 'http://127.0.0.1:8233'],
      authToken: undefined,
    });
  });

  it('reads origins and the token; errors name the variable, never the token', () => {
    const options = codecServerOptionsFromEnv({
      CODEC_CORS_ORIGINS: 'https://temporal.example.com/, http://localhost:8080',
      CODEC_AUTH_TOKEN: TOKEN,
    });
    expect(options.corsOrigins).toEqual(['https://temporal.example.com', 'http://localhost:8080']);
    expect(options.authToken).toBe(TOKEN);

    expect(() => codecServerOptionsFromEnv({ CODEC_CORS_ORIGINS: '*' })).toThrow(/CODEC_CORS_ORIGINS/);
    expect(() => codecServerOptionsFromEnv({ CODEC_CORS_ORIGINS: 'https://ui.example.com/path' })).toThrow(ConfigError);
    try {
      codecServerOptionsFromEnv({ CODEC_AUTH_TOKEN: 'short-secret' });
      throw new Error('expected an error');
    } catch (err) {
      expect((err as Error).message).toBe('CODEC_AUTH_TOKEN: must be at least 32 characters');
    }
  });
});

describe('a codec server reachable beyond this machine needs a token', () => {
  const beyondLoopback = ['0.0.0.0', '::', '192.168.1.20', 'codec.internal'];
  const loopback = ['127.0.0.1', '127.0.0.2', '::1', 'localhost', '::ffff:127.0.0.1'];

  it('refuses to start on a non-loopback address without one, naming CODEC_AUTH_TOKEN', async () => {
    for (const host of beyondLoopback) {
      await expect(startCodecServer({ codec, logger, host }), host).rejects.toThrow(ConfigError);
      await expect(startCodecServer({ codec, logger, host }), host).rejects.toThrow(/CODEC_AUTH_TOKEN/);
      expect(() => codecServerOptionsFromEnv({ CODEC_HOST: host }), host).toThrow(
        /CODEC_HOST.*CODEC_AUTH_TOKEN|CODEC_AUTH_TOKEN.*CODEC_HOST/,
      );
    }
  });

  it('starts on 0.0.0.0 with a token, and then refuses callers without it', async () => {
    expect(codecServerOptionsFromEnv({ CODEC_HOST: '0.0.0.0', CODEC_AUTH_TOKEN: TOKEN }).host).toBe('0.0.0.0');
    const wide = await startCodecServer({ codec, logger, host: '0.0.0.0', authToken: TOKEN });
    try {
      expect((await post(wide, '/decode', { payloads: [plainJson] })).status).toBe(401);
      expect(
        (await post(wide, '/decode', { payloads: [plainJson] }, { Authorization: `Bearer ${TOKEN}` })).status,
      ).toBe(200);
    } finally {
      await wide.close();
    }
  });

  it('loopback addresses need none', () => {
    for (const host of loopback) expect(codecServerOptionsFromEnv({ CODEC_HOST: host }).host, host).toBe(host);
  });
});

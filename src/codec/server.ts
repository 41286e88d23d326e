// `POST /encode` and `POST /decode` for the Temporal UI and CLI: docs/encryption.md, "The codec server".
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { PayloadDecryptionError } from './aes-gcm-codec.js';
import { ConfigError, readVariable, resolveSecretFiles, splitList, type Env } from '../config/env.js';
import { isLoopbackHost } from '../http/base-url.js';

/** The local dev server's UI. */
const DEFAULT_CODEC_CORS_ORIGINS: readonly string[] = ['http://localhost:8233', 'http://127.0.0.1:8233'];
const DEFAULT_CODEC_PORT = 8234;
/** Temporal's default payload limit is 2 MB; base64 and a batch of payloads fit in this. */
const DEFAULT_CODEC_BODY_LIMIT = 16 * 1024 * 1024;
const CODEC_AUTH_TOKEN_MIN_LENGTH = 32;

interface CodecServerOptions {
  codec: PayloadCodec;
  logger: Logger;
  /** Exact `scheme://host[:port]` origins; default the local UI. */
  corsOrigins?: readonly string[];
  authToken?: string | undefined;
  bodyLimit?: number;
  /** Default 127.0.0.1 and a free port: it decrypts for whoever reaches it, so expose it deliberately. */
  host?: string;
  port?: number;
}

export type CodecServer = Awaited<ReturnType<typeof startCodecServer>>;

const bytes = z
  .string()
  .regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64')
  .transform((text) => Buffer.from(text, 'base64'));
const jsonPayload = z
  .object({ metadata: z.record(z.string(), bytes).nullish(), data: bytes.nullish() })
  .transform(({ metadata, data }): Payload => ({ metadata: metadata ?? {}, data: data ?? Buffer.alloc(0) }));
// Protobuf JSON leaves out an empty repeated field: the CLI sends `{}` for a query's empty argument list. Strict,
// as protobuf JSON parsers are: a misspelt field is an error, not an empty list.
const payloadsBody = z.strictObject({ payloads: z.array(jsonPayload).default([]) });

const base64 = (value: Uint8Array | null | undefined) => Buffer.from(value ?? new Uint8Array()).toString('base64');

function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const metadata = Object.entries(payload.metadata ?? {}).filter(([, value]) => value != null);
  return {
    metadata: Object.fromEntries(metadata.map(([key, value]) => [key, base64(value)])),
    data: base64(payload.data),
  };
}

function normaliseOrigins(origins: readonly string[], source = 'corsOrigins'): string[] {
  return origins.map((raw) => {
    const text = raw.trim();
    const url = URL.parse(text);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== text.replace(/\/$/, ''))
      throw new ConfigError(
        `${source}: "${text}" is not an origin like https://temporal-ui.example.com (no path, no wildcard)`,
      );
    return url.origin;
  });
}

/** `Bearer <token>`, or `Basic` with the token as the password (what a browser sends after /sign-in). */
function presentedToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const bearer = /^Bearer (.+)$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!basic) return undefined;
  const credentials = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  return colon < 0 ? undefined : credentials.slice(colon + 1);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/** `url`: the value for `--codec-endpoint`; `allowOrigin`: e.g. the UI's, once its port is known. */
export async function startCodecServer(options: CodecServerOptions) {
  const host = options.host ?? '127.0.0.1';
  // Checked here too, not only when the environment is read: no caller can open a decrypting door by accident.
  assertTokenBeyondLoopback(host, options.authToken, 'the listen address (CODEC_HOST)');
  const origins = new Set(normaliseOrigins(options.corsOrigins ?? DEFAULT_CODEC_CORS_ORIGINS));
  const expected = options.authToken === undefined || options.authToken === '' ? undefined : digest(options.authToken);
  const loggerInstance: FastifyBaseLogger = options.logger.child({ component: 'codec-server' });
  const app = Fastify({
    loggerInstance,
    // One line per request, from the onResponse hook below, instead of two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? DEFAULT_CODEC_BODY_LIMIT,
    requestTimeout: 30_000,
  });

  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (!origins.has(origin))
      return reply.code(403).send(errorBody('origin_not_allowed', 'this origin may not call the codec server'));
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Access-Control-Allow-Credentials', 'true');
    reply.header('Vary', 'Origin');
    if (request.method === 'OPTIONS')
      return reply
        .code(204)
        .header('Access-Control-Allow-Methods', 'POST, OPTIONS')
        .header('Access-Control-Allow-Headers', 'X-Namespace, Content-Type, Authorization')
        .header('Access-Control-Max-Age', '600')
        .send();
  });

  /** Digests of equal length whatever is given, so the comparison takes the same time for any wrong token. */
  const tokenMatches = (header: string | undefined): boolean => {
    const given = presentedToken(header);
    return expected !== undefined && given !== undefined && timingSafeEqual(digest(given), expected);
  };

  const authorise = async (request: FastifyRequest, reply: FastifyReply) => {
    if (expected === undefined || tokenMatches(request.headers.authorization)) return;
    return reply
      .code(401)
      .header('WWW-Authenticate', 'Bearer')
      .send(errorBody('unauthorized', 'a valid Authorization: Bearer token is required'));
  };

  app.addHook('onResponse', async (request, reply) => {
    const fields = {
      method: request.method,
      route: request.routeOptions.url ?? 'unknown',
      status: reply.statusCode,
      namespace: request.headers['x-namespace'],
      payloads: (request.body as { payloads?: unknown[] } | undefined)?.payloads?.length,
      ms: Math.round(reply.elapsedTime),
    };
    if (reply.statusCode >= 400) request.log.warn(fields, 'codec request refused');
    else request.log.debug(fields, 'codec request');
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof PayloadDecryptionError) {
      request.log.warn({ keyId: error.keyId }, error.message);
      return reply.code(422).send(errorBody('payload_not_decryptable', error.message));
    }
    const status = error.statusCode ?? 500;
    // Fastify's own messages (body too large, bad JSON) never quote the body.
    if (status >= 400 && status < 500)
      return reply.code(status).send(errorBody(error.code ?? 'bad_request', error.message));
    request.log.error({ err: { name: error.name, message: error.message } }, 'codec failure');
    return reply.code(500).send(errorBody('internal', 'the codec failed; see the server log'));
  });

  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send(errorBody('not_found', 'no such route')));

  app.get('/health', async () => ({ status: 'ok' }));

  // Why: docs/encryption.md, "The browser and the token".
  app.get('/sign-in', async (request, reply) => {
    if (expected === undefined) return reply.type('text/plain').send('this codec server needs no token\n');
    if (!tokenMatches(request.headers.authorization))
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Basic realm="codec server", charset="UTF-8"')
        .type('text/plain')
        .send('enter the codec server token as the password (any user name)\n');
    return reply.type('text/plain').send('signed in: the Temporal UI in this browser can decode now\n');
  });

  for (const direction of ['encode', 'decode'] as const) {
    // onRequest: the token is checked before the body is read, so a caller without one cannot make the server parse.
    app.post(`/${direction}`, { onRequest: authorise }, async (request, reply) => {
      const parsed = payloadsBody.safeParse(request.body);
      if (!parsed.success) {
        const path = parsed.error.issues[0]?.path.join('.');
        const expected = 'expected {"payloads": [{"metadata": {…base64}, "data": base64}]}';
        return reply.code(400).send(errorBody('invalid_body', `${expected}${path ? ` (at ${path})` : ''}`));
      }
      const { payloads } = parsed.data;
      const result =
        direction === 'encode' ? await options.codec.encode(payloads) : await options.codec.decode(payloads);
      return reply.send({ payloads: result.map(toJson) });
    });
  }

  await app.listen({ host, port: options.port ?? 0 });
  const { port } = app.server.address() as AddressInfo;
  const shownHost =
    host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    allowOrigin: (origin: string) => normaliseOrigins([origin]).forEach((o) => origins.add(o)),
    close: async () => void (await app.close()),
  };
}

function assertTokenBeyondLoopback(host: string, authToken: string | undefined, hostSetting: string): void {
  if ((authToken !== undefined && authToken !== '') || isLoopbackHost(host)) return;
  throw new ConfigError(
    `${hostSetting} is ${host}: the codec server decrypts for whoever reaches it, so beyond loopback it needs a ` +
      `token: set CODEC_AUTH_TOKEN (or CODEC_AUTH_TOKEN_FILE) to a secret of at least ${CODEC_AUTH_TOKEN_MIN_LENGTH} ` +
      'characters (openssl rand -base64 32), or listen on 127.0.0.1',
  );
}

/** Errors name the variable, never the token. */
export function codecServerOptionsFromEnv(rawEnv: Env) {
  const env = resolveSecretFiles(rawEnv, ['CODEC_AUTH_TOKEN']);
  const host = readVariable(env, 'CODEC_HOST') ?? '127.0.0.1';
  const port = Number(readVariable(env, 'CODEC_PORT') ?? DEFAULT_CODEC_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ConfigError('CODEC_PORT: must be a port number (0–65535)');
  const originsText = readVariable(env, 'CODEC_CORS_ORIGINS');
  const corsOrigins = originsText
    ? normaliseOrigins(splitList(originsText), 'CODEC_CORS_ORIGINS')
    : [...DEFAULT_CODEC_CORS_ORIGINS];
  const authToken = readVariable(env, 'CODEC_AUTH_TOKEN');
  if (authToken !== undefined && authToken.length < CODEC_AUTH_TOKEN_MIN_LENGTH)
    throw new ConfigError(`CODEC_AUTH_TOKEN: must be at least ${CODEC_AUTH_TOKEN_MIN_LENGTH} characters`);
  assertTokenBeyondLoopback(host, authToken, 'CODEC_HOST');
  return { host, port, corsOrigins, authToken };
}

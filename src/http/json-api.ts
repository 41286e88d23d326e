import type { z } from 'zod';
import { fieldPath, isRecord } from '../contracts/sale-input.js';
import { ResponseValidationError, classifyStatus } from './errors.js';
import { parseRateLimit, parseRetryAfter } from './rate-limit.js';
import { requestError, type HttpRequest, type HttpResponse, type HttpTransport } from './transport.js';

export interface ApiResult<T> {
  data: T;
  meta: ReturnType<typeof responseMeta>;
}

function responseMeta(res: HttpResponse) {
  return {
    status: res.status,
    rateLimit: parseRateLimit(res.headers),
    idempotentReplayed: (res.headers['idempotent-replayed'] ?? '').toLowerCase() === 'true',
  };
}

/** The JSON value `bytes` hold; `undefined` when they hold none (empty, or not JSON). */
export function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** `{error: {code, message, ...}}` (the documents'), `{code, message}`, `{statusCode, error, message}`, or not JSON. */
function readErrorBody(body: unknown, status: number) {
  const fallback = { code: `http_${status}`, message: `HTTP ${status}`, details: {} };
  if (!isRecord(body)) return fallback;
  if (isRecord(body.error)) {
    const { code, message, ...details } = body.error;
    return {
      code: typeof code === 'string' ? code : fallback.code,
      message: typeof message === 'string' ? message : fallback.message,
      details,
    };
  }
  const { code, message, error, statusCode: _statusCode, ...details } = body;
  const text = Array.isArray(message) ? message.join('; ') : message;
  const title = typeof error === 'string' ? error : undefined;
  return {
    code: typeof code === 'string' ? code : (title?.toLowerCase().replace(/\W+/g, '_') ?? fallback.code),
    message: typeof text === 'string' ? text : (title ?? fallback.message),
    details,
  };
}

/** A 2xx JSON body parsed with `schema`; anything else is an `ApiError`. */
export async function callJson<S extends z.ZodType>(
  transport: HttpTransport,
  req: HttpRequest,
  schema: S,
): Promise<ApiResult<z.output<S>>> {
  const res = await transport.send(req);
  if (res.status < 200 || res.status >= 300)
    throw requestError(transport.service, req, {
      status: res.status,
      ...readErrorBody(parseJson(res.body), res.status),
      rateLimit: parseRateLimit(res.headers),
      retryAfterSeconds: parseRetryAfter(res.headers),
      retry: classifyStatus(res.status, req.idempotent),
      requestSent: true,
    });
  const body = parseJson(res.body);
  if (body === undefined)
    throw requestError(transport.service, req, {
      status: res.status,
      code: 'invalid_response',
      message: `${req.operation}: HTTP ${res.status} without a JSON body`,
      rateLimit: parseRateLimit(res.headers),
      // The service did answer 2xx: the write happened, so repeating it is only safe when idempotent.
      retry: req.idempotent ? 'safe' : 'ambiguous',
      requestSent: true,
    });
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new ResponseValidationError(
      transport.service,
      req.operation,
      res.status,
      parsed.error.issues.map(({ path, message }) => ({ path: fieldPath(path), message })),
    );
  return { data: parsed.data, meta: responseMeta(res) };
}

import type { FastifyError, FastifyInstance } from 'fastify';

/** The compliance service's error body: `{error: {code, message, ...extras}}` (compliance-api.md, Errors). */
export interface ComplianceErrorBody {
  error: { code: string; message: string } & Record<string, unknown>;
}

export function complianceErrorBody(
  _status: number,
  code: string,
  message: string,
  extras: Record<string, unknown> = {},
): ComplianceErrorBody {
  // code and message first for readers; an extra can never replace them.
  const { code: _code, message: _message, ...rest } = extras;
  return { error: { code, message, ...rest } };
}

/** Thrown by hooks and handlers; the app's error handler turns it into the documented error body. */
export class ComplianceHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    /** Fields next to `code` and `message` (`sale`, `item`, `errors`, `creditNoteId`, `branches`). */
    readonly extras: Record<string, unknown> = {},
    /** Response headers that belong to this answer (e.g. `Retry-After`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * 400 `invalid_request` naming the first wrong field. Every issue is also listed in `errors`, each with a
 * `code` so the list has the same shape as the authority's causes.
 */
export function invalidRequest(
  issues: FieldIssue[] | FieldIssue,
  extras: Record<string, unknown> = {},
): ComplianceHttpError {
  const list = Array.isArray(issues) ? issues : [issues];
  const first = list[0] ?? { field: 'body', message: 'is invalid' };
  return new ComplianceHttpError(400, 'invalid_request', `${first.field}: ${first.message}`, {
    ...extras,
    errors: list.map((issue) => ({ code: 'invalid_request', field: issue.field, message: issue.message })),
  });
}

export const forbidden = (message: string) => new ComplianceHttpError(403, 'forbidden', message);
export const notFound = (what: string) => new ComplianceHttpError(404, 'not_found', `${what} not found`);
export const conflict = (code: string, message: string, extras: Record<string, unknown> = {}) =>
  new ComplianceHttpError(409, code, message, extras);
export const unprocessable = (code: string, message: string, extras: Record<string, unknown> = {}) =>
  new ComplianceHttpError(422, code, message, extras);

const BODY_LIMIT_TEXT = '1 MiB';

function isFastifyError(err: unknown): err is FastifyError {
  return err instanceof Error && typeof (err as { statusCode?: unknown }).statusCode === 'number';
}

/** Maps framework errors (oversized body, wrong content type, bad JSON) to the documented codes. */
function fromFrameworkError(err: FastifyError): ComplianceHttpError | undefined {
  const status = err.statusCode ?? 500;
  if (status === 413) {
    return new ComplianceHttpError(413, 'payload_too_large', `Request body is larger than ${BODY_LIMIT_TEXT}`);
  }
  if (status === 415) return invalidRequest({ field: 'Content-Type', message: 'must be application/json' });
  if (status >= 400 && status < 500) return invalidRequest({ field: 'body', message: err.message });
  return undefined;
}

/** Every non-2xx answer of the compliance app, including unknown routes and framework errors, has the documented shape. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const known = err instanceof ComplianceHttpError ? err : isFastifyError(err) ? fromFrameworkError(err) : undefined;
    if (known) {
      return reply
        .code(known.statusCode)
        .headers(known.headers)
        .send(complianceErrorBody(known.statusCode, known.code, known.message, known.extras));
    }
    request.log.error({ err }, 'compliance sandbox: unhandled error');
    return reply
      .code(500)
      .send(complianceErrorBody(500, 'internal_error', 'The service failed to process the request'));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? request.url;
    return reply.code(404).send(complianceErrorBody(404, 'not_found', `No route ${request.method} ${path}`));
  });
}

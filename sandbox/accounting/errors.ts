import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance } from 'fastify';

/** The accounting service's error body (contract decision A1): `{statusCode, error, message}`. */
export interface AccountingErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

/**
 * Builds the A1 body. The `code` parameter exists so this fits the shared fault engine's signature; the
 * A1 shape has no code field, its `error` is the HTTP reason phrase.
 */
export function accountingErrorBody(status: number, _code: string, message: string): AccountingErrorBody {
  return { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message };
}

/** Thrown by handlers and hooks; the app's error handler turns it into an A1 answer. */
class AccountingHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new AccountingHttpError(400, message);
export const unauthorized = (message: string) => new AccountingHttpError(401, message);
export const forbidden = (message: string) => new AccountingHttpError(403, message);
export const notFound = (message: string) => new AccountingHttpError(404, message);

function isFastifyError(err: unknown): err is FastifyError {
  return err instanceof Error && typeof (err as { statusCode?: unknown }).statusCode === 'number';
}

/** Every answer other than 2xx, including framework errors (413, bad JSON) and unknown routes, is A1-shaped. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    if (err instanceof AccountingHttpError) {
      return reply.code(err.statusCode).send(accountingErrorBody(err.statusCode, '', err.message));
    }
    if (isFastifyError(err) && err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      const message = err.statusCode === 413 ? 'Request body is larger than 1 MiB' : err.message;
      return reply.code(err.statusCode).send(accountingErrorBody(err.statusCode, '', message));
    }
    request.log.error({ err }, 'accounting sandbox: unhandled error');
    return reply.code(500).send(accountingErrorBody(500, '', 'Internal server error'));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return reply.code(404).send(accountingErrorBody(404, '', `Route ${request.method} ${path} not found`));
  });
}

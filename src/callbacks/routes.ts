/**
 * Fastify plugin for `POST /callbacks/:workflowId/:token`. Bodies are taken as raw bytes of any content type
 * (up to 64 KiB) and only parsed after the token verified, so a forged callback costs no JSON parsing.
 * Register it with `app.register(callbackRoutes, { minter, signal, guard, logger })`.
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { CallbackFloodGuard } from './flood-guard.js';
import { handleCallback, type CallbackLogger, type CallbackSignal } from './handler.js';
import { callbackRequestSerializer } from './log-redaction.js';
import type { CallbackTokenVerifier } from './tokens.js';

export const CALLBACK_BODY_LIMIT = 64 * 1024;

export interface CallbackRoutesOptions {
  minter: CallbackTokenVerifier;
  signal: CallbackSignal;
  /** De-duplication and per-workflow budget (default: one with the default limits, for this registration). */
  guard?: CallbackFloodGuard;
  /** Where callback outcomes are logged; default the request's logger. */
  logger?: CallbackLogger;
  /** Told every answer's verdict (`accepted`, `duplicate`, `throttled`, `ignored`, or the error code), e.g. for a metric. */
  onVerdict?: (verdict: string) => void;
}

interface CallbackParams {
  workflowId: string;
  token: string;
}

// Applies to fastify's own `incoming request` and error lines for these routes, whatever the host's logger does.
const logSerializers = { req: callbackRequestSerializer };

export const callbackRoutes: FastifyPluginAsync<CallbackRoutesOptions> = async (app, options) => {
  const { minter, signal } = options;
  const guard = options.guard ?? new CallbackFloodGuard();

  // Encapsulated: the host's own parsers are untouched outside this plugin.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) => {
    done(null, body);
  });
  app.setErrorHandler(answerError);

  app.post<{ Params: CallbackParams }>('/callbacks/:workflowId/:token', {
    bodyLimit: CALLBACK_BODY_LIMIT,
    logSerializers,
    handler: async (request, reply) => {
      const result = await handleCallback({
        workflowId: request.params.workflowId,
        token: request.params.token,
        body: request.body,
        headers: request.headers,
        minter,
        signal,
        guard,
        logger: options.logger ?? request.log,
      });
      options.onVerdict?.('status' in result.body ? result.body.status : result.body.error.code);
      return reply.code(result.statusCode).send(result.body);
    },
  });

  // Any other method or shape under /callbacks/ would reach fastify's default 404, whose log line and body
  // repeat the URL (and so a token): answer those here instead.
  app.all('/callbacks/*', { logSerializers }, async (_request, reply) =>
    reply.code(404).send({
      error: { code: 'not_found', message: 'callbacks are accepted as POST /callbacks/:workflowId/:token' },
    }),
  );
};

function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = error.statusCode ?? 500;
  if (status === 413) {
    request.log.info({ err: error }, 'callback refused: body too large');
    return reply.code(413).send({
      error: { code: 'body_too_large', message: `the body must be at most ${CALLBACK_BODY_LIMIT} bytes` },
    });
  }
  if (status >= 400 && status < 500) {
    request.log.info({ err: error }, 'callback refused: bad request');
    return reply.code(status).send({ error: { code: 'bad_request', message: error.message } });
  }
  request.log.error({ err: error }, 'callback failed');
  return reply.code(500).send({ error: { code: 'internal_error', message: 'the callback could not be handled' } });
}

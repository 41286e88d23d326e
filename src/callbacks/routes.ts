// `POST /callbacks/<workflow id>/<token>`. Bodies are raw bytes of any content type, only read once the token
// verified, so a forged callback costs no parsing. A wildcard route, as the router refuses a parameter over
// `maxParamLength` (100 by default) and a workflow id can be 3,000 characters percent-encoded.
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { CallbackAnswerLog, callbackRequestSerializer, clip } from './answer-log.js';
import type { CallbackBodyFields } from './hint.js';
import { CallbackFloodGuard } from './flood-guard.js';
import { handleCallback, type CallbackSignal } from './handler.js';
import type { SettledDocuments } from './settled-documents.js';
import { CALLBACK_PATH_PREFIX, parseCallbackPath } from './paths.js';
import type { CallbackUrlMinter } from './tokens.js';

export const CALLBACK_BODY_LIMIT = 64 * 1024;

interface CallbackRoutesOptions {
  minter: Pick<CallbackUrlMinter, 'check'>;
  signal: CallbackSignal;
  guard?: CallbackFloodGuard;
  bodyFields?: CallbackBodyFields;
  answers?: CallbackAnswerLog;
  onVerdict?: (verdict: string) => void;
  settled?: Pick<SettledDocuments, 'has'>;
}

export const callbackRoutes: FastifyPluginAsync<CallbackRoutesOptions> = async (app, options) => {
  const guard = options.guard ?? new CallbackFloodGuard();
  const answers = options.answers ?? new CallbackAnswerLog({ logger: app.log, intervalMs: 60_000 });
  if (!options.answers) {
    answers.start();
    app.addHook('onClose', async () => answers.close());
  }
  const verdict = (request: FastifyRequest, code: string, refused: boolean) => {
    answers.note(code, refused, { url: callbackRequestSerializer(request).url });
    options.onVerdict?.(code);
  };

  // Encapsulated: the host's parsers are untouched outside this plugin.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    const logged = { err: { code: error.code, message: clip(error.message) } };
    if (status === 413) {
      verdict(request, 'body_too_large', true);
      request.log.debug(logged, 'callback refused: body too large');
      const message = `the body must be at most ${CALLBACK_BODY_LIMIT} bytes`;
      return reply.code(413).send({ error: { code: 'body_too_large', message } });
    }
    if (status >= 400 && status < 500) {
      verdict(request, 'bad_request', true);
      request.log.debug(logged, 'callback refused: bad request');
      return reply.code(status).send({ error: { code: 'bad_request', message: clip(error.message) } });
    }
    verdict(request, 'internal_error', false);
    request.log.error(logged, 'callback failed');
    return reply.code(500).send({ error: { code: 'internal_error', message: 'the callback could not be handled' } });
  });

  // The serializer applies to fastify's own lines for these routes, whatever the host's logger does.
  const routeOptions = { bodyLimit: CALLBACK_BODY_LIMIT, logSerializers: { req: callbackRequestSerializer } };
  app.all(`${CALLBACK_PATH_PREFIX}*`, routeOptions, async (request, reply) => {
    const path = request.method === 'POST' ? parseCallbackPath(pathAfterPrefix(request)) : undefined;
    if (path === undefined) {
      // Never fastify's default 404, whose log line and body repeat the URL (and so a token).
      verdict(request, 'not_found', true);
      return reply.code(404).send({
        error: { code: 'not_found', message: 'callbacks are accepted as POST /callbacks/<workflow id>/<token>' },
      });
    }
    const { body, headers, log: logger } = request;
    const result = await handleCallback({ ...options, ...path, body, headers, guard, logger, answers });
    options.onVerdict?.('status' in result.body ? result.body.status : result.body.error.code);
    return reply.code(result.statusCode).send(result.body);
  });
};

/** The still encoded path after the route's `/callbacks/`, whatever prefix the plugin is registered under. */
function pathAfterPrefix(request: FastifyRequest): string {
  const [path = ''] = request.url.split('?', 1);
  const route = request.routeOptions.url ?? CALLBACK_PATH_PREFIX;
  return path.slice(route.length - 1); // the route ends with '*'
}

// `POST /callbacks/<workflow id>/<token>`: raw bytes of any content type, read only once the token verified, so a
// forgery costs no parsing. A wildcard route: the router refuses a parameter over `maxParamLength` (100 by default),
// and a workflow id can be 3,000 characters percent-encoded. Why a flood gets a 2xx: docs/contract-assumptions.md, C62.
import { createHash } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { CallbackHint } from '../contracts/sale.js';
import { isRecord } from '../contracts/sale-input.js';
import { parseJson } from '../http/json-api.js';
import { CallbackAnswerLog, callbackRequestSerializer, clip, clipped, type CallbackLogger } from './answer-log.js';
import { CallbackFloodGuard } from './flood-guard.js';
import type { SettledDocuments } from './settled-documents.js';
import { CALLBACK_PATH_PREFIX, parseCallbackPath } from './paths.js';
import type { CallbackUrlMinter } from './tokens.js';

export const CALLBACK_BODY_LIMIT = 64 * 1024;

// The body's assumed fields, read only to sharpen de-duplication and logs: docs/contract-assumptions.md, C45.
/** 'none', for a service whose bodies use these names otherwise: callbacks are de-duplicated by their bytes only. */
export type CallbackBodyFieldSetting = 'assumed' | 'none';

/** Longer values are not identifiers the service issues: dropped rather than put into history. */
const MAX_ID_LENGTH = 256;
const MAX_EVENT_LENGTH = 100;

export type CallbackHeaders = Readonly<Record<string, string | string[] | undefined>>;

export function readHint(
  body: Buffer | undefined,
  headers: CallbackHeaders = {},
  fields: CallbackBodyFieldSetting = 'assumed',
): { hint: CallbackHint; fingerprint: string } {
  const bytes = body ?? Buffer.alloc(0);
  const fingerprint = createHash('sha256').update(bytes).digest('base64url').slice(0, 22);
  if (fields === 'none') return { hint: { documentId: null, event: null, callbackId: null }, fingerprint };
  const parsed = parseJson(bytes);
  const at = (...path: string[]) =>
    path.reduce<unknown>((value, name) => (isRecord(value) ? value[name] : undefined), parsed);
  const id = (value: unknown) => text(value, MAX_ID_LENGTH);
  return {
    hint: {
      documentId: id(at('data', 'sale', 'id')) ?? id(at('data', 'id')),
      event: text(at('event'), MAX_EVENT_LENGTH),
      callbackId: id(at('id')) ?? id([headers['x-callback-id']].flat()[0]),
    },
    fingerprint,
  };
}

export function text(value: unknown, maxLength: number): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed !== '' && trimmed.length <= maxLength ? trimmed : null;
}

/** 'not_found': no running execution has that id (never started, or already closed). */
export type SignalOutcome = 'signalled' | 'not_found';
export type CallbackSignal = (workflowId: string, hint: CallbackHint) => Promise<SignalOutcome>;

export async function signalRun<A>(client: Client, workflowId: string, signal: SignalDefinition<[A]>, arg: A) {
  try {
    await client.workflow.getHandle(workflowId).signal(signal, arg);
    return 'signalled';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'not_found';
    throw err;
  }
}

interface CallbackRoutesOptions {
  minter: Pick<CallbackUrlMinter, 'check'>;
  signal: CallbackSignal;
  guard?: CallbackFloodGuard;
  bodyFields?: CallbackBodyFieldSetting;
  answers?: CallbackAnswerLog;
  onVerdict?: (verdict: string) => void;
  settled?: Pick<SettledDocuments, 'has'>;
}

interface CallbackRequest extends Omit<CallbackRoutesOptions, 'guard'> {
  workflowId: string;
  /** Never logged. */
  token: string;
  body: Buffer | undefined;
  headers?: CallbackHeaders;
  guard: CallbackFloodGuard;
  logger: CallbackLogger;
}

type ErrorCode = 'invalid_token' | 'expired_token' | 'signal_failed';

interface CallbackResponse {
  statusCode: 200 | 202 | 401 | 410 | 503;
  body:
    { status: 'accepted' | 'ignored' | 'duplicate' | 'throttled' } | { error: { code: ErrorCode; message: string } };
}

/** Without `answers`, refusals are logged at debug only. */
export async function handleCallback(request: CallbackRequest): Promise<CallbackResponse> {
  const { workflowId, token, minter, signal, guard, logger, answers } = request;
  const logged = { workflowId: clip(workflowId) };
  let shown: Record<string, unknown> = {};
  const answer = (response: CallbackResponse, refused: boolean, message: string) => {
    const verdict = 'status' in response.body ? response.body.status : response.body.error.code;
    answers?.note(verdict, refused, logged);
    request.onVerdict?.(verdict);
    logger.debug({ ...logged, ...shown, verdict }, message);
    return response;
  };
  const acknowledge = (key: keyof typeof ACKNOWLEDGED) => {
    const [statusCode, status, message] = ACKNOWLEDGED[key];
    return answer({ statusCode, body: { status } }, false, message);
  };

  const check = minter.check(workflowId, token);
  if (check !== 'valid') {
    const [statusCode, code, message, reason] = REFUSED[check];
    return answer(failure(statusCode, code, message), true, `callback refused: ${reason}`);
  }

  const { hint, fingerprint } = readHint(request.body, request.headers, request.bodyFields);
  shown = clipped({ ...hint });
  if (hint.documentId !== null && request.settled?.has(hint.documentId)) return acknowledge('settled');
  const admission = guard.admit(workflowId, hint, fingerprint);
  if (admission.verdict !== 'signal') return acknowledge(admission.verdict);

  let outcome: SignalOutcome;
  try {
    outcome = await signal(workflowId, hint);
  } catch (err) {
    guard.failed(admission.ticket);
    // Not acknowledged, so the service delivers it again on its retry schedule (C47). Bounded by the budget.
    const error =
      err instanceof Error ? { type: err.name, message: err.message } : { type: typeof err, message: String(err) };
    logger.error(
      { ...logged, ...shown, err: clipped(error) },
      'callback not delivered: signalling the workflow failed',
    );
    shown = {};
    const response = failure(503, 'signal_failed', 'the workflow could not be signalled; try again later');
    return answer(response, false, 'callback not delivered');
  }
  if (outcome === 'not_found') guard.notFound(admission.ticket);
  return acknowledge(outcome);
}

const REFUSED = {
  expired: [410, 'expired_token', 'the callback URL has expired', 'the URL has expired'],
  invalid: [401, 'invalid_token', 'the callback URL is not valid', 'the token does not match the workflow id'],
} as const;

const ACKNOWLEDGED = {
  closed: [200, 'ignored', 'callback acknowledged: the workflow is closed'],
  duplicate: [200, 'duplicate', 'callback acknowledged: a duplicate'],
  // The activity that filed the document got it signed and gave it to the workflow: the hint would say nothing new.
  settled: [200, 'duplicate', 'callback acknowledged: its document was signed in the answer this process handed on'],
  // Accepted: the workflow polls, so it learns the outcome without this hint.
  throttled: [202, 'throttled', "callback acknowledged: over the workflow's signal budget"],
  not_found: [200, 'ignored', 'callback ignored: no running workflow with this id (unknown or closed)'],
  signalled: [202, 'accepted', 'callback signalled to the workflow'],
} as const;

function failure(statusCode: 401 | 410 | 503, code: ErrorCode, message: string): CallbackResponse {
  return { statusCode, body: { error: { code, message } } };
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

  acceptRawBodies(app, CALLBACK_BODY_LIMIT);
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
    const { headers, log: logger } = request;
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    const result = await handleCallback({ ...options, ...path, body, headers, guard, logger, answers });
    return reply.code(result.statusCode).send(result.body);
  });
};

/** Raw bytes of any content type. Encapsulated: the host's parsers are untouched outside the plugin. */
export function acceptRawBodies(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
}

/** The still encoded path after the route's `/callbacks/`, whatever prefix the plugin is registered under. */
function pathAfterPrefix(request: FastifyRequest): string {
  const [path = ''] = request.url.split('?', 1);
  const route = request.routeOptions.url ?? CALLBACK_PATH_PREFIX;
  return path.slice(route.length - 1); // the route ends with '*'
}

/**
 * The callback receiver without a web framework, so any HTTP host can mount it: verify the URL's token,
 * read the hint, signal the workflow. A callback is only a hint (the workflow re-reads the document), so
 * duplicates are signalled as they come and the workflow de-duplicates.
 */
import type { Logger } from 'pino';
import type { CallbackHint } from '../../workflows/definitions.js';
import { extractHint, type CallbackHeaders } from './hint.js';
import type { CallbackTokenVerifier } from './tokens.js';

/** 'not_found': no running execution has that id (never started, or already closed). */
export type SignalOutcome = 'signalled' | 'not_found';
export type CallbackSignal = (workflowId: string, hint: CallbackHint) => Promise<SignalOutcome>;
export type CallbackLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

export interface CallbackRequest {
  /** The URL's workflow id segment, percent-decoded. */
  workflowId: string;
  /** The URL's token segment. Never logged. */
  token: string;
  /** Parsed JSON, JSON text or raw bytes. */
  body: unknown;
  /** Request headers (lower-case names); `x-callback-id` is used when the body has no `id`. */
  headers?: CallbackHeaders;
  minter: CallbackTokenVerifier;
  signal: CallbackSignal;
  logger: CallbackLogger;
}

type CallbackResponseBody =
  | { status: 'accepted' | 'ignored' }
  | { error: { code: 'invalid_token' | 'missing_document_id' | 'signal_failed'; message: string } };

export interface CallbackResponse {
  statusCode: 200 | 202 | 400 | 401 | 503;
  body: CallbackResponseBody;
}

/** Attacker-chosen ids are cut before they reach a log line. */
const MAX_LOGGED_ID = 200;

export async function handleCallback(request: CallbackRequest): Promise<CallbackResponse> {
  const { token, minter, signal, logger } = request;
  const workflowId = request.workflowId;
  const logged = { workflowId: workflowId.slice(0, MAX_LOGGED_ID) };

  if (!minter.verify(workflowId, token)) {
    logger.warn(logged, 'callback refused: the token does not match the workflow id');
    return failure(401, 'invalid_token', 'the callback URL is not valid');
  }

  const hint = extractHint(request.body, request.headers);
  if (!hint) {
    logger.warn(logged, 'callback refused: the body names no document (data.sale.id)');
    return failure(400, 'missing_document_id', 'the body must name the document in data.sale.id');
  }

  let outcome: SignalOutcome;
  try {
    outcome = await signal(workflowId, hint);
  } catch (err) {
    // Not acknowledged, so the service delivers it again on its retry schedule (C47).
    logger.error({ ...logged, ...hint, err }, 'callback not delivered: signalling the workflow failed');
    return failure(503, 'signal_failed', 'the workflow could not be signalled; try again later');
  }
  if (outcome === 'not_found') {
    logger.info({ ...logged, ...hint }, 'callback ignored: no running workflow with this id (unknown or closed)');
    return { statusCode: 200, body: { status: 'ignored' } };
  }
  logger.info({ ...logged, ...hint }, 'callback signalled to the workflow');
  return { statusCode: 202, body: { status: 'accepted' } };
}

function failure(
  statusCode: 400 | 401 | 503,
  code: 'invalid_token' | 'missing_document_id' | 'signal_failed',
  message: string,
): CallbackResponse {
  return { statusCode, body: { error: { code, message } } };
}

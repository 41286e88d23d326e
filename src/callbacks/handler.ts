/**
 * The callback receiver without a web framework, so any HTTP host can mount it: verify the URL's token,
 * read the hint, let the flood guard decide, signal the workflow. A callback is only a hint (the workflow
 * re-reads the document and polls anyway), so duplicates and a flood beyond the workflow's budget are
 * acknowledged with a 2xx without signalling: every signal costs history events, and a sender that gets a
 * 2xx stops redelivering.
 */
import type { Logger } from 'pino';
import type { CallbackHint } from '../contracts/sale.js';
import type { CallbackFloodGuard } from './flood-guard.js';
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
  /** De-duplication and per-workflow budget; one instance shared by every request of the receiver. */
  guard: CallbackFloodGuard;
  logger: CallbackLogger;
}

type ErrorCode = 'invalid_token' | 'expired_token' | 'missing_document_id' | 'signal_failed';

type CallbackResponseBody =
  | { status: 'accepted' | 'ignored' | 'duplicate' | 'throttled' }
  | { error: { code: ErrorCode; message: string } };

export interface CallbackResponse {
  statusCode: 200 | 202 | 400 | 401 | 410 | 503;
  body: CallbackResponseBody;
}

/** Attacker-chosen ids are cut before they reach a log line. */
const MAX_LOGGED_ID = 200;

export async function handleCallback(request: CallbackRequest): Promise<CallbackResponse> {
  const { token, minter, signal, guard, logger } = request;
  const workflowId = request.workflowId;
  const logged = { workflowId: workflowId.slice(0, MAX_LOGGED_ID) };

  const check = minter.check ? minter.check(workflowId, token) : minter.verify(workflowId, token) ? 'valid' : 'invalid';
  // Refusals are logged with a count, at most once per reason per interval: a flood must not flood the log.
  if (check === 'expired') {
    const refused = guard.refused('expired_token');
    if (refused !== undefined) logger.info({ ...logged, refused }, 'callback refused: the callback URL has expired');
    return failure(410, 'expired_token', 'the callback URL has expired');
  }
  if (check !== 'valid') {
    const refused = guard.refused('invalid_token');
    if (refused !== undefined) logger.warn({ ...logged, refused }, 'callback refused: the token does not match the workflow id');
    return failure(401, 'invalid_token', 'the callback URL is not valid');
  }

  const hint = extractHint(request.body, request.headers);
  if (!hint) {
    const refused = guard.refused('missing_document_id');
    if (refused !== undefined) logger.warn({ ...logged, refused }, 'callback refused: the body names no document (data.sale.id)');
    return failure(400, 'missing_document_id', 'the body must name the document in data.sale.id');
  }

  const admission = guard.admit(workflowId, hint);
  if (admission.verdict !== 'signal' && admission.suppressedReport !== undefined) {
    // One line per workflow per interval, not one per request: a flood must not flood the log.
    logger.info(
      { ...logged, ...hint, verdict: admission.verdict, unsignalled: admission.suppressedReport },
      'callbacks acknowledged without signalling the workflow (duplicate, over its budget, or closed)',
    );
  }
  switch (admission.verdict) {
    case 'closed':
      return { statusCode: 200, body: { status: 'ignored' } };
    case 'duplicate':
      return { statusCode: 200, body: { status: 'duplicate' } };
    case 'throttled':
      // Accepted: the workflow polls, so it learns the outcome without this hint.
      return { statusCode: 202, body: { status: 'throttled' } };
    case 'signal':
      break;
  }

  let outcome: SignalOutcome;
  try {
    outcome = await signal(workflowId, hint);
  } catch (err) {
    guard.failed(admission.ticket);
    // Not acknowledged, so the service delivers it again on its retry schedule (C47).
    logger.error({ ...logged, ...hint, err }, 'callback not delivered: signalling the workflow failed');
    return failure(503, 'signal_failed', 'the workflow could not be signalled; try again later');
  }
  if (outcome === 'not_found') {
    guard.notFound(admission.ticket);
    logger.info({ ...logged, ...hint }, 'callback ignored: no running workflow with this id (unknown or closed)');
    return { statusCode: 200, body: { status: 'ignored' } };
  }
  logger.info({ ...logged, ...hint }, 'callback signalled to the workflow');
  return { statusCode: 202, body: { status: 'accepted' } };
}

function failure(statusCode: 400 | 401 | 410 | 503, code: ErrorCode, message: string): CallbackResponse {
  return { statusCode, body: { error: { code, message } } };
}

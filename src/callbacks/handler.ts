/**
 * The callback receiver without a web framework, so any HTTP host can mount it: verify the URL's token, read
 * the hint from whatever body came, let the flood guard decide, signal the workflow. A callback is only a hint
 * (the workflow re-reads the document and polls anyway), so any body is taken, and duplicates and a flood beyond
 * the workflow's budget are acknowledged with a 2xx without signalling: every signal costs history events, and a
 * sender that gets a 2xx stops redelivering. Each request's line is at debug; refusals and counts reach info only
 * through the answer log's summary.
 */
import type { CallbackHint } from '../contracts/sale.js';
import { clip, type CallbackAnswerLog, type CallbackLogger } from './answer-log.js';
import type { CallbackBodyFields } from './body-fields.js';
import type { CallbackFloodGuard } from './flood-guard.js';
import { readHint, type CallbackHeaders } from './hint.js';
import type { CallbackTokenVerifier } from './tokens.js';

/** 'not_found': no running execution has that id (never started, or already closed). */
export type SignalOutcome = 'signalled' | 'not_found';
export type CallbackSignal = (workflowId: string, hint: CallbackHint) => Promise<SignalOutcome>;

export interface CallbackRequest {
  /** The workflow id the URL names, decoded. */
  workflowId: string;
  /** The URL's token segment. Never logged. */
  token: string;
  /** Anything: parsed JSON, text, raw bytes, or nothing. */
  body: unknown;
  /** Request headers (lower-case names), for a delivery id the body does not carry. */
  headers?: CallbackHeaders;
  minter: CallbackTokenVerifier;
  signal: CallbackSignal;
  /** De-duplication and per-workflow budget; one instance shared by every request of the receiver. */
  guard: CallbackFloodGuard;
  logger: CallbackLogger;
  /** Which body fields are read when present (default: what the project assumed, body-fields.ts). */
  bodyFields?: CallbackBodyFields;
  /** Counts every answer for the periodic summary; without it, refusals are logged at debug only. */
  answers?: CallbackAnswerLog;
}

type ErrorCode = 'invalid_token' | 'expired_token' | 'signal_failed';

type CallbackResponseBody =
  { status: 'accepted' | 'ignored' | 'duplicate' | 'throttled' } | { error: { code: ErrorCode; message: string } };

export interface CallbackResponse {
  statusCode: 200 | 202 | 401 | 410 | 503;
  body: CallbackResponseBody;
}

export async function handleCallback(request: CallbackRequest): Promise<CallbackResponse> {
  const { token, minter, signal, guard, logger, answers } = request;
  const workflowId = request.workflowId;
  const logged = { workflowId: clip(workflowId) };
  const answer = (
    response: CallbackResponse,
    refused: boolean,
    message: string,
    fields: Record<string, unknown> = {},
  ) => {
    const verdict = 'status' in response.body ? response.body.status : response.body.error.code;
    answers?.note(verdict, refused, logged);
    logger.debug({ ...logged, ...fields, verdict }, message);
    return response;
  };

  const check = minter.check ? minter.check(workflowId, token) : minter.verify(workflowId, token) ? 'valid' : 'invalid';
  if (check === 'expired')
    return answer(
      failure(410, 'expired_token', 'the callback URL has expired'),
      true,
      'callback refused: the URL has expired',
    );
  if (check !== 'valid')
    return answer(
      failure(401, 'invalid_token', 'the callback URL is not valid'),
      true,
      'callback refused: the token does not match the workflow id',
    );

  const { hint, fingerprint } = readHint(request.body, request.headers, request.bodyFields);
  const shown = loggedHint(hint);
  const admission = guard.admit(workflowId, hint, fingerprint);
  switch (admission.verdict) {
    case 'closed':
      return answer(
        { statusCode: 200, body: { status: 'ignored' } },
        false,
        'callback acknowledged: the workflow is closed',
        shown,
      );
    case 'duplicate':
      return answer(
        { statusCode: 200, body: { status: 'duplicate' } },
        false,
        'callback acknowledged: a duplicate',
        shown,
      );
    case 'throttled':
      // Accepted: the workflow polls, so it learns the outcome without this hint.
      return answer(
        { statusCode: 202, body: { status: 'throttled' } },
        false,
        "callback acknowledged: over the workflow's signal budget",
        shown,
      );
    case 'signal':
      break;
  }

  let outcome: SignalOutcome;
  try {
    outcome = await signal(workflowId, hint);
  } catch (err) {
    guard.failed(admission.ticket);
    // Not acknowledged, so the service delivers it again on its retry schedule (C47). Bounded by the budget.
    logger.error(
      { ...logged, ...shown, err: errorSummary(err) },
      'callback not delivered: signalling the workflow failed',
    );
    return answer(
      failure(503, 'signal_failed', 'the workflow could not be signalled; try again later'),
      false,
      'callback not delivered',
    );
  }
  if (outcome === 'not_found') {
    guard.notFound(admission.ticket);
    return answer(
      { statusCode: 200, body: { status: 'ignored' } },
      false,
      'callback ignored: no running workflow with this id (unknown or closed)',
      shown,
    );
  }
  return answer({ statusCode: 202, body: { status: 'accepted' } }, false, 'callback signalled to the workflow', shown);
}

function failure(statusCode: 401 | 410 | 503, code: ErrorCode, message: string): CallbackResponse {
  return { statusCode, body: { error: { code, message } } };
}

function loggedHint(hint: CallbackHint): Record<string, string | null> {
  return {
    documentId: hint.documentId === null ? null : clip(hint.documentId),
    event: hint.event === null ? null : clip(hint.event),
    callbackId: hint.callbackId === null ? null : clip(hint.callbackId),
  };
}

function errorSummary(err: unknown): { type: string; message: string } {
  return err instanceof Error
    ? { type: err.name, message: clip(err.message) }
    : { type: typeof err, message: clip(String(err)) };
}

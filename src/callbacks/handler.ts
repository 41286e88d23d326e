// The callback receiver without a web framework. A callback is only a hint, so duplicates and a flood beyond the
// budget get a 2xx without a signal: every signal costs history events, and a sender given a 2xx stops redelivering.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { CallbackHint } from '../contracts/sale.js';
import { clip, clipped, type CallbackAnswerLog, type CallbackLogger } from './answer-log.js';
import type { CallbackFloodGuard } from './flood-guard.js';
import type { SettledDocuments } from './settled-documents.js';
import { readHint, type CallbackBodyFields, type CallbackHeaders } from './hint.js';
import type { CallbackUrlMinter } from './tokens.js';

/** 'not_found': no running execution has that id (never started, or already closed). */
export type SignalOutcome = 'signalled' | 'not_found';
export type CallbackSignal = (workflowId: string, hint: CallbackHint) => Promise<SignalOutcome>;

export async function signalRun<A>(
  client: Client,
  workflowId: string,
  signal: SignalDefinition<[A]>,
  arg: A,
): Promise<SignalOutcome> {
  try {
    await client.workflow.getHandle(workflowId).signal(signal, arg);
    return 'signalled';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'not_found';
    throw err;
  }
}

interface CallbackRequest {
  workflowId: string;
  /** Never logged. */
  token: string;
  /** Parsed JSON, text, raw bytes, or nothing. */
  body: unknown;
  headers?: CallbackHeaders;
  minter: Pick<CallbackUrlMinter, 'check'>;
  signal: CallbackSignal;
  guard: CallbackFloodGuard;
  logger: CallbackLogger;
  bodyFields?: CallbackBodyFields;
  /** Counts every answer for the periodic summary; without it, refusals are logged at debug only. */
  answers?: CallbackAnswerLog;
  settled?: Pick<SettledDocuments, 'has'>;
}

type ErrorCode = 'invalid_token' | 'expired_token' | 'signal_failed';

interface CallbackResponse {
  statusCode: 200 | 202 | 401 | 410 | 503;
  body:
    { status: 'accepted' | 'ignored' | 'duplicate' | 'throttled' } | { error: { code: ErrorCode; message: string } };
}

export async function handleCallback(request: CallbackRequest): Promise<CallbackResponse> {
  const { workflowId, token, minter, signal, guard, logger, answers } = request;
  const logged = { workflowId: clip(workflowId) };
  let shown: Record<string, unknown> = {};
  const answer = (response: CallbackResponse, refused: boolean, message: string) => {
    const verdict = 'status' in response.body ? response.body.status : response.body.error.code;
    answers?.note(verdict, refused, logged);
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

// Signed accounting webhooks (A14, A20, answers A23), signalled to the sync batch as a hint to poll now. Nothing says
// which application sent a delivery, so each has its own path and secret; the bare path serves a single-key worker.
import type { Client } from '@temporalio/client';
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { verifyWebhook, WebhookVerificationError, type WebhookFailureReason } from '../accounting/webhooks.js';
import { assertCredential } from '../config/credentials.js';
import { syncBatchWebhookSignal, syncBatchWorkflowId, type SyncBatchWebhookHint } from '../contracts/sync-batch.js';
import { BoundedTtlMap, CallbackFloodGuard } from './flood-guard.js';
import { clip, clipped, type CallbackLogger } from './answer-log.js';
import { acceptRawBodies, signalRun, text, type SignalOutcome } from './routes.js';
import { isRecord } from '../contracts/sale-input.js';

const ACCOUNTING_WEBHOOK_PATH = '/webhooks/accounting';

/** The path to set on the application's dashboard, after the public base URL. */
export function accountingWebhookPath(application: string): string {
  return `${ACCOUNTING_WEBHOOK_PATH}/${application}`;
}

export interface AccountingWebhookSecret {
  application: string;
  secret: string;
}

const APPLICATION_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
const WEBHOOK_BODY_LIMIT = 64 * 1024;
const TOLERANCE_SECONDS = 300;
/** Longer identifiers are not ones the service issues; refused rather than put into history. */
const MAX_ID_LENGTH = 256;
const REFUSAL_LOG_INTERVAL_MS = 10_000;

type SyncBatchSignal = (syncBatchId: string, hint: SyncBatchWebhookHint) => Promise<SignalOutcome>;

export function syncBatchSignaller(client: Client): SyncBatchSignal {
  return (syncBatchId, hint) => signalRun(client, syncBatchWorkflowId(syncBatchId), syncBatchWebhookSignal, hint);
}

interface AccountingWebhookRoutesOptions {
  /** The bare path's secret (ACCOUNTING_WEBHOOK_SECRET). Secrets are never logged. */
  secret?: string;
  applications?: readonly AccountingWebhookSecret[];
  signal: SyncBatchSignal;
  logger?: CallbackLogger;
  onVerdict?: (verdict: string) => void;
}

const REFUSALS = {
  missing_signature: [401, 'webhook-id, webhook-timestamp and webhook-signature are required'],
  invalid_signature: [401, 'no webhook signature matches'],
  stale_timestamp: [401, 'webhook-timestamp is outside the accepted tolerance'],
  malformed_timestamp: [400, 'webhook-timestamp must be Unix time in seconds'],
  malformed_payload: [400, 'the body is not JSON'],
  missing_sync_batch_id: [400, 'the body must name the sync batch in data.syncBatchId'],
  body_too_large: [413, `the body must be at most ${WEBHOOK_BODY_LIMIT} bytes`],
  signal_failed: [503, 'the workflow could not be signalled; try again later'],
  unknown_application: [404, 'no accounting application of this name receives webhooks here'],
} as const;
type ErrorCode = keyof typeof REFUSALS;

const VERIFICATION_REFUSALS: Record<WebhookFailureReason, ErrorCode> = {
  missing_headers: 'missing_signature',
  invalid_signature: 'invalid_signature',
  timestamp_too_old: 'stale_timestamp',
  timestamp_too_new: 'stale_timestamp',
  invalid_timestamp: 'malformed_timestamp',
  invalid_payload: 'malformed_payload',
};

function failure(code: ErrorCode, message: string = REFUSALS[code][1]) {
  return { statusCode: REFUSALS[code][0], body: { error: { code, message } } };
}

function identifier(value: unknown): string | null {
  const id = text(value, MAX_ID_LENGTH);
  // eslint-disable-next-line no-control-regex
  return id !== null && !/[\u0000-\u001f]/.test(id) ? id : null;
}

/** The batch and change a payload names: `data.syncBatchId` (A20), or `syncBatchId` at the top level. */
function readPayload(payload: unknown) {
  if (!isRecord(payload)) return undefined;
  const data = isRecord(payload.data) ? payload.data : payload;
  const syncBatchId = identifier(data.syncBatchId) ?? identifier(payload.syncBatchId);
  if (syncBatchId === null) return undefined;
  return { syncBatchId, billPaymentId: identifier(data.billPaymentId), status: identifier(data.status) };
}

/** One warning per refusal reason per interval, with the count: a flood of forgeries must not flood the log. */
function refusalLog() {
  const last = new Map<ErrorCode, { count: number; at: number }>();
  return (logger: CallbackLogger, code: ErrorCode, fields: Record<string, unknown>, message: string): void => {
    const entry = last.get(code);
    if (entry === undefined || Date.now() - entry.at >= REFUSAL_LOG_INTERVAL_MS) {
      last.set(code, { count: 0, at: Date.now() });
      logger.warn({ ...fields, refused: (entry?.count ?? 0) + 1 }, message);
    } else entry.count++;
  };
}

/** Checked once at registration: a bad secret fails the start, named, never shown. */
function applicationSecrets(applications: readonly AccountingWebhookSecret[]): Map<string, string> {
  const secrets = new Map<string, string>();
  for (const { application, secret } of applications) {
    if (!APPLICATION_NAME.test(application))
      throw new RangeError(
        `accounting webhooks: "${application}" is not an application name (1 to 40 lowercase letters, digits or -)`,
      );
    if (secrets.has(application))
      throw new RangeError(`accounting webhooks: application ${application} is given twice`);
    secrets.set(
      application,
      assertCredential('accountingWebhookSecret', `accounting application ${application}: webhookSecret`, secret),
    );
  }
  return secrets;
}

export const accountingWebhookRoutes: FastifyPluginAsync<AccountingWebhookRoutesOptions> = async (app, options) => {
  if (options.secret !== undefined)
    assertCredential('accountingWebhookSecret', 'ACCOUNTING_WEBHOOK_SECRET', options.secret);
  const secrets = applicationSecrets(options.applications ?? []);
  if (options.secret === undefined && secrets.size === 0)
    throw new RangeError('accounting webhooks: no secret to verify them with');
  // A replay is refused while its timestamp is inside the tolerance, so ids are kept for twice that. One after a
  // restart gets through once: harmless, as the signal is only a hint and the workflow reads the status itself.
  const replays = new BoundedTtlMap<true>(10_000, Date.now);
  // Verified webhooks come only from the service, so the budget is generous: it only bounds history growth.
  const guard = new CallbackFloodGuard({ workflowBurst: 20, workflowRefillMs: 15_000, outcomeWindowMs: 60_000 });
  const warnRefused = refusalLog();

  // Raw bytes: the signature covers them.
  acceptRawBodies(app, WEBHOOK_BODY_LIMIT);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const answer =
      error.statusCode === 413
        ? failure('body_too_large')
        : failure('malformed_payload', 'the request could not be read');
    request.log.debug({ statusCode: answer.statusCode }, 'accounting webhook refused before verification');
    options.onVerdict?.(answer.body.error.code);
    return reply.code(answer.statusCode).send(answer.body);
  });

  const route = (path: string, secretOf: (application: string | undefined) => string | undefined) =>
    app.post<{ Params: { application?: string } }>(path, { bodyLimit: WEBHOOK_BODY_LIMIT }, async (request, reply) => {
      const result = await handle(request, secretOf(request.params.application));
      options.onVerdict?.('status' in result.body ? result.body.status : result.body.error.code);
      return reply.code(result.statusCode).send(result.body);
    });
  if (options.secret !== undefined) route(ACCOUNTING_WEBHOOK_PATH, () => options.secret);
  if (secrets.size > 0) route(`${ACCOUNTING_WEBHOOK_PATH}/:application`, (name) => secrets.get(name ?? ''));

  async function handle(request: FastifyRequest<{ Params: { application?: string } }>, secret: string | undefined) {
    const { headers, params } = request;
    const { application } = params;
    const logger: CallbackLogger = options.logger ?? request.log;
    if (secret === undefined) {
      // The path is the sender's dashboard setting: a wrong one is said once per interval, without repeating it.
      warnRefused(logger, 'unknown_application', { reason: 'unknown_application' }, 'accounting webhook refused');
      return failure('unknown_application');
    }
    const from = application === undefined ? {} : { accountingApplication: application };
    let payload: unknown;
    try {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      payload = verifyWebhook({ secret, headers, rawBody, now: new Date(), toleranceSeconds: TOLERANCE_SECONDS });
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      const code = VERIFICATION_REFUSALS[err.reason];
      warnRefused(logger, code, { reason: code, ...from }, 'accounting webhook refused');
      return failure(code);
    }
    // Verified, so the header is present; ids are only taken once verified, so a forger cannot use them up.
    const webhookId = String(headers['webhook-id']).slice(0, MAX_ID_LENGTH);
    const change = readPayload(payload);
    if (change === undefined) {
      const fields = { webhookId: clip(webhookId), ...from };
      warnRefused(logger, 'missing_sync_batch_id', fields, 'accounting webhook refused: it names no sync batch');
      return failure('missing_sync_batch_id');
    }
    // Signed by the service, but still cut: a log line's length is not the sender's to choose.
    const { syncBatchId, billPaymentId, status } = change;
    const logged = { ...clipped({ webhookId, syncBatchId, billPaymentId, status }), ...from };
    // Each application numbers its own deliveries: one's id is no replay of another's.
    const replayKey = application === undefined ? webhookId : `${application}\u0000${webhookId}`;
    // Synchronous check-and-set, so concurrent copies race on it.
    if (replays.get(replayKey)) {
      logger.debug(logged, 'accounting webhook replayed: acknowledged without signalling');
      return { statusCode: 200, body: { status: 'duplicate' } };
    }
    replays.set(replayKey, true, 2 * TOLERANCE_SECONDS * 1000);

    const admission = guard.admit(syncBatchWorkflowId(syncBatchId), {
      documentId: billPaymentId ?? syncBatchId,
      event: status,
      callbackId: replayKey,
    });
    if (admission.verdict !== 'signal') {
      if (admission.suppressedReport !== undefined)
        logger.info(
          { ...logged, verdict: admission.verdict, unsignalled: admission.suppressedReport },
          'accounting webhooks acknowledged without signalling',
        );
      if (admission.verdict === 'duplicate') return { statusCode: 200, body: { status: 'duplicate' } };
      return { statusCode: 202, body: { status: admission.verdict === 'closed' ? 'ignored' : 'throttled' } };
    }
    let outcome: SignalOutcome;
    try {
      outcome = await options.signal(syncBatchId, { webhookId, billPaymentId, status });
    } catch (err) {
      guard.failed(admission.ticket);
      replays.delete(replayKey); // nothing was done with it, so the sender's retry is taken
      logger.error(
        { ...logged, err: { message: clip(err instanceof Error ? err.message : String(err)) } },
        'accounting webhook not delivered: signalling the workflow failed',
      );
      return failure('signal_failed');
    }
    if (outcome === 'not_found') {
      guard.notFound(admission.ticket);
      logger.debug(logged, 'accounting webhook ignored: no running workflow for this sync batch');
      return { statusCode: 202, body: { status: 'ignored' } };
    }
    logger.debug(logged, 'accounting webhook signalled to the sync batch workflow');
    return { statusCode: 202, body: { status: 'accepted' } };
  }
};

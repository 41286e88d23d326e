/**
 * Fastify plugin for `POST /webhooks/accounting`: the accounting service's signed webhooks (A14, A20). A webhook
 * is verified over its raw bytes (Standard Webhooks signature and timestamp tolerance), its `webhook-id` is
 * checked against the ids already taken, and the `sync-batch:<syncBatchId>` workflow it names is signalled: a
 * hint to poll now, never the status itself (the workflow reads the list, and polls anyway).
 *
 * Each accounting application signs with its own webhook secret, and nothing the contract shows says which
 * application sent a delivery (accounting-api.md, Events: "delivery rules: not shown"; Standard Webhooks has no
 * sender header). What is the receiver's is the URL each application's dashboard setting points at. So with many
 * applications (a tenants file), each has its own path, `POST /webhooks/accounting/<application>` (the tenant
 * entry's name), and a delivery there is verified with that application's secret alone: one HMAC per delivery
 * whatever the number of applications, and a delivery signed with another application's secret is refused like
 * any forgery. `POST /webhooks/accounting` keeps verifying with the one secret of a single-key worker (or the one
 * every accounting entry shares).
 *
 * Answers (docs/contract-assumptions.md A23), chosen so that a well-behaved sender retries only what can succeed:
 * - 202 `accepted` (signalled); 202 `throttled` (over the workflow's signal budget; it polls); 202 `ignored`
 *   (no running workflow for that batch: unknown, never started here, or finished);
 * - 200 `duplicate`: a replay of a `webhook-id` already taken, or the same change already signalled. A 2xx, so
 *   the sender stops; nothing is signalled;
 * - 401 `missing_signature` / `invalid_signature` (forged) / `stale_timestamp` (outside the tolerance: an old
 *   message replayed, or a clock far off); 400 `malformed_timestamp` / `malformed_payload` /
 *   `missing_sync_batch_id` (signed, but unusable); 413 too large; 503 `signal_failed` (Temporal unreachable:
 *   not taken, so the sender's retry is).
 * Nothing but a 202 `accepted` changes anything. The secret and the signatures are never logged; each webhook's
 * own line is at debug, refusals are warned about once per reason per interval, with their count.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { verifyWebhook, WebhookVerificationError, type WebhookFailureReason } from '../accounting/webhooks.js';
import { assertCredential } from '../config/credentials.js';
import { syncBatchWebhookSignal, syncBatchWorkflowId, type SyncBatchWebhookHint } from '../contracts/sync-batch.js';
import { BoundedTtlMap, CallbackFloodGuard, REFUSAL_LOG_INTERVAL_MS } from './flood-guard.js';
import { clip, clipped } from './answer-log.js';
import type { CallbackLogger } from './answer-log.js';
import type { SignalOutcome } from './handler.js';

export const ACCOUNTING_WEBHOOK_PATH = '/webhooks/accounting';

/** Where one accounting application's webhooks are received: the URL to set on its dashboard, after the public base. */
export function accountingWebhookPath(application: string): string {
  return `${ACCOUNTING_WEBHOOK_PATH}/${application}`;
}

/** An accounting application's name (as its tenant entry gives it) and its `whsec_` webhook secret. */
export interface AccountingWebhookSecret {
  application: string;
  secret: string;
}

/** As the tenants file names applications: a name that is also a plain path segment. */
const APPLICATION_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
const WEBHOOK_BODY_LIMIT = 64 * 1024;
const DEFAULT_TOLERANCE_SECONDS = 300;
/** Identifiers longer than this are not ones the service issues; refused rather than put into history. */
const MAX_ID_LENGTH = 256;

/** Signals the sync batch's workflow; 'not_found' when no execution with that id is running. */
export type SyncBatchSignal = (syncBatchId: string, hint: SyncBatchWebhookHint) => Promise<SignalOutcome>;

export function syncBatchSignaller(client: Client): SyncBatchSignal {
  return async (syncBatchId, hint) => {
    try {
      await client.workflow.getHandle(syncBatchWorkflowId(syncBatchId)).signal(syncBatchWebhookSignal, hint);
      return 'signalled';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'not_found';
      throw err;
    }
  };
}

/**
 * The `webhook-id`s taken, to refuse a replay. In memory and bounded (an LRU with a TTL): a message can only be
 * replayed while its timestamp is inside the tolerance (older ones are refused as stale), so remembering ids for
 * twice the tolerance covers every replay this process can be sent; at most `maxEntries` are kept. A replay after
 * a restart, or to another receiver process, gets through once: harmless, because the signal is only a hint to
 * poll, and the workflow reads the status itself.
 */
export class WebhookReplayStore {
  private readonly ids: BoundedTtlMap<true>;

  constructor(
    private readonly ttlMs: number,
    maxEntries = 10_000,
    now: () => number = Date.now,
  ) {
    this.ids = new BoundedTtlMap(maxEntries, now);
  }

  /** Takes the id; false when it was already taken (a replay). Synchronous, so concurrent copies race on it. */
  take(id: string): boolean {
    if (this.ids.get(id)) return false;
    this.ids.set(id, true, this.ttlMs);
    return true;
  }

  /** Gives the id back (nothing was done with it), so the sender's retry is taken. */
  release(id: string): void {
    this.ids.delete(id);
  }
}

export interface AccountingWebhookRoutesOptions {
  /** The `whsec_` webhook secret of `POST /webhooks/accounting` (ACCOUNTING_WEBHOOK_SECRET). Never logged. */
  secret?: string;
  /**
   * One path per accounting application, `POST /webhooks/accounting/<application>`, each verified with that
   * application's secret only. Never logged. At least one of `secret` and `applications` is given.
   */
  applications?: readonly AccountingWebhookSecret[];
  signal: SyncBatchSignal;
  /** Accepted distance between `webhook-timestamp` and now, both ways (default 300 s, A14). */
  toleranceSeconds?: number;
  /** Default: one per registration, remembering ids for twice the tolerance. */
  replays?: WebhookReplayStore;
  /** Per-workflow signal budget and closed-workflow memory (default: 20 at once, then one per 15 s). */
  guard?: CallbackFloodGuard;
  logger?: CallbackLogger;
  /** Told every answer's verdict (`accepted`, `duplicate`, …, or the error code), e.g. for a metric. */
  onVerdict?: (verdict: string) => void;
  now?: () => number;
}

type ErrorCode =
  | 'missing_signature'
  | 'invalid_signature'
  | 'stale_timestamp'
  | 'malformed_timestamp'
  | 'malformed_payload'
  | 'missing_sync_batch_id'
  | 'body_too_large'
  | 'signal_failed'
  | 'unknown_application';

type Answer =
  | { statusCode: 200 | 202; body: { status: 'accepted' | 'duplicate' | 'throttled' | 'ignored' } }
  | { statusCode: 400 | 401 | 404 | 413 | 503; body: { error: { code: ErrorCode; message: string } } };

const VERIFICATION_ANSWERS: Record<WebhookFailureReason, [400 | 401, ErrorCode, string]> = {
  missing_headers: [401, 'missing_signature', 'webhook-id, webhook-timestamp and webhook-signature are required'],
  invalid_signature: [401, 'invalid_signature', 'no webhook signature matches'],
  timestamp_too_old: [401, 'stale_timestamp', 'webhook-timestamp is outside the accepted tolerance'],
  timestamp_too_new: [401, 'stale_timestamp', 'webhook-timestamp is outside the accepted tolerance'],
  invalid_timestamp: [400, 'malformed_timestamp', 'webhook-timestamp must be Unix time in seconds'],
  invalid_payload: [400, 'malformed_payload', 'the body is not JSON'],
};

function failure(statusCode: 400 | 401 | 404 | 413 | 503, code: ErrorCode, message: string): Answer {
  return { statusCode, body: { error: { code, message } } };
}

function identifier(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  // eslint-disable-next-line no-control-regex
  return trimmed !== '' && trimmed.length <= MAX_ID_LENGTH && !/[\u0000-\u001f]/.test(trimmed) ? trimmed : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The batch and change a payload names: `data.syncBatchId` (A20), or `syncBatchId` at the top level. */
function readPayload(
  payload: unknown,
): { syncBatchId: string; billPaymentId: string | null; status: string | null } | undefined {
  if (!isObject(payload)) return undefined;
  const data = isObject(payload.data) ? payload.data : payload;
  const syncBatchId = identifier(data.syncBatchId) ?? identifier(payload.syncBatchId);
  if (syncBatchId === null) return undefined;
  return { syncBatchId, billPaymentId: identifier(data.billPaymentId), status: identifier(data.status) };
}

/** One warning per refusal reason per interval, with the count: a flood of forgeries must not flood the log. */
function refusalLog(now: () => number) {
  const last = new Map<ErrorCode, { count: number; at: number }>();
  return (code: ErrorCode): number | undefined => {
    const entry = last.get(code);
    if (entry === undefined || now() - entry.at >= REFUSAL_LOG_INTERVAL_MS) {
      last.set(code, { count: 0, at: now() });
      return (entry?.count ?? 0) + 1;
    }
    entry.count++;
    return undefined;
  };
}

/** The secret of each application's path, checked once at registration: a bad one fails the start, named, never shown. */
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
  // A malformed secret fails the start-up (named, never shown), not every webhook with a 500.
  if (options.secret !== undefined)
    assertCredential('accountingWebhookSecret', 'ACCOUNTING_WEBHOOK_SECRET', options.secret);
  const secrets = applicationSecrets(options.applications ?? []);
  if (options.secret === undefined && secrets.size === 0)
    throw new RangeError('accounting webhooks: no secret to verify them with');
  const now = options.now ?? Date.now;
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const replays = options.replays ?? new WebhookReplayStore(2 * toleranceSeconds * 1000, 10_000, now);
  // Verified webhooks come only from the service, so the budget is generous: it only bounds history growth.
  const guard =
    options.guard ??
    new CallbackFloodGuard({ workflowBurst: 20, workflowRefillMs: 15_000, outcomeWindowMs: 60_000, now });
  const dueForLog = refusalLog(now);

  // Encapsulated: the host's own parsers are untouched outside this plugin. Raw bytes: the signature covers them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const [statusCode, code, message]: [400 | 413, ErrorCode, string] =
      error.statusCode === 413
        ? [413, 'body_too_large', `the body must be at most ${WEBHOOK_BODY_LIMIT} bytes`]
        : [400, 'malformed_payload', 'the request could not be read'];
    request.log.debug({ statusCode }, 'accounting webhook refused before verification');
    options.onVerdict?.(code);
    return reply.code(statusCode).send(failure(statusCode, code, message).body);
  });

  const answer = (reply: FastifyReply, result: Answer) => {
    options.onVerdict?.('status' in result.body ? result.body.status : result.body.error.code);
    return reply.code(result.statusCode).send(result.body);
  };
  const rawBodyOf = (request: FastifyRequest) => (Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));

  if (options.secret !== undefined) {
    const secret = options.secret;
    app.post(ACCOUNTING_WEBHOOK_PATH, { bodyLimit: WEBHOOK_BODY_LIMIT }, async (request, reply) =>
      answer(
        reply,
        await handle(rawBodyOf(request), request.headers, options.logger ?? request.log, {
          secret,
          application: undefined,
        }),
      ),
    );
  }
  if (secrets.size > 0) {
    app.post<{ Params: { application: string } }>(
      `${ACCOUNTING_WEBHOOK_PATH}/:application`,
      { bodyLimit: WEBHOOK_BODY_LIMIT },
      async (request, reply) => {
        const { application } = request.params;
        const secret = secrets.get(application);
        if (secret === undefined) {
          // The path is the sender's dashboard setting: a wrong one is said once per interval, without repeating it.
          const logger = options.logger ?? request.log;
          const refused = dueForLog('unknown_application');
          if (refused !== undefined)
            logger.warn({ reason: 'unknown_application', refused }, 'accounting webhook refused');
          return answer(
            reply,
            failure(404, 'unknown_application', 'no accounting application of this name receives webhooks here'),
          );
        }
        return answer(
          reply,
          await handle(rawBodyOf(request), request.headers, options.logger ?? request.log, { secret, application }),
        );
      },
    );
  }

  /**
   * One delivery, verified with `sender.secret`: the one secret of the bare path, or the application's of its own
   * path (`sender.application`, which then also keeps its ids apart from another application's).
   */
  async function handle(
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
    logger: CallbackLogger,
    sender: { secret: string; application: string | undefined },
  ): Promise<Answer> {
    const from = sender.application === undefined ? {} : { accountingApplication: sender.application };
    let payload: unknown;
    try {
      payload = verifyWebhook({ secret: sender.secret, headers, rawBody, now: new Date(now()), toleranceSeconds });
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      const [statusCode, code, message] = VERIFICATION_ANSWERS[err.reason];
      const refused = dueForLog(code);
      if (refused !== undefined) logger.warn({ reason: code, refused, ...from }, 'accounting webhook refused');
      return failure(statusCode, code, message);
    }
    // Verified, so the header is present; ids are only taken once verified, so a forger cannot use them up.
    const webhookId = String(headers['webhook-id']).slice(0, MAX_ID_LENGTH);
    const change = readPayload(payload);
    if (change === undefined) {
      const refused = dueForLog('missing_sync_batch_id');
      if (refused !== undefined)
        logger.warn(
          { webhookId: clip(webhookId), refused, ...from },
          'accounting webhook refused: it names no sync batch',
        );
      return failure(400, 'missing_sync_batch_id', 'the body must name the sync batch in data.syncBatchId');
    }
    // Signed by the service, but still cut: a log line's length is not the sender's to choose.
    const logged = {
      ...clipped({
        webhookId,
        syncBatchId: change.syncBatchId,
        billPaymentId: change.billPaymentId,
        status: change.status,
      }),
      ...from,
    };
    // Each application numbers its own deliveries: one's id is no replay of another's.
    const replayKey = sender.application === undefined ? webhookId : `${sender.application}\u0000${webhookId}`;
    if (!replays.take(replayKey)) {
      logger.debug(logged, 'accounting webhook replayed: acknowledged without signalling');
      return { statusCode: 200, body: { status: 'duplicate' } };
    }

    const workflowId = syncBatchWorkflowId(change.syncBatchId);
    const admission = guard.admit(workflowId, {
      documentId: change.billPaymentId ?? change.syncBatchId,
      event: change.status,
      callbackId: replayKey,
    });
    if (admission.verdict !== 'signal') {
      if (admission.suppressedReport !== undefined) {
        logger.info(
          { ...logged, verdict: admission.verdict, unsignalled: admission.suppressedReport },
          'accounting webhooks acknowledged without signalling',
        );
      }
      if (admission.verdict === 'duplicate') return { statusCode: 200, body: { status: 'duplicate' } };
      return { statusCode: 202, body: { status: admission.verdict === 'closed' ? 'ignored' : 'throttled' } };
    }
    let outcome: SignalOutcome;
    try {
      outcome = await options.signal(change.syncBatchId, {
        webhookId,
        billPaymentId: change.billPaymentId,
        status: change.status,
      });
    } catch (err) {
      guard.failed(admission.ticket);
      replays.release(replayKey);
      logger.error(
        { ...logged, err: { message: clip(err instanceof Error ? err.message : String(err)) } },
        'accounting webhook not delivered: signalling the workflow failed',
      );
      return failure(503, 'signal_failed', 'the workflow could not be signalled; try again later');
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

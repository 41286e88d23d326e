/** Where API call failures become Temporal failures; `type` (what workflows branch on) is the API's code or ours. */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { ApiError, RequestValidationError, ResponseValidationError } from '../src/http/errors.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import { SERVICE_DELAY_BOUNDS } from '../src/http/rate-limit.js';

/** 4xx codes that say "not yet": C15, the first request with this Idempotency-Key is still being processed. */
const RETRYABLE_CODES = new Set(['idempotency_in_progress']);

const RATE_LIMIT_JITTER = 0.2;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
/** A zero `nextRetryDelay` reads as "not set" and falls back to the retry policy's own backoff. */
const MIN_DELAY_MS = 100;
/** The longest `nextRetryDelay` of a 429, jitter included: no answer can park an activity for longer. */
export const RATE_LIMIT_MAX_DELAY_MS = SERVICE_DELAY_BOUNDS.retryAfterSeconds * 1_000;

/** Whole ms in [MIN_DELAY_MS, max]; a delay that is not a number at all is taken as the longest. */
function boundedDelayMs(ms: number, max: number): number {
  if (Number.isNaN(ms)) return max;
  return Math.min(max, Math.max(MIN_DELAY_MS, Math.round(ms)));
}

/** Keys whose values are capabilities or credentials, wherever they occur in error extras. */
const SECRET_KEYS = new Set(['callback', 'callbackurl', 'callbacktoken', 'apikey', 'x-api-key', 'authorization']);

/** Error extras without callback URLs, tokens or keys (a rejected sale's `sale.callback.url` carries a token). */
export function secretFree(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(secretFree);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !SECRET_KEYS.has(key.toLowerCase()))
      .map(([key, inner]) => [key, secretFree(inner)]),
  );
}

export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return boundedDelayMs(ceiling * (0.5 + 0.5 * random()), BACKOFF_MAX_MS);
}

/** `Retry-After` (default 1 s) plus up to 20 % jitter, so a fleet told the same second does not return in step. */
export function rateLimitDelayMs(retryAfterSeconds: number | undefined, random: () => number = Math.random): number {
  const base = (retryAfterSeconds ?? 1) * 1_000;
  return boundedDelayMs(base * (1 + RATE_LIMIT_JITTER * random()), RATE_LIMIT_MAX_DELAY_MS);
}

function fromApiError(err: ApiError, attempt: number, random: () => number): ApplicationFailure {
  const where = `${err.operation} (${err.method} ${err.path})`;
  const status = err.status ?? null;
  if (err.status === 429) {
    const delayMs = rateLimitDelayMs(err.retryAfterSeconds, random);
    return ApplicationFailure.create({
      type: FAILURE_TYPES.rateLimited,
      message: `${where}: rate limited; retrying after ${Math.ceil(delayMs / 1_000)} s`,
      nextRetryDelay: delayMs,
      details: [{ operation: err.operation, status, retryAfterSeconds: err.retryAfterSeconds ?? null }],
    });
  }
  if (err.retry === 'safe' || RETRYABLE_CODES.has(err.code)) {
    return ApplicationFailure.create({
      type: err.code,
      message: `${where}: ${err.message}`,
      nextRetryDelay: backoffDelayMs(attempt, random),
      // Whether the request reached the service: a non-idempotent write is sent again only if it did not.
      details: [{ operation: err.operation, code: err.code, status, requestSent: err.requestSent }],
    });
  }
  if (err.retry === 'ambiguous') {
    return ApplicationFailure.create({
      type: FAILURE_TYPES.ambiguousWrite,
      message: `${where}: ${err.message} (${err.code}); the request may have taken effect`,
      nonRetryable: true,
      details: [{ operation: err.operation, code: err.code, status, message: err.message }],
    });
  }
  return ApplicationFailure.create({
    type: err.code,
    message: `${where}: ${err.message}`,
    nonRetryable: true,
    details: [secretFree(err.details), status],
  });
}

/**
 * 429 → retryable `rate_limited` after `Retry-After`; safe to repeat → retryable with backoff; a write that may
 * have happened → `ambiguous_write`; a refusal → non-retryable, type = code; a request not sent → `invalid_request`;
 * a malformed success body → `unexpected_response` if idempotent, else `ambiguous_write`. Anything else is rethrown.
 */
export function toActivityFailure(
  err: unknown,
  attempt: number,
  // `idempotent`: repeating cannot duplicate the effect; consulted only for a malformed success body.
  { idempotent = false, random = Math.random }: { idempotent?: boolean; random?: () => number } = {},
): ApplicationFailure {
  if (err instanceof ApiError) return fromApiError(err, attempt, random);
  if (err instanceof RequestValidationError) {
    return ApplicationFailure.create({
      type: FAILURE_TYPES.invalidRequest,
      message: err.message,
      nonRetryable: true,
      details: [{ operation: err.operation, field: err.field, reason: err.reason }],
    });
  }
  if (err instanceof ResponseValidationError) {
    const details = [{ operation: err.operation, status: err.status, issues: err.issues.slice(0, 10) }];
    return idempotent
      ? ApplicationFailure.create({
          type: FAILURE_TYPES.unexpectedResponse,
          message: err.message,
          nextRetryDelay: backoffDelayMs(attempt, random),
          details,
        })
      : ApplicationFailure.create({
          type: FAILURE_TYPES.ambiguousWrite,
          message: `${err.message}; the request may have taken effect`,
          nonRetryable: true,
          details,
        });
  }
  throw err;
}

/** Thrown while a document is still with the tax authority: the activity's retries are the polling loop. */
export function documentInFlight(documentId: string, status: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.documentInFlight,
    message: `document ${documentId} is still ${status}`,
    details: [{ documentId, status }],
    // An expected state, not a fault: keeps worker logs and failure metrics quiet while polling.
    category: ApplicationFailureCategory.BENIGN,
  });
}

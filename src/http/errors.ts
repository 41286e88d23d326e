import type { RateLimitInfo } from './rate-limit.js';

/**
 * Whether repeating a failed call can do harm.
 * - `safe`: the request provably had no effect (429, never sent) or repeating it cannot duplicate anything
 *   (reads, writes carrying an idempotency key).
 * - `ambiguous`: the write may have happened (5xx, timeout or dropped connection after sending) and
 *   repeating it could file a second document or movement.
 * - `final`: the service refused the request; repeating it unchanged gives the same answer.
 */
export type RetryDisposition = 'safe' | 'ambiguous' | 'final';

export type ServiceName = 'compliance' | 'accounting';

/** Codes for failures where the service sent no usable answer. */
export const TRANSPORT_ERROR_CODES = {
  notSent: 'network_error',
  timeout: 'timeout',
  connectionReset: 'connection_reset',
  aborted: 'aborted',
  invalidResponse: 'invalid_response',
} as const;

export interface ApiErrorInit {
  service: ServiceName;
  operation: string;
  method: string;
  path: string;
  /** HTTP status, absent when no response arrived. */
  status?: number;
  code: string;
  message: string;
  /** Extra fields the service put next to `code` and `message` (`sale`, `item`, `errors`, ...). */
  details?: Record<string, unknown>;
  retryAfterSeconds?: number;
  rateLimit?: RateLimitInfo;
  retry: RetryDisposition;
  /** False only when the request provably never left this process or never reached the service. */
  requestSent: boolean;
  cause?: unknown;
}

/** Every failure of a call to either service, from the transport up: one type, one taxonomy. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly service: ServiceName;
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;
  readonly rateLimit: RateLimitInfo | undefined;
  readonly retry: RetryDisposition;
  readonly requestSent: boolean;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.service = init.service;
    this.operation = init.operation;
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.rateLimit = init.rateLimit;
    this.retry = init.retry;
    this.requestSent = init.requestSent;
  }

  get isSafeToRetry(): boolean {
    return this.retry === 'safe';
  }

  get isAmbiguous(): boolean {
    return this.retry === 'ambiguous';
  }

  /** A plain, secret-free object for logs and Temporal failure details. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      service: this.service,
      operation: this.operation,
      method: this.method,
      path: this.path,
      status: this.status,
      code: this.code,
      message: this.message,
      details: this.details,
      retryAfterSeconds: this.retryAfterSeconds,
      rateLimit: this.rateLimit,
      retry: this.retry,
      requestSent: this.requestSent,
    };
  }
}

/** A request that breaks a documented limit; raised before anything is sent. */
export class RequestValidationError extends Error {
  override readonly name = 'RequestValidationError';
  readonly retry: RetryDisposition = 'final';
  readonly requestSent = false;

  constructor(
    readonly operation: string,
    /** Path of the first wrong field, e.g. `lines[0].quantity` or `Idempotency-Key`. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${operation}: ${field}: ${reason}`);
  }
}

export interface ResponseIssue {
  path: string;
  message: string;
}

/** A successful response whose body lacks a required field or has the wrong shape. */
export class ResponseValidationError extends Error {
  override readonly name = 'ResponseValidationError';

  constructor(
    readonly service: ServiceName,
    readonly operation: string,
    readonly status: number,
    readonly issues: ResponseIssue[],
  ) {
    super(
      `${service} ${operation}: unexpected response body (HTTP ${status}): ` +
        issues
          .slice(0, 5)
          .map((i) => `${i.path || '(body)'}: ${i.message}`)
          .join('; '),
    );
  }
}

/**
 * How a completed HTTP exchange should be treated. `idempotent` means replaying the request cannot
 * duplicate its effect: a read, or a write that carries an idempotency key.
 */
export function classifyStatus(status: number, idempotent: boolean): RetryDisposition {
  if (status === 429 || status === 408) return 'safe';
  if (status >= 500) return idempotent ? 'safe' : 'ambiguous';
  return 'final';
}

import type { RateLimitInfo } from './rate-limit.js';

/**
 * `safe`: it had no effect, or repeating cannot duplicate anything; `ambiguous`: the write may have happened, so
 * repeating could file a second document; `final`: the service refused it and would again.
 */
type RetryDisposition = 'safe' | 'ambiguous' | 'final';

export type ServiceName = 'compliance' | 'accounting';

export interface ApiErrorInit {
  service: ServiceName;
  operation: string;
  method: string;
  path: string;
  /** Absent when no response arrived. */
  status?: number;
  code: string;
  message: string;
  /** What the service put next to `code` and `message` (`sale`, `item`, `errors`, ...). */
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
  readonly service!: ServiceName;
  readonly operation!: string;
  readonly method!: string;
  readonly path!: string;
  readonly status!: number | undefined;
  readonly code!: string;
  readonly details!: Record<string, unknown>;
  readonly retryAfterSeconds!: number | undefined;
  readonly rateLimit!: RateLimitInfo | undefined;
  readonly retry!: RetryDisposition;
  readonly requestSent!: boolean;

  // Fields are defined in this order (as undefined) before the constructor assigns them: `toJSON` keeps the order.
  constructor({ message, cause, details = {}, ...init }: ApiErrorInit) {
    super(message, cause === undefined ? undefined : { cause });
    Object.assign(this, init, { details });
  }

  /** Secret-free, for logs and Temporal failure details (the cause stays out). */
  toJSON() {
    return { ...this, message: this.message };
  }
}

/** A request that breaks a documented limit; raised before anything is sent. */
export class RequestValidationError extends Error {
  override readonly name = 'RequestValidationError';
  readonly retry: RetryDisposition = 'final';
  readonly requestSent = false;

  constructor(
    readonly operation: string,
    /** The first wrong field, e.g. `lines[0].quantity` or `Idempotency-Key`. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${operation}: ${field}: ${reason}`);
  }
}

export class ResponseValidationError extends Error {
  override readonly name = 'ResponseValidationError';

  constructor(
    readonly service: ServiceName,
    readonly operation: string,
    readonly status: number,
    readonly issues: { path: string; message: string }[],
  ) {
    const listed = issues.slice(0, 5).map((i) => `${i.path || '(body)'}: ${i.message}`);
    super(`${service} ${operation}: unexpected response body (HTTP ${status}): ${listed.join('; ')}`);
  }
}

export function classifyStatus(status: number, idempotent: boolean): RetryDisposition {
  if (status === 429 || status === 408) return 'safe';
  if (status >= 500) return idempotent ? 'safe' : 'ambiguous';
  return 'final';
}

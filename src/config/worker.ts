import { z } from 'zod';
import { parseDuration } from '../contracts/duration.js';
import { ConfigError, resolveSecretFiles, type Env } from './env.js';

/** Settings of the worker process itself (rate budget, callbacks, metrics); Temporal's are src/temporal/connection.ts'. */
export interface WorkerConfig {
  /** The application's compliance rate limit; the fleet stays under it together. */
  complianceRequestsPerMinute: number;
  /**
   * Share of the limit the fleet leaves unpaced, for other clients of the same application that want a fixed
   * reserve. 0 by default: the service's own rate-limit headers hold requests back once its window is spent.
   */
  complianceRateHeadroom: number;
  /** Public base URL result callbacks are sent to; without it the worker relies on polling alone. */
  callbackPublicBaseUrl: string | undefined;
  /** Signs callback URL tokens; required with a public callback URL. */
  callbackSecret: string | undefined;
  callbackHost: string;
  callbackPort: number;
  /** How long a minted callback URL verifies (CALLBACK_TOKEN_TTL; default 72 h). */
  callbackTokenTtlMs: number;
  /** Connections the callback receiver holds open at once (CALLBACK_MAX_CONNECTIONS; default 256). */
  callbackMaxConnections: number | undefined;
  /** A callback request must arrive whole within this (CALLBACK_REQUEST_TIMEOUT; default 15 s). */
  callbackRequestTimeoutMs: number | undefined;
  /** Which body fields of a result callback are read (CALLBACK_BODY_FIELDS; default `assumed`). */
  callbackBodyFields: 'assumed' | 'none' | undefined;
  /** `host:port` of the Prometheus endpoint (`/metrics`) of the SDK's and the worker's own metrics; none when unset. */
  metricsBindAddress: string | undefined;
  /** How often the operator work waiting is counted from visibility (OPERATOR_WORK_COUNT_INTERVAL; default 1 minute). */
  operatorWorkCountIntervalMs: number | undefined;
}

const HOUR_MS = 3_600_000;
/**
 * Default lifetime of a callback URL: the 24-hour outcome timeout, plus the service's retry schedule of a
 * delivery (last attempt 2 h after the outcome, C47), with a wide margin.
 */
export const DEFAULT_CALLBACK_TOKEN_TTL_MS = 72 * HOUR_MS;
/** A token outliving this is a credential nobody needs; under an hour is below the expiry's rounding. */
const CALLBACK_TOKEN_TTL_BOUNDS = { min: HOUR_MS, max: 30 * 24 * HOUR_MS } as const;

/** A duration with its unit within [min, max], refused with the range in words and an example. */
function boundedDuration(min: number, max: number, range: string, example: string) {
  return z.string().transform((text, ctx) => {
    const ms = parseDuration(text.trim());
    if (ms === undefined || ms < min || ms > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration from ${range} with its unit, e.g. ${example} (got ${JSON.stringify(text)})`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

const callbackTokenTtl = boundedDuration(
  CALLBACK_TOKEN_TTL_BOUNDS.min,
  CALLBACK_TOKEN_TTL_BOUNDS.max,
  '1h to 30d',
  '72h',
);
const callbackRequestTimeout = boundedDuration(1_000, 600_000, '1s to 10m', '15s');
/** Visibility counts are cheap but not free: more often than every 5 s is load nobody reads; over 10 minutes, a stale gauge. */
const operatorWorkCountInterval = boundedDuration(5_000, 600_000, '5s to 10m', '1m');

const schema = z.object({
  COMPLIANCE_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(120),
  COMPLIANCE_RATE_HEADROOM: z.coerce.number().min(0).max(0.9).default(0),
  CALLBACK_PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  CALLBACK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  CALLBACK_HOST: z.string().min(1).default('0.0.0.0'),
  CALLBACK_PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
  CALLBACK_TOKEN_TTL: callbackTokenTtl.optional(),
  CALLBACK_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).optional(),
  CALLBACK_REQUEST_TIMEOUT: callbackRequestTimeout.optional(),
  CALLBACK_BODY_FIELDS: z.enum(['assumed', 'none']).optional(),
  METRICS_BIND_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 0.0.0.0:9464')
    .optional(),
  OPERATOR_WORK_COUNT_INTERVAL: operatorWorkCountInterval.optional(),
});

export function loadWorkerConfig(rawEnv: Env): WorkerConfig {
  const env = resolveSecretFiles(rawEnv, ['CALLBACK_SECRET']);
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // Never echo the value: CALLBACK_SECRET is a secret.
    throw new ConfigError(`${String(issue.path[0])}: ${issue.message}`);
  }
  const c = parsed.data;
  if (c.CALLBACK_PUBLIC_BASE_URL && !c.CALLBACK_SECRET) {
    throw new ConfigError('CALLBACK_SECRET is required when CALLBACK_PUBLIC_BASE_URL is set');
  }
  return {
    complianceRequestsPerMinute: c.COMPLIANCE_REQUESTS_PER_MINUTE,
    complianceRateHeadroom: c.COMPLIANCE_RATE_HEADROOM,
    callbackPublicBaseUrl: c.CALLBACK_PUBLIC_BASE_URL,
    callbackSecret: c.CALLBACK_SECRET,
    callbackHost: c.CALLBACK_HOST,
    callbackPort: c.CALLBACK_PORT,
    callbackTokenTtlMs: c.CALLBACK_TOKEN_TTL ?? DEFAULT_CALLBACK_TOKEN_TTL_MS,
    callbackMaxConnections: c.CALLBACK_MAX_CONNECTIONS,
    callbackRequestTimeoutMs: c.CALLBACK_REQUEST_TIMEOUT,
    callbackBodyFields: c.CALLBACK_BODY_FIELDS,
    metricsBindAddress: c.METRICS_BIND_ADDRESS,
    operatorWorkCountIntervalMs: c.OPERATOR_WORK_COUNT_INTERVAL,
  };
}

/** Activities per second the compliance task queue may start, fleet-wide, to stay under the rate limit. */
export function complianceActivitiesPerSecond(
  config: Pick<WorkerConfig, 'complianceRequestsPerMinute' | 'complianceRateHeadroom'>,
): number {
  return (config.complianceRequestsPerMinute * (1 - config.complianceRateHeadroom)) / 60;
}

import { z } from 'zod';
import { boundedDuration, ConfigError, resolveSecretFiles, type Env } from './env.js';

const HOUR_MS = 3_600_000;
/** The 24-hour outcome timeout, plus the service's retry schedule of a delivery (2 h, C47), with a wide margin. */
export const DEFAULT_CALLBACK_TOKEN_TTL_MS = 72 * HOUR_MS;

/** How long a stopping process lets its tasks and callback requests finish: Kubernetes' own default grace. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

/** Where a server of the process listens (the port checked as a port, not only as digits). */
const bindAddress = (example: string) =>
  z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, `must be host:port, e.g. ${example}`)
    .refine((address) => Number(address.slice(address.lastIndexOf(':') + 1)) <= 65_535, 'port must be at most 65535');

/** Settings of the worker process itself; Temporal's are src/temporal/connection.ts'. */
const schema = z
  .object({
    // A fleet's own queue: two fleets (say, one of each major release) side by side on one namespace never share work.
    WORKFLOW_TASK_QUEUE: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, 'must be letters, digits, ".", "_" or "-", at most 200')
      .optional(),
    COMPLIANCE_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(120),
    /** Share of the limit left unpaced for other clients; 0: the service's rate-limit headers hold requests back. */
    COMPLIANCE_RATE_HEADROOM: z.coerce.number().min(0).max(0.9).default(0),
    CALLBACK_PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
    CALLBACK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    CALLBACK_HOST: z.string().min(1).default('0.0.0.0'),
    CALLBACK_PORT: z.coerce.number().int().min(0).max(65_535).default(8787),
    // Under an hour is below the expiry's rounding; a token outliving 30 days is a credential nobody needs.
    CALLBACK_TOKEN_TTL: boundedDuration(HOUR_MS, 30 * 24 * HOUR_MS, '1h to 30d', '72h').optional(),
    CALLBACK_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).optional(),
    CALLBACK_REQUEST_TIMEOUT: boundedDuration(1_000, 600_000, '1s to 10m', '15s').optional(),
    CALLBACK_BODY_FIELDS: z.enum(['assumed', 'none']).optional(),
    METRICS_BIND_ADDRESS: bindAddress('0.0.0.0:9464').optional(),
    // `/readyz` and `/livez` for an orchestrator; unset, no health server.
    HEALTH_BIND_ADDRESS: bindAddress('0.0.0.0:9465').optional(),
    // Under a second no call finishes; over 10 minutes a deploy waits on one pod longer than anyone would.
    SHUTDOWN_GRACE_TIME: boundedDuration(1_000, 600_000, '1s to 10m', '30s').optional(),
    // Visibility counts are not free: more often than every 5 s is load nobody reads; over 10 minutes, a stale gauge.
    OPERATOR_WORK_COUNT_INTERVAL: boundedDuration(5_000, 600_000, '5s to 10m', '1m').optional(),
  })
  .transform((c) => ({
    workflowTaskQueue: c.WORKFLOW_TASK_QUEUE,
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
    healthBindAddress: c.HEALTH_BIND_ADDRESS,
    shutdownGraceMs: c.SHUTDOWN_GRACE_TIME ?? DEFAULT_SHUTDOWN_GRACE_MS,
    operatorWorkCountIntervalMs: c.OPERATOR_WORK_COUNT_INTERVAL,
  }));

export type WorkerConfig = z.output<typeof schema>;

export function loadWorkerConfig(rawEnv: Env): WorkerConfig {
  const env = resolveSecretFiles(rawEnv, ['CALLBACK_SECRET']);
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // Never echo the value: CALLBACK_SECRET is a secret.
    throw new ConfigError(`${String(issue.path[0])}: ${issue.message}`);
  }
  if (parsed.data.callbackPublicBaseUrl && !parsed.data.callbackSecret) {
    throw new ConfigError('CALLBACK_SECRET is required when CALLBACK_PUBLIC_BASE_URL is set');
  }
  return parsed.data;
}

// COMPLIANCE_RATE_HEADROOM unset. Why 4 %: docs/tenancy.md, "Each application held to its own budget, fleet-wide".
const TENANT_RATE_HEADROOM = 0.04;

/** A worker serving a tenants file: its own default headroom. */
export function loadTenantsWorkerConfig(env: Env): WorkerConfig {
  const configured = loadWorkerConfig(env);
  return env.COMPLIANCE_RATE_HEADROOM?.trim()
    ? configured
    : { ...configured, complianceRateHeadroom: TENANT_RATE_HEADROOM };
}

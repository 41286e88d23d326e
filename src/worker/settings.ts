/**
 * The whole configuration of a worker process, read and validated once, at the entry point: nothing below it reads
 * the environment. A bad value stops the start with a ConfigError (or PayloadKeyConfigError) naming the variable,
 * never its value. Every secret may come from a file (`<NAME>_FILE`, src/config/env.ts).
 *
 * The worker serves tenants: those of TENANTS_FILE or TENANTS_DIR, where nothing may stand in for a service, or the
 * single-key variables' one tenant, where a service that is not configured is refused unless SANDBOX=embedded asks
 * for the embedded sandbox.
 */
import { loadStockReporting, type StockReportingOf } from '../config/stock-reporting.js';
import { payloadEncryptionFromEnv, type PayloadEncryption } from '../codec/data-converter.js';
import { loadAccountingWorkerConfig } from '../config/accounting-worker.js';
import { ConfigError, loadConfig, resolveSecretFiles, type AppConfig, type Env } from '../config/env.js';
import { loadPurchasesConfig, type PurchasesConfig } from '../config/purchases.js';
import { loadReconciliationConfig, type ReconciliationConfig } from '../config/reconciliation.js';
import type { TenantsConfig } from '../tenants/types.js';
import { loadTenantsConfig } from '../tenants/load.js';
import { fromSingleKeyVariables } from '../tenants/single-key.js';
import type { TenantsReload } from '../tenants/watch.js';
import { complianceActivitiesPerSecond, loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { assertServicesConfigured } from '../services/endpoints.js';
import { tracingSettings, type TracingSettings } from '../temporal/tracing.js';

export interface WorkerSettings {
  /**
   * The single-key variables' services (or SANDBOX=embedded) and the log level. With a tenants file, neither service
   * is set here: the tenants name them.
   */
  services: AppConfig;
  /** What the worker serves: the tenants of TENANTS_FILE / TENANTS_DIR, or the single-key variables' one tenant. */
  tenants: TenantsConfig;
  /** With a tenants file: how it is read again while the worker runs (TENANTS_RELOAD_SECONDS; undefined: never). */
  tenantsReload?: TenantsReload;
  /**
   * The Temporal connection (environment over an optional temporal.toml profile): address (undefined: the local
   * stack starts a dev server, the worker alone connects to 127.0.0.1:7233), namespace, API key, TLS.
   */
  temporal: TemporalSettings;
  /**
   * The callback receiver, the compliance budget, the metrics endpoint. With tenants the budget
   * (`complianceRequestsPerMinute`) is the sum of the file's applications.
   */
  worker: WorkerConfig;
  /**
   * Fleet-wide activity starts per second on each service's queue. With tenants, the compliance rate from the
   * file's budgets; the start lowers it to what the services allow (startWorkerProcess).
   */
  activitiesPerSecond: { compliance: number; accounting: number };
  purchases: PurchasesConfig;
  /** With tenants, the links of the tenants file. */
  reconciliation: ReconciliationConfig;
  /** Payload encryption (keys required unless PAYLOAD_ENCRYPTION=off). */
  encryption: PayloadEncryption;
  /** OpenTelemetry tracing; undefined when no OTLP endpoint is configured. */
  tracing: TracingSettings | undefined;
  /** How each business's stock is reported (STOCK_REPORTING, STOCK_MAX_DELAY, STOCK_REPORTING_BY_BUSINESS). */
  stockReporting: StockReportingOf;
}

function isSet(env: Env, name: string): boolean {
  return Boolean(env[name]?.trim());
}

/** Every setting of a worker process, from the environment (and temporal.toml through TEMPORAL_* / envconfig). */
export function loadWorkerSettings(rawEnv: Env): WorkerSettings {
  const variable = ['TENANTS_FILE', 'TENANTS_DIR'].find((name) => isSet(rawEnv, name));
  // A tenants file comes first, as the services do without one. Its loader reads its own key sources (and says which
  // of NAME / NAME_FILE is set), so it gets the raw form; it refuses the single-key variables beside the file.
  const fileTenants = variable === undefined ? undefined : loadTenantsConfig(rawEnv);
  // Every secret's *_FILE, read once, here; TEMPORAL_API_KEY_FILE too (envconfig knows only the variable).
  const env = resolveSecretFiles(rawEnv);
  // With a tenants file only what is not per tenant: the base URLs, the entries' default, would read as half a
  // single-key configuration.
  const services = loadConfig(fileTenants ? { LOG_LEVEL: env.LOG_LEVEL, SANDBOX: env.SANDBOX } : env);
  if (fileTenants && services.embeddedSandbox) {
    throw new ConfigError(
      `SANDBOX=embedded and ${variable} are both set: a worker serving a tenants file reaches the services its ` +
        'entries name and nothing stands in for them (unset SANDBOX)',
    );
  }
  // A worker with a service missing is the first thing to say, before any other setting it would need.
  if (!fileTenants) assertServicesConfigured(services);
  const worker = fileTenants
    ? {
        ...loadTenantsWorkerConfig(env),
        // What the fleet paces the compliance queue to: every application's own budget, added up.
        complianceRequestsPerMinute: fileTenants.compliance.reduce((sum, t) => sum + t.requestsPerMinute, 0),
      }
    : loadWorkerConfig(env);
  const reloadSeconds = fileTenants ? tenantsReloadSeconds(env) : 0;
  const reconciliation = loadReconciliationConfig(fileTenants ? { RECONCILE_EVERY: env.RECONCILE_EVERY } : env);
  return {
    services,
    ...(reloadSeconds > 0
      ? { tenantsReload: { load: () => loadTenantsConfig(rawEnv), intervalMs: reloadSeconds * 1000 } }
      : {}),
    temporal: loadTemporalSettings(env),
    worker,
    activitiesPerSecond: {
      compliance: tenantComplianceActivitiesPerSecond(
        worker.complianceRequestsPerMinute,
        worker.complianceRateHeadroom,
      ),
      accounting: loadAccountingWorkerConfig(env).activitiesPerSecond,
    },
    // A missing or malformed key is a configuration error before anything is contacted.
    encryption: payloadEncryptionFromEnv(env),
    purchases: loadPurchasesConfig(env),
    reconciliation: fileTenants
      ? { ...reconciliation, links: fileTenants.links.map(({ businessId, companyId }) => ({ businessId, companyId })) }
      : reconciliation,
    tracing: tracingSettings(env),
    stockReporting: loadStockReporting(env),
    tenants: fileTenants ?? fromSingleKeyVariables(env),
  };
}

/** COMPLIANCE_RATE_HEADROOM of a tenants worker when not set: 7 % of each application's budget left unpaced. */
export const TENANT_RATE_HEADROOM = 0.07;

/**
 * The worker configuration of a process serving a tenants file. Unless COMPLIANCE_RATE_HEADROOM is set, it is
 * TENANT_RATE_HEADROOM: what the compliance queues' rates do not count, the server's burst of a few tasks when a
 * backlog starts and a business's first sale listing its items before filing (two requests, one task), would
 * otherwise take an application past its limit in a sliding minute (docs/tenancy.md; the benchmark's tenancy section).
 */
export function loadTenantsWorkerConfig(env: Env): WorkerConfig {
  const configured = loadWorkerConfig(env);
  return env.COMPLIANCE_RATE_HEADROOM?.trim()
    ? configured
    : { ...configured, complianceRateHeadroom: TENANT_RATE_HEADROOM };
}

/** TENANTS_RELOAD_SECONDS: how often a tenants worker reads its file again (default 15; 0: never; 1 to 3600). */
function tenantsReloadSeconds(env: Env): number {
  const raw = env.TENANTS_RELOAD_SECONDS?.trim();
  if (!raw) return 15;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds > 3600)
    throw new ConfigError(
      `TENANTS_RELOAD_SECONDS must be a whole number of seconds from 0 (never) to 3600, got "${raw}"`,
    );
  return seconds;
}

/** A single application's budget (120 a minute) when the tenants name none yet: its queue stays open, and idle. */
const NO_APPLICATION_REQUESTS_PER_MINUTE = 120;

/**
 * A rate in activity starts per second for `requestsPerMinute` of budget, less the headroom (COMPLIANCE_RATE_HEADROOM):
 * each rate window's on the compliance queues (src/tenants/budgets.ts), and the starting point of the workers'
 * own limit before the server's configuration is applied.
 */
export function tenantComplianceActivitiesPerSecond(requestsPerMinute: number, headroom: number): number {
  const total = requestsPerMinute > 0 ? requestsPerMinute : NO_APPLICATION_REQUESTS_PER_MINUTE;
  return complianceActivitiesPerSecond({ complianceRequestsPerMinute: total, complianceRateHeadroom: headroom });
}

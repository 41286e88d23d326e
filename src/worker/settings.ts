/**
 * The whole configuration of a worker process, read and validated once at the entry point: nothing below it reads
 * the environment. A bad value stops the start with an error naming the variable, never its value.
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
import { loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { assertServicesConfigured } from '../services/endpoints.js';
import { tracingSettings, type TracingSettings } from '../temporal/tracing.js';

export interface WorkerSettings {
  /** The single-key variables' services (none with a tenants file: its entries name them) and the log level. */
  services: AppConfig;
  tenants: TenantsConfig;
  /** With a tenants file: how it is read again while the worker runs (undefined: never). */
  tenantsReload?: TenantsReload;
  temporal: TemporalSettings;
  worker: WorkerConfig;
  /** Fleet-wide activity starts per second on the accounting queue (the compliance queue's follow the budgets). */
  activitiesPerSecond: { accounting: number };
  purchases: PurchasesConfig;
  /** With a tenants file, its links. */
  reconciliation: ReconciliationConfig;
  encryption: PayloadEncryption;
  /** Undefined when no OTLP endpoint is configured. */
  tracing: TracingSettings | undefined;
  stockReporting: StockReportingOf;
}

export function loadWorkerSettings(rawEnv: Env): WorkerSettings {
  const variable = ['TENANTS_FILE', 'TENANTS_DIR'].find((name) => Boolean(rawEnv[name]?.trim()));
  // A tenants file's loader reads its own key sources (and says which of NAME / NAME_FILE is set): the raw form.
  const fileTenants = variable === undefined ? undefined : loadTenantsConfig(rawEnv);
  // TEMPORAL_API_KEY_FILE too: envconfig knows only the variable.
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
  const worker = fileTenants ? loadTenantsWorkerConfig(env) : loadWorkerConfig(env);
  const reloadSeconds = fileTenants ? tenantsReloadSeconds(env) : 0;
  const reconciliation = loadReconciliationConfig(fileTenants ? { RECONCILE_EVERY: env.RECONCILE_EVERY } : env);
  return {
    services,
    ...(reloadSeconds > 0
      ? { tenantsReload: { load: () => loadTenantsConfig(rawEnv), intervalMs: reloadSeconds * 1000 } }
      : {}),
    temporal: loadTemporalSettings(env),
    worker,
    activitiesPerSecond: { accounting: loadAccountingWorkerConfig(env).activitiesPerSecond },
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

/** COMPLIANCE_RATE_HEADROOM of a tenants worker when not set. */
const TENANT_RATE_HEADROOM = 0.07;

/**
 * The worker configuration of a process serving a tenants file. The default headroom covers what the queues' rates
 * do not count (the server's burst when a backlog starts, a first sale's two requests in one task), which would
 * otherwise take an application past its limit in a sliding minute (docs/tenancy.md).
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

/** Read and validated once at the entry point: nothing below it reads the environment. */
import { loadStockReporting } from '../config/stock-reporting.js';
import { loadStockIn } from '../config/stock-in.js';
import { payloadEncryptionFromEnv } from '../codec/data-converter.js';
import { loadAccountingWorkerConfig } from '../config/accounting-worker.js';
import { ConfigError, loadConfig, resolveSecretFiles, type Env } from '../config/env.js';
import { loadPurchasesConfig } from '../config/purchases.js';
import { loadFiscalDaySettings } from '../config/fiscal-day.js';
import { loadReconciliationConfig } from '../config/reconciliation.js';
import { loadTenantsConfig, tenantsReloadSeconds } from '../tenants/load.js';
import { fromSingleKeyVariables } from '../tenants/single-key.js';
import { loadTenantsWorkerConfig, loadWorkerConfig } from '../config/worker.js';
import { loadVersioningSettings } from '../config/versioning.js';
import { loadTemporalSettings } from '../temporal/connection.js';
import { assertServicesConfigured } from '../services/endpoints.js';
import { tracingSettings } from '../temporal/tracing.js';

export type WorkerSettings = ReturnType<typeof loadWorkerSettings>;

export function loadWorkerSettings(rawEnv: Env) {
  const variable = ['TENANTS_FILE', 'TENANTS_DIR'].find((name) => Boolean(rawEnv[name]?.trim()));
  // A tenants file's loader reads its own key sources (and says which of NAME / NAME_FILE is set): the raw form.
  const fileTenants = variable === undefined ? undefined : loadTenantsConfig(rawEnv);
  // TEMPORAL_API_KEY_FILE too: envconfig knows only the variable.
  const env = resolveSecretFiles(rawEnv);
  // The single-key variables' services and the log level. With a tenants file only what is not per tenant: the base
  // URLs, the entries' default, would read as half a single-key configuration.
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
  const reconciliation = loadReconciliationConfig(
    fileTenants ? { RECONCILE_EVERY: env.RECONCILE_EVERY, RECONCILE_PERIOD_DAYS: env.RECONCILE_PERIOD_DAYS } : env,
  );
  return {
    services,
    ...(reloadSeconds > 0
      ? { tenantsReload: { load: () => loadTenantsConfig(rawEnv), intervalMs: reloadSeconds * 1000 } }
      : {}),
    temporal: loadTemporalSettings(env),
    worker,
    // Fleet-wide, on the accounting queue (the compliance queue's follow the budgets).
    activitiesPerSecond: { accounting: loadAccountingWorkerConfig(env).activitiesPerSecond },
    encryption: payloadEncryptionFromEnv(env),
    purchases: loadPurchasesConfig(env),
    fiscalDay: loadFiscalDaySettings(env),
    reconciliation: fileTenants
      ? { ...reconciliation, links: fileTenants.links.map(({ businessId, companyId }) => ({ businessId, companyId })) }
      : reconciliation,
    tracing: tracingSettings(env),
    stockReporting: loadStockReporting(env),
    // Beside a tenants file too: the file's `stockIn` entries win for the businesses they name.
    stockIn: loadStockIn(env),
    tenants: fileTenants ?? fromSingleKeyVariables(env),
    versioning: loadVersioningSettings(env),
    // npm sets it for a script's processes: the script's shell, the worker's parent, ends on npm's SIGTERM without
    // passing it on, so the parent gone is the worker's stop.
    stopsWithParent: Boolean(rawEnv.npm_lifecycle_event),
  };
}

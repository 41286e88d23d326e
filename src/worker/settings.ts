/**
 * The whole configuration of a worker process, read and validated once, at the entry point: nothing below it reads
 * the environment. A bad value stops the start with a ConfigError (or PayloadKeyConfigError) naming the variable,
 * never its value. Every secret may come from a file (`<NAME>_FILE`, src/config/env.ts). A service that is not configured is refused here, unless SANDBOX=embedded asks for the sandbox.
 */
import { payloadEncryptionFromEnv, type PayloadEncryption } from '../codec/data-converter.js';
import { loadAccountingWorkerConfig } from '../config/accounting-worker.js';
import { loadConfig, resolveSecretFiles, type AppConfig } from '../config/env.js';
import { loadPurchasesConfig, type PurchasesConfig } from '../config/purchases.js';
import { loadReconciliationConfig, type ReconciliationConfig } from '../config/reconciliation.js';
import { complianceActivitiesPerSecond, loadWorkerConfig, type WorkerConfig } from '../config/worker.js';
import { loadTemporalSettings, type TemporalSettings } from '../temporal/connection.js';
import { assertServicesConfigured } from '../services/endpoints.js';
import { tracingSettings, type TracingSettings } from '../temporal/tracing.js';

type Env = Record<string, string | undefined>;

export interface WorkerSettings {
  /** The two services (or SANDBOX=embedded) and the log level. */
  services: AppConfig;
  /**
   * The Temporal connection (environment over an optional temporal.toml profile): address (undefined: the local
   * stack starts a dev server, the worker alone connects to 127.0.0.1:7233), namespace, API key, TLS.
   */
  temporal: TemporalSettings;
  /** The callback receiver, the compliance budget, the metrics endpoint. */
  worker: WorkerConfig;
  /** Fleet-wide activity starts per second on each service's queue. */
  activitiesPerSecond: { compliance: number; accounting: number };
  purchases: PurchasesConfig;
  reconciliation: ReconciliationConfig;
  /** Payload encryption (keys required unless PAYLOAD_ENCRYPTION=off). */
  encryption: PayloadEncryption;
  /** OpenTelemetry tracing; undefined when no OTLP endpoint is configured. */
  tracing: TracingSettings | undefined;
}

/** Every setting of a worker process, from the environment (and temporal.toml through TEMPORAL_* / envconfig). */
export function loadWorkerSettings(rawEnv: Env): WorkerSettings {
  // Every secret's *_FILE, read once, here; TEMPORAL_API_KEY_FILE too (envconfig knows only the variable).
  const env = resolveSecretFiles(rawEnv);
  const services = loadConfig(env);
  // A worker with a service missing is the first thing to say, before any other setting it would need.
  assertServicesConfigured(services);
  const worker = loadWorkerConfig(env);
  return {
    services,
    temporal: loadTemporalSettings(env),
    worker,
    activitiesPerSecond: {
      compliance: complianceActivitiesPerSecond(worker),
      accounting: loadAccountingWorkerConfig(env).activitiesPerSecond,
    },
    // A missing or malformed key is a configuration error before anything is contacted.
    encryption: payloadEncryptionFromEnv(env),
    purchases: loadPurchasesConfig(env),
    reconciliation: loadReconciliationConfig(env),
    tracing: tracingSettings(env),
  };
}

import type { PurchasesConfig } from '../../src/config/purchases.js';
import { loadPurchasesConfig } from '../../src/config/purchases.js';
import type { ReconciliationConfig } from '../../src/config/reconciliation.js';
import { loadWorkerConfig, type WorkerConfig } from '../../src/config/worker.js';
import { loadVersioningSettings } from '../../src/config/versioning.js';
import type { AccountingConfig, ComplianceConfig } from '../../src/config/env.js';
import { singleKeyTenants } from '../../src/tenants/single-key.js';
import type { TenantsConfig } from '../../src/tenants/types.js';
import type { WorkerProcessSettings } from '../../src/worker/process.js';

/**
 * The settings a test's worker process starts with: a worker's defaults for an empty environment (no purchases
 * sync, no reconciliation schedules, no shutdown grace), with what the test overrides. Its build makes itself
 * current in a deployment named after its task queue, so stacks sharing the run's server each route their own queues.
 */
export function testWorkerSettings(
  overrides: {
    worker?: Partial<WorkerConfig>;
    /** Activity starts per second on the accounting queue (default 2). */
    activitiesPerSecond?: Partial<WorkerProcessSettings['activitiesPerSecond']>;
    purchases?: PurchasesConfig;
    reconciliation?: ReconciliationConfig;
    versioning?: Partial<WorkerProcessSettings['versioning']>;
  } = {},
): WorkerProcessSettings {
  // A stack's workers stop as the SDK stops them by default: what is in flight is cancelled at once, not given
  // SHUTDOWN_GRACE_TIME, so a test can replace its worker mid-task (test/worker/shutdown.test.ts has the grace).
  const worker = { ...loadWorkerConfig({}), shutdownGraceMs: 0, ...overrides.worker };
  return {
    worker,
    activitiesPerSecond: { accounting: 2, ...overrides.activitiesPerSecond },
    purchases: overrides.purchases ?? loadPurchasesConfig({}),
    reconciliation: overrides.reconciliation ?? { links: [], every: '24h' },
    versioning: { ...loadVersioningSettings({}), makeCurrent: true, ...overrides.versioning },
  };
}

/** The one tenant of the given services (the embedded sandbox, usually), as the single-key variables write it. */
export function singleKeyTestTenants(
  services: { compliance: ComplianceConfig; accounting: AccountingConfig },
  settings: WorkerProcessSettings,
): TenantsConfig {
  return singleKeyTenants(services, {
    requestsPerMinute: settings.worker.complianceRequestsPerMinute,
    links: settings.reconciliation.links,
  });
}

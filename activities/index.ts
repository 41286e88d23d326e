/**
 * All activities of the sale process, created from injected dependencies. Workflows use
 * `proxyActivities<Activities>()` with `import type` only, so none of this enters the workflow bundle.
 */
import type { AccountingActivities } from './accounting.js';
import { createComplianceActivities } from './compliance.js';
import type { ActivityDeps } from './deps.js';
import { createPurchasesActivities, type PurchasesActivityDeps } from './purchases.js';
import type { ReconciliationActivities } from './reconciliation.js';
import { createRegistrationActivities } from './registration.js';

export function createActivities(deps: ActivityDeps & Pick<PurchasesActivityDeps, 'purchasesSink'>) {
  return {
    ...createComplianceActivities(deps),
    ...createRegistrationActivities(deps),
    ...createPurchasesActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;

/** Every activity of every process, as workflows schedule them (the worker registers each on its contract's queue). */
export type AllActivities = Activities & ReconciliationActivities & AccountingActivities;

export type { ActivityDeps } from './deps.js';

/** Every activity, from injected dependencies; the worker registers each on its queue (ACTIVITY_QUEUES). */
import { createAccountingActivities } from './accounting.js';
import { createBacklogActivities } from './backlog.js';
import { cachedCanonicalBranch } from './branches.js';
import { createCatalogueActivities } from './catalogue.js';
import { createFiscalDayActivities, type FiscalDayActivityDeps } from './fiscal-day.js';
import { createComplianceActivities } from './compliance.js';
import type { BudgetPlacement, PlaceBusinessInput } from '../src/contracts/budget-placement.js';
import type { ActivityDeps } from './deps.js';
import { DEFAULT_FISCAL_DAY_SETTINGS } from '../src/contracts/fiscal-day.js';
import { createPurchasesActivities, type PurchasesActivityDeps } from './purchases.js';
import { createPurchasesBookActivities } from './purchases-book.js';
import { createReconciliationActivities } from './reconciliation.js';
import { createRefundActivities } from './refund.js';
import { createRegistrationActivities } from './registration.js';
import { outageBoard } from './outage-gate.js';
import { createOutageWatchActivities } from './outage-watch.js';
import { createStockInActivities, type StockInActivityDeps } from './stock-in.js';
import { createStockInMappingsActivities } from './stock-in-mappings.js';
import { createStockLedgerActivities } from './stock-ledger.js';

export function createActivities(
  given: ActivityDeps &
    Pick<PurchasesActivityDeps, 'purchasesSink'> &
    Pick<StockInActivityDeps, 'stockIn'> &
    Partial<Pick<FiscalDayActivityDeps, 'fiscalDay'>>,
) {
  const deps = { ...given, outages: given.temporal && outageBoard(given.temporal.client) };
  const stockLedger = createStockLedgerActivities({
    ...deps,
    // Per process, like the item registry: the branches a key's businesses have, read once per business.
    canonicalBranch: cachedCanonicalBranch(
      async (businessId) => (await deps.services.compliance(businessId).listBusinesses()).data,
    ),
  });
  const fiscalDay = createFiscalDayActivities({
    ...deps,
    ...(deps.purchasesSink ? { eventSink: deps.purchasesSink } : {}),
    fiscalDay: deps.fiscalDay ?? DEFAULT_FISCAL_DAY_SETTINGS,
  });
  const signing = deps.temporal
    ? { handOverStock: stockLedger.handOverStock, enterFiscalDay: fiscalDay.enterFiscalDay }
    : {};
  return {
    ...createComplianceActivities({ ...deps, ...signing }),
    ...fiscalDay,
    ...createRegistrationActivities(deps),
    ...createRefundActivities(deps),
    ...createCatalogueActivities(deps),
    ...createPurchasesActivities(deps),
    ...createPurchasesBookActivities(deps),
    ...createStockInActivities(deps),
    ...createStockInMappingsActivities(deps),
    ...createBacklogActivities(deps),
    ...createReconciliationActivities(deps),
    ...createAccountingActivities(deps),
    ...createOutageWatchActivities(deps),
    /** Local, so no key enters the history; an unserved business refuses new work (`business_not_served`). */
    async placeBusiness(input: PlaceBusinessInput): Promise<BudgetPlacement> {
      return deps.services.place(input.businessId, { newWork: input.newWork });
    },
    ...stockLedger,
  };
}

export type Activities = ReturnType<typeof createActivities>;

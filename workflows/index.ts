import './zod-jitless.js';
export { saleWorkflow } from './sale.js';
export { itemRegistrationWorkflow } from './item-registration.js';
export { purchasesSyncWorkflow } from './purchases-sync.js';
export { syncBatchWorkflow } from './sync-batch.js';
export { reconciliationWorkflow } from './reconciliation.js';
export { stockLedgerWorkflow } from './stock-ledger.js';
export { outageWatchWorkflow } from './outage-watch.js';

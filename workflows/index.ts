export { saleWorkflow } from './sale.js';
export { itemRegistrationWorkflow } from './item-registration.js';
export { purchasesSyncWorkflow } from './purchases-sync.js';

export { saleWorkflow } from './sale.js';
export { itemRegistrationWorkflow } from './item-registration.js';

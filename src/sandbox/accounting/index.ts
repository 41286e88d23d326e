export { buildAccountingApp, type AccountingAppOptions } from './app.js';
export { accountingErrorBody, type AccountingErrorBody } from './errors.js';
export * from './default-fixture.js';
export {
  AccountingFixtureSchema,
  type AccountingApplication,
  type AccountingFixture,
  type AccountingFixtureInput,
  type FixtureBillPayment,
  type FixtureSyncBatch,
} from './fixture.js';
export { INSPECTION_PREFIX } from './inspect.js';
export type { SyncBatchRecord } from './state.js';

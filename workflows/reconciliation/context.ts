import type { ReconciliationInput } from '../../src/contracts/reconciliation.js';
import type { ReconciliationApi } from './activities.js';
import type { ReconciliationRecord } from './record.js';

/** Everything the steps of one reconciliation share. */
export interface Reconciliation {
  input: ReconciliationInput;
  record: ReconciliationRecord;
  api: ReconciliationApi;
}

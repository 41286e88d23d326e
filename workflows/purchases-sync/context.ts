import type { PurchasesSyncInput } from '../../src/contracts/purchases-sync.js';
import type { PurchasesSyncActivities } from './activities.js';
import type { PurchasesSyncRecord } from './record.js';
import type { PurchasesSyncSettings } from './settings.js';

/** Everything the steps of one run of a sync share. */
export interface PurchasesSync {
  input: PurchasesSyncInput;
  settings: PurchasesSyncSettings;
  record: PurchasesSyncRecord;
  api: PurchasesSyncActivities;
}

import type { ItemRegistrationOutcome } from '../../src/contracts/item-registration.js';
import type { RefundRequest, RefundResult, SaleInput } from '../../src/contracts/sale.js';
import type { SaleActivities } from './activities.js';
import type { SaleRecord } from './record.js';

export interface SaleSettings {
  refundWindowMs: number;
  outcomeTimeoutMs: number;
  /** As given: passed on as text to the item-registration workflow. */
  itemFixDeadline: string;
  transientRetryLimit: number;
}

/** What the message handlers recorded for the process to act on; handlers never act themselves. */
export interface SaleInbox {
  /** Result callbacks received: each is a hint to read the document again. */
  callbackHints: number;
  registrations: Map<string, ItemRegistrationOutcome>;
  operatorRetry: boolean;
  operatorCancel: string | undefined;
  /** The refund asked for, and once the process took it, its issuing (which the update awaits). */
  refund: { request: RefundRequest; issuing?: Promise<RefundResult> } | undefined;
}

export interface SaleContext {
  input: SaleInput;
  settings: SaleSettings;
  workflowId: string;
  taskQueue: string;
  record: SaleRecord;
  inbox: SaleInbox;
  api: SaleActivities;
}

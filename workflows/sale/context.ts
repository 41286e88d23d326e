import type { ItemRegistrationOutcome } from '../../src/contracts/item-registration.js';
import type { RefundRequest, RefundResult, SaleInput } from '../../src/contracts/sale.js';
import type { SaleActivities } from './activities.js';
import type { SaleRecord } from './record.js';

/** The sale's options with their defaults applied. */
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
  /** An operator asked to re-send a stock movement. */
  stockWork: boolean;
  /** The refund asked for inside the window, and once started, its issuing (which the update awaits). */
  refund: { request: RefundRequest; issuing?: Promise<RefundResult> } | undefined;
}

/** Everything the steps of one sale share. */
export interface SaleContext {
  input: SaleInput;
  settings: SaleSettings;
  workflowId: string;
  taskQueue: string;
  record: SaleRecord;
  inbox: SaleInbox;
  api: SaleActivities;
  /** The refund window has ended: no refund is taken from then on. */
  refundWindowEnded: boolean;
  /** Started on 0.4 or later: the lean path (patches.ts, LEAN_SALE_PATH_PATCH). */
  lean: boolean;
  /** Started on 0.5 or later: every door holds (patches.ts, DOORS_HELD_PATCH). */
  doorsHeld: boolean;
  /** Signed on 0.8 or later: its stock goes through the branch's ledger (patches.ts, STOCK_LEDGER_PATCH). */
  ledger: boolean;
}

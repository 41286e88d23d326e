import type { ItemRegistrationOutcome } from '../../src/contracts/item-registration.js';
import type { RefundRequest, RefundResult, SaleInput } from '../../src/contracts/sale.js';
import type { OutageSide } from '../../src/contracts/outage-watch.js';
import type { CallRoute } from '../placement.js';
import type { CallTries, SaleActivities } from './activities.js';
import type { SaleRecord } from './record.js';

export interface SaleSettings {
  refundWindowMs: number;
  outcomeTimeoutMs: number;
  /** The sale parks when an outcome does not come within `outcomeTimeoutMs`; otherwise it waits that out. */
  outcomeTimeoutParks: boolean;
  /** As given: passed on as text to the item-registration workflow. */
  itemFixDeadline: string;
  /** A count of transient authority failures to retry before parking; undefined: as long as the outage lasts. */
  transientRetryLimit: number | undefined;
  /** How long an outage is waited out before parking; undefined: as long as it lasts. */
  outageLimitMs: number | undefined;
  /** Outages are waited out in the sale's state (the `ride-outages` patch); false in sales started before it. */
  ridesOutages: boolean;
}

/** What the message handlers recorded for the process to act on; handlers never act themselves. */
export interface SaleInbox {
  /** Result callbacks received: each is a hint to read the document again. */
  callbackHints: number;
  registrations: Map<string, ItemRegistrationOutcome>;
  operatorRetry: boolean;
  operatorCancel: string | undefined;
  /** What the application's outage watch last told this sale: probe (try once now) or over (go). */
  outageNews: 'probe' | 'over' | undefined;
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
  /** Where its compliance calls go once placed: names its application's outage watch. */
  route: CallRoute;
  tries: CallTries;
  /** The outage watch this sale waits on, and whether its next try is the watch's probe. */
  outageWatch: { side: OutageSide; probing: boolean } | undefined;
}

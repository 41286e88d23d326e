import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { parseDuration } from '../../src/contracts/duration.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { ItemRegistrationOutcome } from '../../src/contracts/item-registration.js';
import type { OutageSide } from '../../src/contracts/outage-watch.js';
import type { SaleInput, SoldLine } from '../../src/contracts/sale.js';
import { unplacedRoute, type CallRoute } from '../placement.js';
import { documentActivities } from './activities.js';
import { SaleRecord } from './record.js';

/** What a sale or a refund files for: its business, its items (checked when the authority refuses them), options. */
export interface DocumentSubject {
  businessId: string;
  /** The sale's own number: a refund's record is the sale's. */
  traderInvoiceNumber: string;
  branchId?: string | undefined;
  lines: ReadonlyArray<SoldLine>;
  options?: SaleInput['options'];
}

/** What the steps of one sale or one refund share; the steps read it, the process and the handlers change it. */
export function openDocumentProcess(kind: 'sale' | 'refund', subject: DocumentSubject) {
  const { workflowId, taskQueue } = workflowInfo();
  const tries = { one: false };
  const ctx = {
    kind,
    input: subject,
    settings: settingsOf(subject),
    workflowId,
    taskQueue,
    record: new SaleRecord(subject, kind),
    /** What the message handlers recorded for the process to act on; handlers never act themselves. */
    inbox: {
      /** Result callbacks received: each is a hint to read the document again. */
      callbackHints: 0,
      registrations: new Map<string, ItemRegistrationOutcome>(),
      operatorRetry: false,
      operatorCancel: undefined as string | undefined,
      /** Times a worker said its tenants now serve more businesses: a sale waiting for its business tries again. */
      businessServed: 0,
      /** What the application's outage watch last told this process: probe (try once now) or over (go). */
      outageNews: undefined as 'probe' | 'over' | undefined,
    },
    /** Where its compliance calls go: the shared queue until placed, then the serving application's budget. */
    route: unplacedRoute(subject.businessId) as CallRoute,
    tries,
    api: documentActivities((): CallRoute => ctx.route, tries),
    /** The outage watch this process waits on, and whether its next try is the watch's probe. */
    outageWatch: undefined as { side: OutageSide; probing: boolean } | undefined,
  };
  return ctx;
}

export type DocumentContext = ReturnType<typeof openDocumentProcess>;

function settingsOf(subject: DocumentSubject) {
  const { options } = subject;
  const outageLimit = options?.outageLimit;
  const itemFixDeadline = options?.itemFixDeadline ?? '7 days';
  // Passed on as text to the registration workflow, but a bad value should fail the process now.
  optionDuration('itemFixDeadline', itemFixDeadline);
  return {
    refundWindowMs: (options?.refundWindowDays ?? 30) * 86_400_000,
    outcomeTimeoutMs: optionDuration('outcomeTimeout', options?.outcomeTimeout ?? '24 hours'),
    // Parks when no outcome comes in time, else waits that out: a limit the caller set is theirs, the default one
    // is an outage like any other.
    outcomeTimeoutParks: options?.outcomeTimeout !== undefined,
    itemFixDeadline,
    /** Transient authority failures retried before parking; undefined: as long as the outage lasts. */
    transientRetryLimit: options?.transientRetryLimit,
    /** How long an outage is waited out before parking; undefined: as long as it lasts. */
    outageLimitMs: outageLimit === undefined ? undefined : optionDuration('outageLimit', outageLimit),
  };
}

function optionDuration(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw ApplicationFailure.nonRetryable(`options.${name}: not a duration: ${value}`, FAILURE_TYPES.invalidInput);
  return ms;
}

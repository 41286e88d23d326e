import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type {
  CheckItemsInput,
  CreateCreditNoteInput,
  CreateSaleInput,
  DocumentRef,
  FindSignedSaleInput,
  RequestItemRegistrationInput,
  SignSaleInput,
} from '../../activities/types.js';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from '../activity-options.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { CallRoute } from '../placement.js';

const compliance = proxyActivities<ActivitiesOn<'compliance'>>({
  startToCloseTimeout: '60 seconds',
  // A call heartbeats while it waits: one lost with a killed worker is sent again in seconds, not a minute.
  heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
  retry: API_RETRY,
});
// Talks to Temporal, not to a service: on the workflow's own queue.
const coordination = proxyActivities<ActivitiesOn<'workflow'>>({ startToCloseTimeout: '30 seconds', retry: API_RETRY });
// Local: one history event; the ledger and the day book take a line once, so an attempt again is harmless.
const ledger = proxyLocalActivities<Pick<Activities, 'handOverStock' | 'joinOutageWatch' | 'enterFiscalDay'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** A few tries, then the process waits out the outage; while probing an outage for the application, one try. */
const TRIES = 4;

/**
 * The calls of a sale or a refund, routed to the serving application's budget (`route`, replaced once placed). While
 * `tries.one` is set a call makes one try: a process probing an outage for the whole application sends one request.
 */
export function documentActivities(route: () => CallRoute, tries: { one: boolean }) {
  const on = (priorityKey: number, summary: string) => {
    const { complianceQueue, fairnessKey } = route();
    return {
      summary,
      taskQueue: complianceQueue,
      priority: { priorityKey, fairnessKey },
      retry: { ...API_RETRY, maximumAttempts: tries.one ? 1 : TRIES },
    };
  };
  const { signing, bookkeeping, polling } = PRIORITY;
  const document = ({ documentId }: DocumentRef) => `document ${documentId}`;
  return {
    signSale: (input: SignSaleInput) =>
      compliance.signSale.executeWithOptions(on(signing, `sale ${input.request.traderInvoiceNumber}`), [input]),
    createSale: (input: CreateSaleInput) =>
      compliance.createSale.executeWithOptions(on(signing, `sale ${input.request.traderInvoiceNumber}`), [input]),
    retrySale: (ref: DocumentRef) => compliance.retrySale.executeWithOptions(on(signing, document(ref)), [ref]),
    getDocument: (ref: DocumentRef) => compliance.getDocument.executeWithOptions(on(signing, document(ref)), [ref]),
    readSaleRecord: (ref: DocumentRef) =>
      compliance.readSaleRecord.executeWithOptions(on(bookkeeping, document(ref)), [ref]),
    /** Polling through activity retries: the history gains no events per poll. */
    awaitDocumentOutcome: (ref: DocumentRef, timeoutMs: number) =>
      compliance.awaitDocumentOutcome.executeWithOptions(
        {
          ...on(polling, document(ref)),
          scheduleToCloseTimeout: Math.max(1000, timeoutMs),
          retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
        },
        [ref],
      ),
    createCreditNote: (input: CreateCreditNoteInput) =>
      compliance.createCreditNote.executeWithOptions(
        on(signing, `credit note ${input.traderInvoiceNumber} reversing ${input.saleId}`),
        [input],
      ),
    checkItems: (input: CheckItemsInput) =>
      compliance.checkItems.executeWithOptions(on(bookkeeping, `items ${input.itemIds.join(', ')}`), [input]),
    requestItemRegistration: (input: RequestItemRegistrationInput) =>
      coordination.requestItemRegistration.executeWithOptions({ summary: `item ${input.itemId}` }, [input]),
    findSignedSale: (input: FindSignedSaleInput) =>
      coordination.findSignedSale.executeWithOptions({ summary: `sale ${input.traderInvoiceNumber}` }, [input]),
    handOverStock: ledger.handOverStock,
    joinOutageWatch: ledger.joinOutageWatch,
    enterFiscalDay: ledger.enterFiscalDay,
  };
}

export type DocumentActivities = ReturnType<typeof documentActivities>;

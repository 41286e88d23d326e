import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import type {
  CheckItemsInput,
  CreateCreditNoteInput,
  CreateSaleInput,
  RequestItemRegistrationInput,
  SignSaleInput,
} from '../../activities/types.js';
import { API_RETRY, CALL_HEARTBEAT_TIMEOUT, type ActivitiesOn } from '../activity-options.js';
import { PRIORITY } from '../../src/contracts/priority.js';
import type { CallRoute } from '../placement.js';

/**
 * `ridesOutages`: a call gives up after a few tries and the sale waits out the outage; else it tries two hours. While
 * `tries.one` is set, a call makes one try: a sale probing an outage for the whole application sends one request.
 */
export function saleActivities(
  { complianceQueue, fairnessKey }: CallRoute,
  ridesOutages: boolean,
  tries = { one: false },
) {
  const compliance = (priorityKey: number, maximumAttempts: number) =>
    proxyActivities<ActivitiesOn<'compliance'>>({
      taskQueue: complianceQueue,
      startToCloseTimeout: '60 seconds',
      // A call heartbeats while it waits: one lost with a killed worker is sent again in seconds, not a minute.
      heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
      ...(ridesOutages
        ? { retry: { ...API_RETRY, maximumAttempts } }
        : { scheduleToCloseTimeout: '2 hours', retry: API_RETRY }),
      priority: { priorityKey, fairnessKey },
    });
  const tried = (priorityKey: number) => {
    const [once, few] = [compliance(priorityKey, 1), compliance(priorityKey, 4)];
    return () => (tries.one ? once : few);
  };
  const [signing, bookkeeping] = [tried(PRIORITY.signing), tried(PRIORITY.bookkeeping)];
  // Polling through activity retries: the history gains no events per poll.
  const polling = proxyActivities<ActivitiesOn<'compliance'>>({
    taskQueue: complianceQueue,
    startToCloseTimeout: '60 seconds',
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
    priority: { priorityKey: PRIORITY.polling, fairnessKey },
  });
  // Talks to Temporal, not to a service: on the workflow's own queue.
  const coordination = proxyActivities<ActivitiesOn<'workflow'>>({
    startToCloseTimeout: '30 seconds',
    retry: API_RETRY,
  });
  // Local: one history event; the ledger takes a line once, so an attempt again after a lost answer is harmless.
  const ledger = proxyLocalActivities<Pick<Activities, 'handOverStock' | 'joinOutageWatch'>>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const document = (documentId: string) => ({ summary: `document ${documentId}` });
  return {
    signSale: (input: SignSaleInput) =>
      signing().signSale.executeWithOptions({ summary: `sale ${input.request.traderInvoiceNumber}` }, [input]),
    createSale: (input: CreateSaleInput) =>
      signing().createSale.executeWithOptions({ summary: `sale ${input.request.traderInvoiceNumber}` }, [input]),
    retrySale: (businessId: string, documentId: string) =>
      signing().retrySale.executeWithOptions(document(documentId), [{ businessId, documentId }]),
    getDocument: (businessId: string, documentId: string) =>
      signing().getDocument.executeWithOptions(document(documentId), [{ businessId, documentId }]),
    awaitDocumentOutcome: (businessId: string, documentId: string, timeoutMs: number) =>
      polling.awaitDocumentOutcome.executeWithOptions(
        { ...document(documentId), scheduleToCloseTimeout: Math.max(1000, timeoutMs) },
        [{ businessId, documentId }],
      ),
    createCreditNote: (input: CreateCreditNoteInput) =>
      signing().createCreditNote.executeWithOptions(
        { summary: `credit note ${input.traderInvoiceNumber} reversing ${input.saleId}` },
        [input],
      ),
    checkItems: (input: CheckItemsInput) =>
      bookkeeping().checkItems.executeWithOptions({ summary: `items ${input.itemIds.join(', ')}` }, [input]),
    requestItemRegistration: (input: RequestItemRegistrationInput) =>
      coordination.requestItemRegistration.executeWithOptions({ summary: `item ${input.itemId}` }, [input]),
    handOverStock: ledger.handOverStock,
    joinOutageWatch: ledger.joinOutageWatch,
  };
}

/** The day book's doors to Temporal and the sink: entries by signal-with-start, closes delivered, a till's sales. */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { queryLiteral } from '../src/client/parked-sales.js';
import {
  FISCAL_DAY_TASK_TIMEOUT,
  FISCAL_DAY_WORKFLOW_TYPE,
  DAY_ENTRIES_PER_SIGNAL,
  emptyDay,
  fiscalDayAttribute,
  fiscalDayEntryOf,
  fiscalDayEntrySignal,
  fiscalDayEventId,
  fiscalDayWorkflowId,
  type DayRecovery,
  type DayEntry,
  type FiscalDayEntries,
  type FiscalDayEvent,
  type FiscalDayInput,
  type FiscalDayKey,
  type FiscalDaySettings,
  type FiscalDaySummary,
  type TillClose,
  type TillSales,
  type UnsignedState,
} from '../src/contracts/fiscal-day.js';
import { REFUND_WORKFLOW_TYPE } from '../src/contracts/refund.js';
import { SALE_WORKFLOW_TYPE, getSaleStateQuery, saleWorkflowId, type SaleState } from '../src/contracts/sale.js';
import {
  AttentionReason,
  FiscalDay,
  FiscalStatus,
  NeedsAttention,
  TraderInvoiceNumber,
  CuInvoiceNumber,
} from '../src/contracts/search-attributes.js';
import type { EventSink } from '../src/purchases/event-sink.js';
import { mapBounded } from '../src/tenants/probes.js';
import { whileAlive } from './api-call.js';
import { temporalClientOf, type ActivityDeps } from './deps.js';

export interface FiscalDayActivityDeps extends Pick<ActivityDeps, 'temporal' | 'logger'> {
  /** The worker's event sink (PURCHASES_SINK); absent: days close and stay readable, nothing is delivered. */
  eventSink?: EventSink;
  fiscalDay: FiscalDaySettings;
}

/** Names listed per difference in a till match; the counts stay whole. */
const NAMES_LISTED = 200;
const DESCRIBED_AT_ONCE = 8;

export function createFiscalDayActivities(deps: FiscalDayActivityDeps) {
  const { logger } = deps;

  async function deliver(event: FiscalDayEvent): Promise<{ delivered: boolean }> {
    if (!deps.eventSink) {
      logger.info({ id: event.id }, 'no event sink: the day is kept readable, not delivered');
      return { delivered: false };
    }
    // A refusal is retried as an outage: a receiver set up wrong is fixed there, and the day waits for it.
    await deps.eventSink.deliver(event);
    return { delivered: true };
  }

  return {
    /** Counts signed documents in their day's book, starting the book with its first. */
    async enterFiscalDay(input: FiscalDayEntries & { taskQueue: string }): Promise<{ workflowId: string }> {
      const { taskQueue, entries, ...key } = input;
      const workflowId = fiscalDayWorkflowId(taskQueue, key);
      if (deps.fiscalDay.books === 'off') return { workflowId };
      const client = temporalClientOf(deps, 'enterFiscalDay');
      try {
        await client.workflow.signalWithStart(FISCAL_DAY_WORKFLOW_TYPE, {
          workflowId,
          taskQueue,
          args: [{ ...key, settings: deps.fiscalDay } satisfies FiscalDayInput],
          signal: fiscalDayEntrySignal,
          signalArgs: [{ ...key, entries }],
          workflowTaskTimeout: FISCAL_DAY_TASK_TIMEOUT,
          // A day whose book has ended is not started again empty: its late documents are delivered by themselves.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        const day = await endedDay(workflowId, key);
        for (const entry of entries) {
          logger.warn({ workflowId, documentId: entry.documentId }, 'a document signed for a day whose book has ended');
          await deliver({
            id: fiscalDayEventId(key, { lateDocumentId: entry.documentId }),
            type: 'fiscal_day.amended',
            businessId: key.businessId,
            day,
            amendment: { number: 0, receipts: { [entry.label]: 1 }, taxes: entry.taxes },
          });
        }
      }
      return { workflowId };
    },

    /**
     * Finds the day's signed documents the book has not counted, from evidence: visibility counts the day's signed
     * sales and credit notes, and only when it finds more than the book counted is each sale read and sent to the
     * book again (it counts a document once). A sale's entry is sent after its till's answer, so one may be lost with
     * its process; a credit note enters the book before its workflow closes.
     */
    async recoverFiscalDay(input: FiscalDayKey & { taskQueue: string; counted: number }): Promise<DayRecovery> {
      const { taskQueue, counted, ...key } = input;
      const client = temporalClientOf(deps, 'recoverFiscalDay');
      const query =
        `WorkflowType IN ('${SALE_WORKFLOW_TYPE}', '${REFUND_WORKFLOW_TYPE}') AND ` +
        `TaskQueue = ${queryLiteral('day book', 'taskQueue', taskQueue)} AND ` +
        `BusinessId = ${queryLiteral('day book', 'businessId', key.businessId)} AND ` +
        `FiscalDay = ${queryLiteral('day book', 'scuId', fiscalDayAttribute(key))}`;
      const { count: signed } = await client.workflow.count(query);
      if (signed <= counted) return { signed, sent: 0 };
      // A busy day's sales take minutes to read: alive all along, so one lost with its worker is retried soon.
      return whileAlive(() => resend(client, query, input, signed));
    },

    async deliverFiscalDay({ event }: { event: FiscalDayEvent }): Promise<{ delivered: boolean }> {
      return deliver(event);
    },

    /** The till's invoice numbers against the day's signed sales in Temporal's records, and where each other stands. */
    async findTillSales(input: TillClose & { taskQueue: string }): Promise<TillSales> {
      const none = { notSigned: [], notOnTill: [], listedAtMost: NAMES_LISTED, notSignedCount: 0, notOnTillCount: 0 };
      if (input.invoiceNumbers === undefined) return none;
      const client = temporalClientOf(deps, 'findTillSales');
      const attribute = fiscalDayAttribute(input);
      const query =
        `WorkflowType = '${SALE_WORKFLOW_TYPE}' AND ` +
        `TaskQueue = ${queryLiteral('till close', 'taskQueue', input.taskQueue)} AND ` +
        `BusinessId = ${queryLiteral('till close', 'businessId', input.businessId)} AND ` +
        `FiscalDay = ${queryLiteral('till close', 'scuId', attribute)}`;
      const signed = new Map<string, string | null>();
      for await (const execution of client.workflow.list({ query })) {
        const number = execution.typedSearchAttributes.get(TraderInvoiceNumber);
        if (number !== undefined) signed.set(number, execution.typedSearchAttributes.get(CuInvoiceNumber) ?? null);
      }
      const till = new Set(input.invoiceNumbers);
      const unseen = [...till].filter((number) => !signed.has(number));
      // Visibility lags: a sale signed a moment ago is read where it is, and counts as signed if it is.
      const states = await mapBounded(unseen, DESCRIBED_AT_ONCE, async (number) => ({
        number,
        ...(await saleStanding(number)),
      }));
      const notSigned = states.filter((s) => s.state !== undefined);
      const notOnTill = [...signed].filter(([number]) => !till.has(number));
      return {
        notSigned: notSigned
          .slice(0, NAMES_LISTED)
          .map(({ number, state, detail }) => ({ traderInvoiceNumber: number, state: state!, detail })),
        notOnTill: notOnTill
          .slice(0, NAMES_LISTED)
          .map(([number, cuInvoiceNo]) => ({ traderInvoiceNumber: number, cuInvoiceNo, label: 'NS' })),
        listedAtMost: NAMES_LISTED,
        notSignedCount: notSigned.length,
        notOnTillCount: notOnTill.length,
      };

      /** Undefined state: signed on this very day after all. */
      async function saleStanding(number: string): Promise<{ state: UnsignedState | undefined; detail: string }> {
        try {
          const described = await client.workflow.getHandle(saleWorkflowId(input.businessId, number)).describe();
          const attributes = described.typedSearchAttributes;
          const day = attributes.get(FiscalDay);
          const status = attributes.get(FiscalStatus) ?? '';
          if (day === attribute) return { state: undefined, detail: '' };
          if (day !== undefined) return { state: 'signed_another_day', detail: `signed on ${day}` };
          if (described.status.name !== 'RUNNING') return { state: 'ended', detail: status || described.status.name };
          if (attributes.get(NeedsAttention))
            return { state: 'waiting_for_a_person', detail: attributes.get(AttentionReason) ?? '' };
          return { state: 'on_its_way', detail: status };
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return { state: 'never_started', detail: '' };
          throw err;
        }
      }
    },
  };

  /** Each of the day's sales read from its record and entered in the book again. */
  async function resend(
    client: Client,
    query: string,
    { taskQueue, counted, ...key }: FiscalDayKey & { taskQueue: string; counted: number },
    signed: number,
  ): Promise<DayRecovery> {
    const book = client.workflow.getHandle(fiscalDayWorkflowId(taskQueue, key));
    let sent = 0;
    const found: DayEntry[] = [];
    const flush = async () => {
      await book.signal(fiscalDayEntrySignal, { ...key, entries: found.splice(0) });
    };
    for await (const execution of client.workflow.list({
      query: `${query} AND WorkflowType = '${SALE_WORKFLOW_TYPE}'`,
    })) {
      const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
      const state = await (
        execution.status.name === 'COMPLETED'
          ? (handle.result() as Promise<SaleState>)
          : handle.query(getSaleStateQuery)
      ).catch((err: unknown) => {
        // A sale still running on a build that no worker serves cannot answer: the look before the book ends will.
        logger.warn({ err, workflowId: execution.workflowId }, "a sale of the day's book could not be read");
        return undefined;
      });
      if (!state) continue;
      const day =
        state.sale && fiscalDayEntryOf(key.businessId, state.sale, (execution.closeTime ?? new Date()).getTime());
      if (!day || fiscalDayAttribute(day) !== fiscalDayAttribute(key)) continue;
      found.push(day.entry);
      sent++;
      if (found.length === DAY_ENTRIES_PER_SIGNAL) await flush();
    }
    if (found.length > 0) await flush();
    logger.warn({ workflowId: book.workflowId, signed, counted, sent }, "the day's sales read again for its book");
    return { signed, sent };
  }

  /** The ended book's result; past the namespace's retention, the day's key alone. */
  async function endedDay(workflowId: string, key: FiscalDayKey): Promise<FiscalDaySummary> {
    const client = temporalClientOf(deps, 'enterFiscalDay');
    try {
      return (await client.workflow.getHandle(workflowId).result()) as FiscalDaySummary;
    } catch {
      return { ...emptyDay(key, ''), status: 'closed' };
    }
  }
}

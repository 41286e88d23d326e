import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { parseDuration } from '../src/contracts/duration.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  FISCAL_DAY_TASK_TIMEOUT,
  closeFiscalDayUpdate,
  dayEndMs,
  fiscalDayAttribute,
  fiscalDayEntrySignal,
  fiscalDayEventId,
  fiscalDaySchemas,
  getFiscalDayQuery,
  matchTillCloseUpdate,
  type FiscalDayEvent,
  type FiscalDayInput,
  type FiscalDaySummary,
  type TillClose,
  type TillMatch,
} from '../src/contracts/fiscal-day.js';
import { BusinessId, FiscalDay } from '../src/contracts/search-attributes.js';
import { API_RETRY, type ActivitiesOn } from './activity-options.js';
import { DayBook } from './fiscal-day/book.js';
import { compareTill, dayTable } from './fiscal-day/figures.js';
import { count } from './metrics.js';
import { required } from './update-arguments.js';

// Temporal and the sink, not a service: a sink that is down is retried until it answers, nobody is asked.
const { deliverFiscalDay, findTillSales } = proxyActivities<ActivitiesOn<'workflow'>>({
  startToCloseTimeout: '2 minutes',
  retry: API_RETRY,
});
// Reading a busy day's sales again takes minutes; its heartbeat tells a lost worker from a long read.
const { recoverFiscalDay } = proxyActivities<ActivitiesOn<'workflow'>>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: API_RETRY,
});

/** Late documents that come together (an outage's backlog) go in one amendment. */
const AMENDMENT_GATHER_MS = 60_000;
/** Past this many events a run hands its book to the next (continue-as-new): a busy day is many runs. */
const HISTORY_EVENTS_PER_RUN = 4_000;
/** A quiet book looks this often whether another build is current, as the stock ledger does. */
const VERSION_CHECK_MS = 5 * 60_000;

/**
 * The day book of one control unit and day (docs/fiscal-day.md): counts every signed document once, closes after the
 * Nairobi day ends and its grace, delivers the summary, then delivers what comes late as amendments.
 */
export async function fiscalDayWorkflow(input: FiscalDayInput): Promise<FiscalDaySummary> {
  const graceMs = durationOf('grace', input.settings.grace);
  const keepOpenMs = durationOf('keepOpen', input.settings.keepOpen);
  const aheadMs = input.settings.clockAhead === undefined ? 0 : durationOf('clockAhead', input.settings.clockAhead);
  const book = new DayBook(input, new Date(dayEndMs(input.date) + graceMs - aheadMs).toISOString());
  let closeAsked = false;
  let lastMatch: TillMatch | undefined;
  let changed = true;
  const show = () => (changed = true);
  // The UI's details are written once per workflow task, however many entries it brings (a backlog's burst).
  void (async () => {
    for (;;) {
      await condition(() => changed);
      changed = false;
      setCurrentDetails(dayTable(book.summary, lastMatch));
    }
  })();

  setHandler(fiscalDayEntrySignal, ({ entries }) => {
    const taken = entries.filter((entry) => book.take(entry));
    if (taken.length > 0) show();
  });
  setHandler(getFiscalDayQuery, () => book.summary);
  setHandler(closeFiscalDayUpdate, async () => {
    closeAsked = true;
    await condition(() => book.closed);
    return book.summary;
  });
  setHandler(
    matchTillCloseUpdate,
    async (till: TillClose) => {
      const found = await findTillSales({ ...till, taskQueue: workflowInfo().taskQueue });
      lastMatch = compareTill(book.summary, till, found);
      if (!lastMatch.matched) count('etims_fiscal_day_till_differences', {});
      show();
      return lastMatch;
    },
    {
      validator: (argument) => {
        const till = required('matchTillClose', 'a till close (docs/schemas)', fiscalDaySchemas().tillClose, argument);
        const day = `${input.businessId} ${input.scuId} ${input.date}`;
        if (`${till.businessId} ${till.scuId} ${till.date}` !== day)
          throw ApplicationFailure.nonRetryable(`this is the day book of ${day}`, FAILURE_TYPES.invalidOperation);
      },
    },
  );
  if (!input.carried)
    upsertSearchAttributes([
      { key: BusinessId, value: input.businessId },
      { key: FiscalDay, value: fiscalDayAttribute(input) },
    ]);
  // Pinned to the build it started on; once another is current, the next run goes there with the book.
  const movedOn = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  const full = () =>
    workflowInfo().historyLength >= HISTORY_EVENTS_PER_RUN || workflowInfo().continueAsNewSuggested || movedOn();
  let lookedBeforeEnd = false;
  const closesAt = Date.parse(book.summary.closesAt);
  const endsAt = closesAt + keepOpenMs;
  for (;;) {
    // Closed before a run ends, so that an operator's close is never left waiting for the next one.
    if (!book.closed && (closeAsked || Date.now() >= closesAt)) {
      await lookAtTheEvidence();
      book.close(new Date().toISOString());
      show();
      count('etims_fiscal_day_closes', { unaccounted: book.missing() > 0 ? 'yes' : 'no' });
      await deliver({ id: fiscalDayEventId(input), type: 'fiscal_day.closed', businessId: input.businessId });
      continue;
    }
    if (full()) break;
    if (book.amendmentWaiting) {
      await sleep(AMENDMENT_GATHER_MS);
      const amendment = book.takeAmendment()!;
      count('etims_fiscal_day_amendments', {});
      show();
      await deliver({
        id: fiscalDayEventId(input, amendment.number),
        type: 'fiscal_day.amended',
        businessId: input.businessId,
        amendment,
      });
      continue;
    }
    if (book.closed && Date.now() >= endsAt) {
      // A sale's entry lost after the close is found before the book ends, and delivered as an amendment.
      if (lookedBeforeEnd) break;
      lookedBeforeEnd = true;
      await lookAtTheEvidence();
      continue;
    }
    // The flag of another build comes only with a workflow task: a quiet book looks now and then.
    const next = (book.closed ? endsAt : closesAt) - Date.now();
    const woken = () => (closeAsked && !book.closed) || book.amendmentWaiting || full();
    await condition(woken, Math.max(1, Math.min(next, VERSION_CHECK_MS)));
  }
  await condition(allHandlersFinished);
  if (full() || book.amendmentWaiting || !book.closed || Date.now() < endsAt)
    return makeContinueAsNewFunc<typeof fiscalDayWorkflow>({
      workflowTaskTimeout: FISCAL_DAY_TASK_TIMEOUT,
      ...(movedOn() ? { initialVersioningBehavior: 'AUTO_UPGRADE' as const } : {}),
    })({ ...input, carried: book.carry() });
  return book.summary;

  /** Sales whose entries were lost come in again as signals before this returns: the book counts each once. */
  async function lookAtTheEvidence(): Promise<void> {
    const counted = Object.values(book.summary.receipts).reduce((sum, n) => sum + n, 0);
    const { businessId, scuId, date } = input;
    await recoverFiscalDay({ businessId, scuId, date, taskQueue: workflowInfo().taskQueue, counted });
  }

  async function deliver(event: Omit<FiscalDayEvent, 'day'>): Promise<void> {
    await deliverFiscalDay({ event: { ...event, day: book.summary } });
  }
}

function durationOf(name: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw ApplicationFailure.nonRetryable(`settings.${name}: not a duration: ${text}`, FAILURE_TYPES.invalidInput);
  return ms;
}

import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  workflowInfo,
} from '@temporalio/workflow';
import { parseDuration } from '../../src/contracts/duration.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { ItemRegistrationOutcome } from '../../src/contracts/item-registration.js';
import { fiscalDayEntryOf } from '../../src/contracts/fiscal-day.js';
import { DEFAULT_REFUND_WINDOW_DAYS } from '../../src/contracts/refund.js';
import type { FiscalDocument, SaleInput, SoldLine, StockMovementState } from '../../src/contracts/sale.js';
import type { StockLine } from '../../src/contracts/stock-ledger.js';
import { unplacedRoute, type CallRoute } from '../placement.js';
import { documentActivities, type DocumentActivities } from './activities.js';
import { OutageRide } from './outage.js';
import { SaleRecord } from './record.js';

/** What a sale or a refund files for; a refund's `traderInvoiceNumber` is its sale's. */
export interface DocumentSubject {
  businessId: string;
  traderInvoiceNumber: string;
  branchId?: string | undefined;
  lines: ReadonlyArray<SoldLine>;
  options?: SaleInput['options'];
}

export function applicationFailure(err: unknown): ApplicationFailure | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  return failure instanceof ApplicationFailure ? failure : undefined;
}

/** An operator cancelled the parked sale: unwinds the process to its end. */
export class OperatorCancelled extends Error {}

export function movement(
  referenceId: string,
  { itemId, action, quantity, unitPrice }: Pick<StockMovementState, 'itemId' | 'action' | 'quantity' | 'unitPrice'>,
): StockMovementState {
  return { referenceId, itemId, action, quantity, unitPrice, status: 'pending' };
}

/**
 * One sale or one refund on its way to a signed document, with the steps every fiscal document takes: a call that
 * rides out outages and parks on a refusal, items registered, stock handed to the branch's ledger.
 */
export class DocumentProcess<S extends DocumentSubject = DocumentSubject> {
  readonly workflowId = workflowInfo().workflowId;
  readonly taskQueue = workflowInfo().taskQueue;
  /** The same on every attempt, by any worker: a filing's callback URL and the process's place in an outage's queue. */
  readonly startedMs = workflowInfo().startTime.getTime();
  readonly settings: Settings;
  readonly record: SaleRecord;
  /** What the message handlers recorded for the process to act on; handlers never act themselves. */
  readonly inbox = {
    /** Each result callback is a hint to read the document again. */
    callbackHints: 0,
    registrations: new Map<string, ItemRegistrationOutcome>(),
    operatorRetry: false,
    operatorCancel: undefined as string | undefined,
    businessServed: 0,
  };
  /** Where its compliance calls go: the shared queue until placed, then the serving application's budget. */
  route: CallRoute;
  readonly outage: OutageRide;
  readonly api: DocumentActivities;

  constructor(
    readonly kind: 'sale' | 'refund',
    /** A refund's lines and branch are its sale's, known once it has found the sale. */
    public subject: S,
  ) {
    this.settings = settingsOf(subject.options);
    this.record = new SaleRecord(subject, kind);
    this.route = unplacedRoute(subject.businessId);
    this.outage = new OutageRide(this);
    this.api = documentActivities(() => this.route, this.outage.tries);
  }

  get businessId(): string {
    return this.subject.businessId;
  }

  /** The workflow closes only once every update it accepted is answered. */
  protected handlersFinished(): Promise<void> {
    return condition(allHandlersFinished);
  }

  /** The one way a step calls the service: an outage is waited out, a final refusal parks for an operator. */
  call<T>(call: () => Promise<T>): Promise<T> {
    return this.parkOnRefusal(() => this.outage.ride(call));
  }

  /** Parks until an operator asks for a retry (returns) or cancels a sale not yet signed (throws OperatorCancelled). */
  async awaitOperator(code: string, message: string): Promise<void> {
    const { record, inbox } = this;
    inbox.operatorRetry = false;
    inbox.operatorCancel = undefined;
    record.park(code, message, record.cancellable ? ['retry', 'cancel'] : ['retry']);
    await condition(() => inbox.operatorRetry || inbox.operatorCancel !== undefined);
    if (inbox.operatorCancel !== undefined) throw new OperatorCancelled(inbox.operatorCancel);
    record.note('operator asked for a retry');
    record.unpark();
    // The retry update answers once unparked: its state then says the process is moving on.
    record.enter('retrying');
  }

  /** A refusal the worker cannot fix parks for an operator; a second credit note is the service's to refuse. */
  async parkOnRefusal<T>(call: () => Promise<T>, asksNoService = false): Promise<T> {
    for (;;) {
      try {
        return await call();
      } catch (err) {
        // A local activity's failure (asksNoService: placement) reaches the workflow as the activity's own error.
        const failure = err instanceof ActivityFailure || asksNoService ? applicationFailure(err) : undefined;
        if (!failure?.nonRetryable || failure.type === FAILURE_TYPES.alreadyCredited) throw err;
        await this.awaitOperator(failure.type ?? 'error', failure.message);
      }
    }
  }

  itemIds(): string[] {
    return [...new Set(this.subject.lines.map((l) => l.itemId))];
  }

  /** The items a fresh read shows unregistered: no cause code names a missing item, so the list decides. */
  async unregisteredItems(): Promise<string[]> {
    const check = await this.call(() =>
      this.api.checkItems({ businessId: this.businessId, itemIds: this.itemIds(), fresh: true }),
    );
    return check.items.filter((i) => !i.registered).map((i) => i.itemId);
  }

  /** Each item's registration workflow tells this process; an item needing a fix parks it, one never fixed fails it. */
  async registerItems(itemIds: string[]): Promise<void> {
    if (itemIds.length === 0) return;
    const { subject, record, inbox, api } = this;
    for (const itemId of itemIds) {
      inbox.registrations.delete(itemId);
      await api.requestItemRegistration({
        businessId: subject.businessId,
        itemId,
        waiterWorkflowId: this.workflowId,
        taskQueue: this.taskQueue,
        fixDeadline: this.settings.itemFixDeadline,
        ...(subject.branchId ? { branchId: subject.branchId } : {}),
      });
    }
    record.note(`registering ${itemIds.join(', ')}`);
    for (;;) {
      await condition(() => itemIds.every((id) => inbox.registrations.has(id)));
      const outcomes = itemIds.map((id) => inbox.registrations.get(id)!);
      const failed = outcomes.filter((o) => o.status === 'failed').map((o) => o.itemId);
      if (failed.length > 0) {
        record.failed(FAILURE_TYPES.itemRegistrationFailed);
        throw ApplicationFailure.nonRetryable(
          `items were not fixed in time: ${failed.join(', ')}`,
          FAILURE_TYPES.itemRegistrationFailed,
        );
      }
      const waiting = outcomes.filter((o) => o.status === 'needs_fixing').map((o) => o.itemId);
      if (waiting.length === 0) break;
      record.park(
        'item_needs_fixing',
        `the service says these items still need something: ${waiting.join(', ')}`,
        ['itemFixed'],
        waiting,
      );
      // Only a newer outcome for a waiting item moves on: the registration workflow tries again once fixed.
      for (const id of waiting) inbox.registrations.delete(id);
    }
    record.unpark();
  }

  /** The process closes once the lines are handed over: the ledger tells nobody after. */
  stockLines(movements: readonly StockMovementState[]): StockLine[] {
    return movements.map((m) => ({
      lineId: m.referenceId,
      saleWorkflowId: this.workflowId,
      itemId: m.itemId,
      action: m.action,
      quantity: m.quantity,
      unitPrice: m.unitPrice,
    }));
  }

  /** Undefined receipt values (no control unit) are counted in no day's book. */
  async enterDayBook(document: FiscalDocument): Promise<void> {
    const entry = fiscalDayEntryOf(this.businessId, document, Date.now(), this.subject.branchId);
    if (!entry) return;
    const { entry: counted, ...day } = entry;
    await this.api.enterFiscalDay({ ...day, entries: [counted], taskQueue: this.taskQueue });
  }

  /** To the branch's stock ledger, unless `ledgerWorkflowId` already took them (the signing activity hands over). */
  async handOverStock(movements: StockMovementState[], ledgerWorkflowId?: string): Promise<void> {
    if (movements.length === 0) return;
    const { subject } = this;
    ledgerWorkflowId ??= (
      await this.api.handOverStock({
        businessId: subject.businessId,
        ...(subject.branchId ? { branchId: subject.branchId } : {}),
        lines: this.stockLines(movements),
        taskQueue: this.taskQueue,
      })
    ).ledgerWorkflowId;
    for (const m of movements) {
      m.status = 'handed_over';
      m.ledger = ledgerWorkflowId;
    }
  }
}

type Settings = ReturnType<typeof settingsOf>;

/** The options with their defaults; the sale's input check let through only durations `parseDuration` reads. */
function settingsOf(options: SaleInput['options']) {
  const { outageLimit, outcomeTimeout = '24 hours', itemFixDeadline = '7 days', transientRetryLimit } = options ?? {};
  return {
    refundWindowMs: (options?.refundWindowDays ?? DEFAULT_REFUND_WINDOW_DAYS) * 86_400_000,
    outcomeTimeout,
    outcomeTimeoutMs: parseDuration(outcomeTimeout)!,
    // A limit the caller set parks when no outcome comes in time; the default one is waited out like any outage.
    outcomeTimeoutParks: options?.outcomeTimeout !== undefined,
    itemFixDeadline,
    /** Transient authority failures retried before parking; undefined: as long as the outage lasts. */
    transientRetryLimit,
    /** How long an outage is waited out before parking, as given and in ms; undefined: as long as it lasts. */
    outageLimit: outageLimit === undefined ? undefined : { text: outageLimit, ms: parseDuration(outageLimit)! },
  };
}

import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { parseDuration } from './duration.js';
import type { Activities } from '../activities/index.js';
import type { AuthorityCause, SubmissionResult } from '../activities/types.js';
import {
  CREDIT_NOTE_REASONS,
  CuInvoiceNumber,
  FiscalStatus,
  NON_RESTOCKING_REASONS,
  NeedsAttention,
  callbackReceivedSignal,
  complianceTaskQueue,
  cancelUpdate,
  confirmStockMovementUpdate,
  getSaleStateQuery,
  itemFixedSignal,
  itemFixedUpdate,
  itemRegistrationSettledSignal,
  itemRegistrationWorkflowId,
  refundUpdate,
  resendStockMovementUpdate,
  retryUpdate,
  type FiscalDocument,
  type ItemRegistrationOutcome,
  type ParkedAction,
  type RefundRequest,
  type SaleInput,
  type SaleState,
  type StockMovementState,
} from './definitions.js';
import { creditNoteIdempotencyKey, saleIdempotencyKey, stockReferenceId } from './keys.js';

const API_RETRY = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;

/** The activity proxies of one sale; the compliance queue is derived from the sale's own queue. */
function activitiesFor(saleTaskQueue: string) {
  const taskQueue = complianceTaskQueue(saleTaskQueue);
  const api = (priorityKey: number) =>
    proxyActivities<Activities>({ taskQueue, startToCloseTimeout: '60 seconds', scheduleToCloseTimeout: '2 hours', retry: API_RETRY, priority: { priorityKey } });
  return {
    /** Sales and credit notes go first when the rate budget is contended. */
    signing: api(1),
    /** Catalogue and stock calls, behind signing. */
    bookkeeping: api(3),
    /** Runs on the sale's own queue: it talks to Temporal, not to the compliance service. */
    coordination: proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: API_RETRY }),
    /** Polling through activity retries: the history gains no events per poll. */
    poller: (timeoutMs: number) =>
      proxyActivities<Activities>({
        taskQueue,
        startToCloseTimeout: '60 seconds',
        scheduleToCloseTimeout: Math.max(1000, timeoutMs),
        retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
        priority: { priorityKey: 2 },
      }),
  };
}

const IN_FLIGHT = new Set(['pending', 'ready_to_submit', 'retrying']);
const TRANSIENT_CAUSES = new Set(['authority_unavailable']);

class OperatorCancelled extends Error {}

/**
 * One sale from start to signed receipt, stock report and refund window. Every fiscal write carries a key
 * derived from business identity, the outcome is always confirmed by reading the document, and anything the
 * worker cannot fix parks with a reason an operator can act on.
 */
export async function saleWorkflow(input: SaleInput): Promise<SaleState> {
  const options = {
    refundWindowMs: (input.options?.refundWindowDays ?? 30) * 86_400_000,
    outcomeTimeoutMs: optionDuration('outcomeTimeout', input.options?.outcomeTimeout ?? '24 hours'),
    itemFixDeadline: input.options?.itemFixDeadline ?? '7 days',
    transientRetryLimit: input.options?.transientRetryLimit ?? 5,
  };
  // Passed on as text to the registration workflow, but a bad value should fail the sale now.
  optionDuration('itemFixDeadline', options.itemFixDeadline);
  const { workflowId, taskQueue } = workflowInfo();
  const { signing, bookkeeping, coordination, poller } = activitiesFor(taskQueue);
  const saleKey = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
  const state: SaleState = {
    step: 'registering_items',
    businessId: input.businessId,
    traderInvoiceNumber: input.traderInvoiceNumber,
    sale: null,
    creditNote: null,
    parked: null,
    stockMovements: [],
    apiCalls: 0,
    submissions: 0,
    refundDeadline: null,
    history: [],
  };

  // ---- messages: handlers only record; the process below acts --------------------------------------------
  let callbackHints = 0;
  const registrations = new Map<string, ItemRegistrationOutcome>();
  let operatorRetry = false;
  let operatorCancel: string | undefined;
  let stockWork = false;
  let refund: { request: RefundRequest; done: boolean } | undefined;

  const note = (event: string) => state.history.push({ at: new Date().toISOString(), event });
  const count = (calls: number) => (state.apiCalls += calls);
  const parkedWith = (action: ParkedAction) => state.parked?.actions.includes(action) ?? false;
  const movement = (referenceId: string) => state.stockMovements.find((m) => m.referenceId === referenceId);

  setHandler(getSaleStateQuery, () => state);
  setHandler(callbackReceivedSignal, () => {
    callbackHints++;
  });
  setHandler(itemRegistrationSettledSignal, (outcome) => {
    registrations.set(outcome.itemId, outcome);
  });
  setHandler(
    retryUpdate,
    () => {
      operatorRetry = true;
      return state;
    },
    { validator: () => assertAllowed(parkedWith('retry'), 'retry is possible only while the sale is parked for a retryable reason') },
  );
  setHandler(
    cancelUpdate,
    ({ reason }) => {
      operatorCancel = reason || 'cancelled by an operator';
      return state;
    },
    {
      validator: ({ reason }) => {
        assertAllowed(parkedWith('cancel'), 'cancel is possible only while the sale is parked and unsigned');
        assertAllowed(typeof reason === 'string' && reason.trim().length > 0, 'a cancel needs a reason');
      },
    },
  );
  setHandler(
    itemFixedUpdate,
    async ({ itemId }) => {
      try {
        await getExternalWorkflowHandle(itemRegistrationWorkflowId(input.businessId, itemId)).signal(itemFixedSignal);
      } catch (err) {
        throw ApplicationFailure.nonRetryable(`could not reach the registration of item ${itemId}: ${String(err)}`, 'invalid_operation');
      }
      note(`operator reported item ${itemId} fixed`);
      return state;
    },
    {
      validator: ({ itemId }) =>
        assertAllowed(parkedWith('itemFixed') && (state.parked?.itemIds ?? []).includes(itemId), `item ${itemId} is not waiting for a fix`),
    },
  );
  setHandler(
    confirmStockMovementUpdate,
    ({ referenceId }) => {
      const m = movement(referenceId)!;
      m.status = 'confirmed';
      delete m.problem;
      note(`operator confirmed stock movement ${referenceId}`);
      refreshAttention();
      return state;
    },
    { validator: ({ referenceId }) => assertAllowed(movement(referenceId)?.status === 'needs_confirmation', `stock movement ${referenceId} is not waiting for confirmation`) },
  );
  setHandler(
    resendStockMovementUpdate,
    ({ referenceId }) => {
      const m = movement(referenceId)!;
      m.status = 'pending';
      delete m.problem;
      stockWork = true;
      note(`operator asked to re-send stock movement ${referenceId}`);
      return state;
    },
    { validator: ({ referenceId }) => assertAllowed(movement(referenceId)?.status === 'needs_confirmation', `stock movement ${referenceId} is not waiting for confirmation`) },
  );
  setHandler(
    refundUpdate,
    async (request) => {
      refund = { request, done: false };
      try {
        return await issueCreditNote(request);
      } finally {
        refund.done = true;
      }
    },
    { validator: (request) => validateRefund(request) },
  );

  // ---- the process -----------------------------------------------------------------------------------------
  try {
    const stockTracked = await ensureItemsRegistered(input.lines.map((l) => l.itemId));
    state.step = 'creating_sale';
    const sale = await settle(
      () => signing.createSale({ businessId: input.businessId, workflowId, request: saleRequest(input), idempotencyKey: saleKey }),
      'sale',
    );
    state.sale = sale;
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'signed' },
      { key: CuInvoiceNumber, value: sale.receipt?.cuInvoiceNo ?? '' },
    ]);
    note(`signed as ${sale.receipt?.cuInvoiceNo ?? '?'}`);

    state.step = 'reporting_stock';
    state.stockMovements = input.lines.flatMap((line, index) =>
      stockTracked.has(line.itemId)
        ? [newMovement(stockReferenceId(saleKey, index, 'DEDUCT'), line.itemId, 'DEDUCT', line.quantity, line.unitPrice)]
        : [],
    );
    await reportPendingStock();

    state.step = 'refund_window';
    const deadline = Date.now() + options.refundWindowMs;
    state.refundDeadline = new Date(deadline).toISOString();
    for (;;) {
      const remaining = deadline - Date.now();
      if (refund === undefined && remaining <= 0) break;
      await condition(() => stockWork || refund !== undefined, Math.max(remaining, 1));
      if (stockWork) await reportPendingStock();
      if (refund) {
        await condition(() => refund!.done);
        break;
      }
    }
    state.refundDeadline = null;
    // Close only once every stock movement is settled; an operator's re-send is still acted on.
    state.step = 'reporting_stock';
    for (;;) {
      await condition(() => stockWork || state.stockMovements.every((m) => m.status !== 'needs_confirmation'));
      if (!stockWork) break;
      await reportPendingStock();
    }
    state.step = 'completed';
    note(state.creditNote ? 'refunded; closed' : 'refund window ended; closed');
  } catch (err) {
    if (!(err instanceof OperatorCancelled)) throw err;
    state.step = 'cancelled';
    state.parked = null;
    upsertSearchAttributes([
      { key: FiscalStatus, value: 'cancelled' },
      { key: NeedsAttention, value: false },
    ]);
    note(`cancelled: ${err.message}`);
  }
  await condition(allHandlersFinished);
  return state;

  // ---- steps -----------------------------------------------------------------------------------------------

  /** Registers what is missing through one registration workflow per item; returns the stock-tracked items. */
  async function ensureItemsRegistered(itemIds: string[]): Promise<Set<string>> {
    state.step = 'registering_items';
    const unique = [...new Set(itemIds)];
    const check = await parkOnRefusal(() => bookkeeping.checkItems({ businessId: input.businessId, itemIds: unique }), true);
    count(check.apiCalls);
    const missing = check.items.filter((i) => !i.registered).map((i) => i.itemId);
    await registerItems(missing);
    return new Set(check.items.filter((i) => i.stockTracked).map((i) => i.itemId));
  }

  async function registerItems(itemIds: string[]): Promise<void> {
    if (itemIds.length === 0) return;
    for (const itemId of itemIds) {
      registrations.delete(itemId);
      await coordination.requestItemRegistration({
        businessId: input.businessId,
        itemId,
        waiterWorkflowId: workflowId,
        taskQueue,
        fixDeadline: options.itemFixDeadline,
        ...(input.branchId ? { branchId: input.branchId } : {}),
      });
    }
    note(`registering ${itemIds.join(', ')}`);
    for (;;) {
      await condition(() => itemIds.every((id) => registrations.has(id)));
      const outcomes = itemIds.map((id) => registrations.get(id)!);
      const failed = outcomes.filter((o) => o.status === 'failed');
      if (failed.length > 0) {
        state.step = 'failed';
        upsertSearchAttributes([
          { key: FiscalStatus, value: 'failed' },
          { key: NeedsAttention, value: true },
        ]);
        throw ApplicationFailure.nonRetryable(
          `items were not fixed in time: ${failed.map((o) => o.itemId).join(', ')}`,
          'item_registration_failed',
        );
      }
      const waiting = outcomes.filter((o) => o.status === 'needs_fixing').map((o) => o.itemId);
      if (waiting.length === 0) break;
      setParked('item_needs_fixing', `the service says these items still need something: ${waiting.join(', ')}`, ['itemFixed'], waiting);
      // Only a newer outcome for a waiting item moves on: the registration workflow tries again once fixed.
      for (const id of waiting) registrations.delete(id);
    }
    unpark();
  }

  /**
   * Drives one fiscal document to a signed receipt: confirms in-flight outcomes, registers missing items
   * and resubmits, retries transient rejections with backoff, and parks everything else for an operator.
   */
  async function settle(submit: () => Promise<SubmissionResult>, kind: 'sale' | 'credit note'): Promise<FiscalDocument> {
    const cancellable = kind === 'sale';
    /** One submission; a refusal the worker cannot fix (bad request, missing scope) parks until an operator acts. */
    const send = (call: () => Promise<SubmissionResult>) =>
      parkOnRefusal(() => {
        if (kind === 'sale') state.submissions++;
        return call();
      }, cancellable);
    const resubmit = (documentId: string) => send(() => signing.retrySale({ businessId: input.businessId, documentId }));
    let result = await send(submit);
    let transientRetries = 0;
    for (;;) {
      count(result.apiCalls);
      let document = result.document;
      track(kind, document);
      if (result.outcome === 'in_flight' || IN_FLIGHT.has(document.status)) {
        state.step = 'awaiting_outcome';
        const settled = await awaitOutcome(document.id);
        if ('problem' in settled) {
          await parkUntilOperator(settled.problem.code, settled.problem.message, cancellable);
          result = await confirmOrResubmit(document.id, resubmit);
          continue;
        }
        document = settled;
        track(kind, document);
      }
      if (document.status === 'completed') {
        unpark();
        return document;
      }
      // Rejected, or failed while in flight: the read shows no cause then, so it counts as transient.
      const causes: AuthorityCause[] = result.outcome === 'rejected' ? result.causes : [];
      const unregistered = causes.filter((c) => c.code === 'item_not_registered' && c.itemId).map((c) => c.itemId!);
      if (unregistered.length > 0) {
        await registerItems([...new Set(unregistered)]);
        state.step = 'retrying';
        result = await resubmit(document.id);
        continue;
      }
      const transient = causes.length === 0 || causes.every((c) => TRANSIENT_CAUSES.has(c.code));
      if (transient && transientRetries < options.transientRetryLimit) {
        transientRetries++;
        state.step = 'retrying';
        await sleep(Math.min(2 ** transientRetries, 300) * 1000);
        result = await resubmit(document.id);
        continue;
      }
      // A document that failed in flight carries only its error text: no cause code to name the park after.
      const reason = document.error || causes.map((c) => c.message ?? c.code).join('; ') || 'failed by the authority without a reason';
      await parkUntilOperator(
        causes[0]?.code ?? 'authority_failed',
        transient ? `${reason} (still failing after ${transientRetries} automatic ${transientRetries === 1 ? 'retry' : 'retries'})` : reason,
        cancellable,
      );
      transientRetries = 0;
      state.step = 'retrying';
      result = await resubmit(document.id);
    }
  }

  /**
   * Runs one activity; a refusal the worker cannot fix (unknown item, bad request, missing scope) parks the
   * sale until an operator retries or cancels, instead of failing it.
   */
  async function parkOnRefusal<T>(call: () => Promise<T>, cancellable: boolean): Promise<T> {
    for (;;) {
      try {
        return await call();
      } catch (err) {
        const failure = err instanceof ActivityFailure ? err.cause : undefined;
        if (!(failure instanceof ApplicationFailure) || !failure.nonRetryable || failure.type === 'already_credited') throw err;
        count(1);
        await parkUntilOperator(failure.type ?? 'error', failure.message, cancellable);
      }
    }
  }

  /** After a timeout the document may have settled meanwhile: read it before resubmitting. */
  async function confirmOrResubmit(documentId: string, resubmit: (id: string) => Promise<SubmissionResult>): Promise<SubmissionResult> {
    const { document, apiCalls } = await signing.getDocument({ businessId: input.businessId, documentId });
    count(apiCalls);
    if (document.status === 'failed') return resubmit(documentId);
    const outcome = document.status === 'completed' ? 'signed' : IN_FLIGHT.has(document.status) ? 'in_flight' : 'unknown';
    return { outcome, httpStatus: 200, replayed: false, document, causes: [], apiCalls: 0 };
  }

  /** The outcome by callback or by polling, whichever comes first; undefined when the wait ran out. */
  async function awaitOutcome(documentId: string): Promise<FiscalDocument | { problem: { code: string; message: string } }> {
    const timedOut = { problem: { code: 'outcome_timeout', message: `no outcome from the authority within ${input.options?.outcomeTimeout ?? '24 hours'}` } };
    const deadline = Date.now() + options.outcomeTimeoutMs;
    for (;;) {
      const hintsBefore = callbackHints;
      const scope = new CancellationScope();
      const poll = scope.run(() => poller(deadline - Date.now()).awaitDocumentOutcome({ businessId: input.businessId, documentId }));
      const winner = await Promise.race([
        poll.then(
          (r) => ({ kind: 'polled' as const, r }),
          (error: unknown) => ({ kind: 'failed' as const, error }),
        ),
        condition(() => callbackHints > hintsBefore).then(() => ({ kind: 'hint' as const })),
      ]);
      if (winner.kind === 'polled') {
        count(winner.r.apiCalls);
        return winner.r.document;
      }
      if (winner.kind === 'failed') {
        const { error } = winner;
        if (!(error instanceof ActivityFailure) || isCancellation(error)) throw error;
        // A refusal while reading (e.g. a revoked scope) is not a timeout: park with what the service said.
        if (error.cause instanceof ApplicationFailure && error.cause.nonRetryable) {
          return { problem: { code: error.cause.type ?? 'error', message: error.cause.message } };
        }
        return timedOut;
      }
      // A callback is a hint: stop polling and confirm by reading the document.
      scope.cancel();
      await poll.catch(() => undefined);
      const { document, apiCalls } = await signing.getDocument({ businessId: input.businessId, documentId });
      count(apiCalls);
      if (!IN_FLIGHT.has(document.status)) return document;
      if (Date.now() >= deadline) return timedOut;
    }
  }

  /** Sends every pending movement once; an ambiguous failure parks the movement, never a blind retry. */
  async function reportPendingStock(): Promise<void> {
    stockWork = false;
    for (const m of state.stockMovements.filter((x) => x.status === 'pending')) {
      try {
        const result = await bookkeeping.adjustStock({
          businessId: input.businessId,
          itemId: m.itemId,
          action: m.action,
          quantity: m.quantity,
          unitPrice: m.unitPrice,
          referenceId: m.referenceId,
          ...(input.branchId ? { branchId: input.branchId } : {}),
        });
        count(result.apiCalls);
        m.status = 'reported';
        m.movementId = result.movementId;
      } catch (err) {
        if (!(err instanceof ActivityFailure) || !(err.cause instanceof ApplicationFailure)) throw err;
        count(1);
        m.status = 'needs_confirmation';
        m.problem =
          err.cause.type === 'AmbiguousWrite'
            ? 'the service may or may not have recorded this movement: confirm it in the dashboard, or re-send it'
            : `the service refused the movement (${err.cause.type ?? 'error'}): fix it, then re-send or confirm`;
        note(`stock movement ${m.referenceId} needs an operator`);
      }
    }
    refreshAttention();
  }

  async function issueCreditNote(request: RefundRequest) {
    const sale = state.sale!;
    state.step = 'refunding';
    const key = creditNoteIdempotencyKey(input.businessId, input.traderInvoiceNumber, request.traderInvoiceNumber);
    const creditNote = await settle(
      () =>
        signing.createCreditNote({
          businessId: input.businessId,
          workflowId,
          saleId: sale.id,
          traderInvoiceNumber: request.traderInvoiceNumber,
          returnDate: request.returnDate,
          reason: request.reason,
          idempotencyKey: key,
        }),
      'credit note',
    );
    state.creditNote = creditNote;
    upsertSearchAttributes([{ key: FiscalStatus, value: 'refunded' }]);
    note(`credit note signed as ${creditNote.receipt?.cuInvoiceNo ?? '?'}`);
    const restock = (request.restock ?? true) && !NON_RESTOCKING_REASONS.includes(request.reason);
    const returned = restock
      ? state.stockMovements
          .filter((m) => m.action === 'DEDUCT')
          .map((m, index) => newMovement(stockReferenceId(key, index, 'ADD'), m.itemId, 'ADD', m.quantity, m.unitPrice))
      : [];
    state.stockMovements.push(...returned);
    await reportPendingStock();
    state.step = 'refund_window';
    return { creditNote, stockMovements: returned.map((m) => movement(m.referenceId)!) };
  }

  // ---- helpers -----------------------------------------------------------------------------------------------

  function track(kind: 'sale' | 'credit note', document: FiscalDocument): void {
    if (kind === 'sale') {
      state.sale = document;
      upsertSearchAttributes([{ key: FiscalStatus, value: document.status }]);
    } else {
      state.creditNote = document;
    }
  }

  async function parkUntilOperator(code: string, message: string, cancellable: boolean): Promise<void> {
    operatorRetry = false;
    operatorCancel = undefined;
    setParked(code, message, cancellable ? ['retry', 'cancel'] : ['retry']);
    await condition(() => operatorRetry || operatorCancel !== undefined);
    if (operatorCancel !== undefined) throw new OperatorCancelled(operatorCancel);
    note('operator asked for a retry');
    unpark();
  }

  function setParked(code: string, message: string, actions: ParkedAction[], itemIds?: string[]): void {
    state.parked = { code, message, since: new Date().toISOString(), actions, ...(itemIds ? { itemIds } : {}) };
    state.step = 'parked';
    note(`parked: ${code}`);
    upsertSearchAttributes([{ key: NeedsAttention, value: true }]);
  }

  function unpark(): void {
    if (!state.parked) return;
    state.parked = null;
    refreshAttention();
  }

  function refreshAttention(): void {
    const attention = state.parked !== null || state.stockMovements.some((m) => m.status === 'needs_confirmation');
    upsertSearchAttributes([{ key: NeedsAttention, value: attention }]);
  }

  function validateRefund(request: RefundRequest): void {
    // First, so a second refund arriving while the first is being signed is told why.
    assertAllowed(refund === undefined && state.creditNote === null, 'this sale has already been refunded');
    assertAllowed(
      state.step === 'refund_window' && state.sale?.status === 'completed' && state.refundDeadline !== null && Date.now() < Date.parse(state.refundDeadline),
      'only a signed sale inside its refund window can be refunded',
    );
    assertAllowed((CREDIT_NOTE_REASONS as readonly string[]).includes(request?.reason), 'reason must be one of 01..06');
    assertAllowed(/^\d{4}-\d{2}-\d{2}$/.test(request?.returnDate ?? ''), 'returnDate must be YYYY-MM-DD');
    const tin = request?.traderInvoiceNumber ?? '';
    assertAllowed(tin.length >= 1 && tin.length <= 50, 'traderInvoiceNumber must be 1..50 characters');
  }
}

/** Starts from plain JSON (the Temporal CLI) skip the client's validation: a bad duration fails the run clearly. */
function optionDuration(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw ApplicationFailure.nonRetryable(`options.${name}: not a duration: ${value}`, 'invalid_input');
  return ms;
}

function assertAllowed(condition: boolean, message: string): void {
  if (!condition) throw ApplicationFailure.nonRetryable(message, 'invalid_operation');
}

function newMovement(referenceId: string, itemId: string, action: 'ADD' | 'DEDUCT', quantity: number, unitPrice: number): StockMovementState {
  return { referenceId, itemId, action, quantity, unitPrice, status: 'pending' };
}

function saleRequest(input: SaleInput) {
  return {
    traderInvoiceNumber: input.traderInvoiceNumber,
    saleDate: input.saleDate,
    lines: input.lines,
    ...(input.branchId ? { branchId: input.branchId } : {}),
    ...(input.paymentTypeCode ? { paymentTypeCode: input.paymentTypeCode } : {}),
    ...(input.customer ? { customer: input.customer } : {}),
  };
}

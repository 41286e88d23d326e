import {
  ApplicationFailure,
  allHandlersFinished,
  sleep,
  condition,
  makeContinueAsNewFunc,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { AdjustStockResult } from '../activities/types.js';
import { FAILURE_TYPES } from '../src/contracts/failures.js';
import {
  FIRST_BRANCH,
  STOCK_LEDGER_CARRY_SCHEMA,
  getBacklogQuery,
  getStockLedgerStateQuery,
  handOverStockSignal,
  isIncomingStock,
  stockLedgerSchemas,
  settleMovementUpdate,
  type LedgerMovement,
  type StockLedgerInput,
} from '../src/contracts/stock-ledger.js';
import { attentionList } from './attention.js';
import { ledgerReferenceStem } from './keys.js';
import { required } from './update-arguments.js';
import { count } from './metrics.js';
import { placeOnBudget } from './placement.js';
import { LedgerBook, linesIn } from './stock-ledger/book.js';
import { sendMovement } from './stock-ledger/send.js';

export const STOCK_NEEDS_OPERATOR = 'stock_needs_operator';
/** A ledger with nothing to do for this long ends; the next hand-over starts it again. */
const IDLE_END_MS = 24 * 3_600_000;
/** Past this many events a run hands over to the next (continue-as-new) between movements: replays stay short. */
const HISTORY_EVENTS_PER_RUN = 4_000;
/** Where the service refuses probes: how long an uncertain movement waits for its item's next movement to tell. */
const EVIDENCE_WAIT_MS = 10 * 60_000;
/** A movement that waited this long in the queue before it started was behind other work: the budget is contended. */
const CONTENDED_AFTER_MS = 1000;
/**
 * An idle ledger looks this often whether another build is current: the flag comes only with a workflow task, and the
 * old build cannot be stopped while the ledger is pinned to it.
 */
const VERSION_CHECK_MS = 5 * 60_000;

/** The one writer of stock for a business at a branch: docs/stock-ledger.md. */
export async function stockLedgerWorkflow(input: StockLedgerInput): Promise<void> {
  const { workflowId } = workflowInfo();
  const book = new LedgerBook(
    input.businessId,
    input.branchId ?? FIRST_BRANCH,
    ledgerReferenceStem(workflowId),
    input.carried,
    Date.now(),
  );
  const refreshAttention = attentionBoard(book);
  setHandler(handOverStockSignal, ({ lines, reporting }) => void book.take(lines, reporting, Date.now()));
  setHandler(getStockLedgerStateQuery, () => book.state());
  setHandler(getBacklogQuery, () => book.backlog());
  setHandler(
    settleMovementUpdate,
    (request) => {
      const m = book.settleByOperator(request.referenceId, request.decision)!;
      refreshAttention();
      return m;
    },
    {
      validator: (argument) => {
        const request = required(
          'settleMovement',
          '{"referenceId": "…", "decision": "applied" | "resend"}',
          stockLedgerSchemas().settleMovementArgs,
          argument,
        );
        if (!book.waitingForOperator().some((m) => m.referenceId === request.referenceId))
          throw ApplicationFailure.nonRetryable(
            `no movement ${request.referenceId} waits for an operator here`,
            FAILURE_TYPES.invalidOperation,
          );
      },
    },
  );

  // Pinned to the build it started on; once another is current, the next run goes there with the book.
  const movedOn = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  const route = await placeOnBudget(input.businessId, false);
  const running = new Map<string, Promise<void>>();
  let probesRefused = false;
  const unprobeable = new Set<string>();
  const probing = (itemId: string) => !probesRefused && !unprobeable.has(itemId);
  // Whether the budget is contended, from how long the ledger's movements waited in the queue (paced to the budget) or
  // that they did not start before their deadline. Stale after a max delay: a quiet ledger assumes an idle budget.
  let queuedMs = 0;
  let queuedSeenAt = Number.NEGATIVE_INFINITY;
  const queued = (ms: number) => {
    queuedMs = ms;
    queuedSeenAt = Date.now();
  };
  const contended = (maxDelayMs: number) => Date.now() - queuedSeenAt <= maxDelayMs && queuedMs >= CONTENDED_AFTER_MS;

  function answered(itemId: string, m: LedgerMovement | undefined, result: AdjustStockResult): void {
    if (result.queuedMs !== undefined) queued(result.queuedMs);
    const settled = book.answered(itemId, m, result.movementId, result.quantityOnHand);
    // The service moves the item now: whatever made it refuse a probe of it has passed.
    unprobeable.delete(itemId);
    if (settled.toOperator.length > 0) {
      for (const u of settled.toOperator) count('etims_stock_movements_needing_operator', { action: u.action });
      refreshAttention();
    }
  }

  /** Asks the quantity on hand of an item by a movement of nothing (C28 allows 0): no line rides on it. */
  async function probe(itemId: string): Promise<void> {
    if (!probing(itemId)) return;
    const nothing = { itemId, action: 'ADD', quantity: 0, unitPrice: 0, referenceId: book.probeReference() } as const;
    const outcome = await sendMovement(route, input, nothing, true, undefined, movedOn);
    if (outcome.kind === 'answered') answered(itemId, undefined, outcome.result);
    // A 400 refuses movements of nothing altogether: settling falls back on the next movement, or an operator.
    // Any other refusal is the item's (not registered, say).
    else if (outcome.kind === 'refused') {
      if (outcome.type === FAILURE_TYPES.invalidRequest) probesRefused = true;
      else unprobeable.add(itemId);
    }
    // Lost: ask again shortly, not in a tight loop while the service is failing.
    else if (outcome.kind !== 'not_sent') await sleep(2000);
  }

  /** One step for the item (a movement, or settling lost answers); then the loop looks again. */
  async function stepItem(itemId: string): Promise<void> {
    if (probing(itemId) && (book.uncertainOf(itemId).length > 0 || book.knownOnHand(itemId) === undefined)) {
      // Read before sending more: one lost answer is decidable (unless at 0), two opposite ones could cancel out.
      // Known before the first movement too, so even its lost answer can be settled.
      await probe(itemId);
      return;
    }
    if (!probing(itemId) && book.uncertainOf(itemId).length > 0 && !book.hasPendingLines(itemId)) {
      // Without probes only the item's next movement can tell: wait for one, then ask a person.
      if (!(await condition(() => book.hasPendingLines(itemId), EVIDENCE_WAIT_MS))) {
        for (const u of book.uncertainOf(itemId))
          book.toOperator(
            u,
            "its answer was lost and the service refuses to read the item's quantity by a movement of nothing: " +
              `check reference ${u.referenceId}`,
          );
        refreshAttention();
        return;
      }
    }
    const resending = book.hasResend(itemId);
    const { reporting } = book;
    let urgent = resending;
    let deadlineMs: number | undefined;
    if (!resending && reporting.mode === 'coalesced') {
      const maxDelayMs = reporting.maxDelaySeconds * 1000;
      const oldest = book.oldestPendingAt(itemId) ?? Date.now();
      if (contended(maxDelayMs)) {
        // Contended: lines gather as long as the business allows, then go with the tills: one request per max delay
        // (goods that came in go behind them instead: see below).
        const dispatchMs = Math.min(queuedMs, maxDelayMs / 4);
        const holdMs = oldest + maxDelayMs - dispatchMs - Date.now();
        if (holdMs > 0) await condition(() => !contended(maxDelayMs), holdMs);
        urgent = contended(maxDelayMs);
      }
      // Idle: at once, behind the tills; should the budget fill up meanwhile, not past the max delay.
      if (!urgent) deadlineMs = maxDelayMs - (Date.now() - oldest);
    }
    let m = book.nextMovement(itemId);
    if (!m) return;
    for (;;) {
      book.sending(m, Date.now());
      // Goods that came in have no customer waiting. A pass of supplier invoices hands all its lines over at once, so
      // their max delays fall together: sent with the tills, that burst would be served before the next sale's
      // signing. Where the rule says "with the tills", a movement carrying only such lines goes at bookkeeping
      // priority with no deadline instead: started as soon as the tills leave the budget a request, never escalated.
      const withTills = urgent && !m.lines.every(isIncomingStock);
      const outcome = await sendMovement(route, input, m, withTills, deadlineMs, movedOn);
      if (outcome.kind === 'not_started') {
        // Bound reached with the budget still contended: the item's waiting lines all go now, with no deadline (with
        // the tills, or behind them for goods that came in).
        queued(Math.max(deadlineMs ?? 0, CONTENDED_AFTER_MS));
        book.unsend(m);
        m = book.nextMovement(itemId)!;
        urgent = true;
        deadlineMs = undefined;
        continue;
      }
      if (outcome.kind === 'not_sent') {
        book.unsend(m);
        return;
      }
      if (outcome.kind === 'answered') answered(itemId, m, outcome.result);
      else if (outcome.kind === 'uncertain') book.uncertain(m);
      else {
        book.toOperator(
          m,
          `the service refused it (${outcome.why}): ` +
            'fix the cause, then settle it (resend, or applied if it is recorded after all)',
        );
        count('etims_stock_movements_needing_operator', { action: m.action });
        refreshAttention();
      }
      return;
    }
  }

  let draining = false;
  for (;;) {
    const startable = () => book.itemsWithWork().filter((item) => !running.has(item));
    const wake = () => (!draining && (startable().length > 0 || movedOn())) || (draining && running.size === 0);
    const ready = book.isIdle() && running.size === 0 ? await idle(wake) : (await condition(wake), true);
    if (!ready) {
      await condition(allHandlersFinished);
      if (book.isIdle()) return;
      continue;
    }
    // Between movements: those in flight end here, the lines waiting go in the book.
    if (movedOn() && !draining) {
      draining = true;
      continue;
    }
    if (draining) {
      await condition(allHandlersFinished);
      const carried = { ...book.carry(), schema: STOCK_LEDGER_CARRY_SCHEMA };
      await makeContinueAsNewFunc<typeof stockLedgerWorkflow>(
        movedOn() ? { initialVersioningBehavior: 'AUTO_UPGRADE' } : {},
      )({ ...input, carried });
    }
    for (const item of startable()) {
      const step = stepItem(item).finally(() => running.delete(item));
      running.set(item, step);
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > HISTORY_EVENTS_PER_RUN) draining = true;
  }
}

/** Until `wake` or IDLE_END_MS of nothing (false), woken every VERSION_CHECK_MS to see the current build. */
async function idle(wake: () => boolean): Promise<boolean> {
  const until = Date.now() + IDLE_END_MS;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) return false;
    if (await condition(wake, Math.min(left, VERSION_CHECK_MS))) return true;
  }
}

/** What waits for an operator, in the details page, with `NeedsAttention`. */
function attentionBoard(book: LedgerBook): () => void {
  return attentionList(
    STOCK_NEEDS_OPERATOR,
    '**Stock movements waiting for an operator** (update `settleMovement`):',
    () =>
      book
        .waitingForOperator()
        .map(
          (m) =>
            `- \`${m.referenceId}\`: ${m.action} ${m.quantity} × \`${m.itemId}\` ` +
            `(${linesIn(m.lines)} lines): ${m.problem ?? ''}`,
        )
        .join('\n'),
  );
}

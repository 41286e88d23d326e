/**
 * The stock ledger's logic against stub activities on the time-skipping test server: the sale hands its
 * lines over, the ledger alone moves stock, settles lost answers from the next quantity on hand, merges an item's
 * lines while one of its movements is in flight, and asks an operator only when the evidence cannot decide.
 * The stub service keeps a quantity on hand per item (stockModel), as C28 does.
 */
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createStockLedgerActivities } from '../../activities/stock-ledger.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { AdjustStockInput } from '../../activities/types.js';
import { AttentionReason, NeedsAttention } from '../../src/contracts/search-attributes.js';
import {
  settleMovementUpdate,
  FIRST_BRANCH,
  stockLedgerWorkflowId,
  handOverStockSignal,
  STOCK_LEDGER_WORKFLOW_TYPE,
  type StockLedgerCarry,
  type StockLedgerState,
  type StockLine,
  type StockReporting,
} from '../../src/contracts/stock-ledger.js';
import { stockInWorkflowId } from '../../src/contracts/stock-in.js';
import { expectRefusedAs } from '../helpers/updates.js';
import { eventually } from '../helpers/eventually.js';
import { terminateKeepingClock } from '../helpers/time-skipping.js';
import { refusal, stockModel, useLogicHarness, type Scenario } from './logic-harness.js';

const h = useLogicHarness();

const SUGAR = 'itm_sugar_2kg';
const MILK = 'itm_milk_500ml';

const ambiguous = () =>
  refusal(
    FAILURE_TYPES.ambiguousWrite,
    'adjustStock (POST /v1/stock/adjustments): socket hang up; the request may have taken effect',
  );
const oneLine = (s: Scenario, quantity = 3) => s.saleInput({ lines: [{ itemId: SUGAR, quantity, unitPrice: 250 }] });
const isProbe = (m: AdjustStockInput) => m.quantity === 0;

/** The ledger's state once nothing is pending or open: everything it took is settled. */
async function settledLedger(s: Scenario) {
  const settled = await eventually(
    () => s.ledgerState().catch(() => undefined),
    (st) =>
      st !== undefined && st.totals.linesTaken > 0 && st.open.length === 0 && Object.keys(st.pending).length === 0,
    { timeoutMs: 20_000, intervalMs: 50, what: 'a settled ledger' },
  );
  return settled!;
}

/** The ledger's state once `predicate` holds (the ledger starts with the first hand-over). */
function ledgerWhen(s: Scenario, predicate: (st: StockLedgerState) => boolean, what: string) {
  return eventually(
    () => s.ledgerState().catch(() => undefined),
    (st) => st !== undefined && predicate(st),
    { timeoutMs: 20_000, intervalMs: 50, what },
  ).then((st) => st!);
}

/** The stub service, whose answer to the first movement (not a probe) waits until `release()`: that movement in flight. */
function firstMovementHeld() {
  const stock = stockModel();
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const adjustStock = async (input: AdjustStockInput) => {
    if (!isProbe(input) && !held) {
      held = true;
      await gate;
    }
    return stock.apply(input);
  };
  return { stock, adjustStock, release: () => release() };
}

/** A ledger's first run as a carry: the quantities known (no probes), nothing waiting. */
function freshCarry(reporting: StockReporting, onHand: Record<string, number>): StockLedgerCarry {
  return {
    nextSequence: 1,
    reporting,
    onHand,
    pending: [],
    open: [],
    totals: {
      linesTaken: 0,
      movementsRecorded: 0,
      linesRecorded: 0,
      settledByEvidence: 0,
      resentAfterEvidence: 0,
      operatorDecisions: 0,
      probes: 0,
    },
    lineIds: [],
  };
}

/** The ledger's scheduled calls, from its history: each movement's input, priority key and queue deadline (s). */
async function scheduledMovements(s: Scenario) {
  const events = (await s.ledger().fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) return [];
    const input = defaultPayloadConverter.fromPayload(a.input!.payloads![0]!) as AdjustStockInput;
    return [
      {
        input,
        priorityKey: a.priority?.priorityKey,
        // The server fills in its default of years where the ledger set none.
        deadlineSeconds: Number(a.scheduleToStartTimeout?.seconds ?? Infinity),
      },
    ];
  });
}

function handOverWith(reporting: StockReporting) {
  return createStockLedgerActivities({
    temporal: { client: h.env.client },
    logger: pino({ level: 'silent' }),
    stockReporting: () => reporting,
    canonicalBranch: async (_businessId, named) => named ?? FIRST_BRANCH,
  }).handOverStock;
}

describe('the stock ledger', () => {
  it('takes the signed sale’s lines, learns each item’s quantity once, and sends each line alone while the budget is idle, the sale long closed', async () => {
    await h.run({}, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const sale = await handle.result();
      expect(sale.step).toBe('completed');
      expect(s.sequence()).toEqual(['checkItems', 'createSale', 'handOverStock', 'enterFiscalDay']);
      // Handed over is all the sale knows: the ledger tells it nothing after.
      for (const m of sale.stockMovements) {
        expect(m).toMatchObject({
          status: 'handed_over',
          ledger: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
        });
        expect(m).not.toHaveProperty('carriedBy');
        expect(m).not.toHaveProperty('movementId');
      }
      const ledger = await settledLedger(s);
      expect(ledger.recent.map((m) => m.lines.map((l) => [l.lineId, l.saleWorkflowId]))).toEqual(
        expect.arrayContaining(sale.stockMovements.map((m) => [[m.referenceId, handle.workflowId]])),
      );
      expect(ledger.recent.map((m) => m.movementId)).toEqual([
        expect.stringMatching(/^mov_/),
        expect.stringMatching(/^mov_/),
      ]);
      expect(ledger.onHand).toEqual({ [SUGAR]: 98, [MILK]: 99 });
      // One probe per item before its first movement, then the movements: one each.
      const sent = s.ledgerCalls().map((c) => c.input as AdjustStockInput);
      expect(
        sent
          .filter(isProbe)
          .map((m) => m.itemId)
          .sort(),
      ).toEqual([MILK, SUGAR]);
      expect(
        s
          .movementsSent()
          .map((m) => [m.itemId, m.action, m.quantity])
          .sort(),
      ).toEqual([
        [MILK, 'DEDUCT', 1],
        [SUGAR, 'DEDUCT', 2],
      ]);
      expect(ledger.totals).toMatchObject({ linesTaken: 2, linesRecorded: 2, movementsRecorded: 2, probes: 2 });
    });
  });

  it('settles a movement whose answer was lost after the service recorded it, from the next quantity on hand, and never sends it again', async () => {
    const stock = stockModel();
    let failed = false;
    const adjustStock = async (input: AdjustStockInput) => {
      if (!isProbe(input) && !failed) {
        failed = true;
        await stock.apply(input);
        throw ambiguous();
      }
      return stock.apply(input);
    };
    await h.run({ adjustStock }, async (s) => {
      const handle = await s.startSale(oneLine(s));
      const ledger = await settledLedger(s);
      expect(ledger.recent).toEqual([
        expect.objectContaining({ status: 'recorded', settledBy: 'evidence', quantity: 3 }),
      ]);
      expect(ledger.totals).toMatchObject({ settledByEvidence: 1, resentAfterEvidence: 0 });
      expect(stock.recorded.filter((m) => m.quantity > 0)).toHaveLength(1);
      expect(stock.onHand(SUGAR)).toBe(97);
      const sale = await handle.result();
      expect(ledger.recent[0]!.lines.map((l) => l.lineId)).toEqual([sale.stockMovements[0]!.referenceId]);
    });
  });

  it('sends a movement again, under the same reference, when the next quantity on hand proves it was not applied', async () => {
    const stock = stockModel();
    let failed = false;
    const adjustStock = async (input: AdjustStockInput) => {
      if (!isProbe(input) && !failed) {
        failed = true;
        throw ambiguous();
      }
      return stock.apply(input);
    };
    await h.run({ adjustStock }, async (s) => {
      await s.startSale(oneLine(s));
      const ledger = await settledLedger(s);
      expect(ledger.totals).toMatchObject({ settledByEvidence: 1, resentAfterEvidence: 1, movementsRecorded: 1 });
      const sent = s.movementsSent();
      expect(sent).toHaveLength(2);
      expect(sent[1]!.referenceId).toBe(sent[0]!.referenceId);
      expect(stock.recorded.filter((m) => m.quantity > 0)).toHaveLength(1);
      expect(stock.onHand(SUGAR)).toBe(97);
    });
  });

  it('asks an operator, saying why, when something else moved the item meanwhile; settleMovement decides', async () => {
    const stock = stockModel();
    let failed = false;
    const adjustStock = async (input: AdjustStockInput) => {
      if (!isProbe(input) && !failed) {
        failed = true;
        await stock.apply(input);
        stock.move(SUGAR, -5);
        throw ambiguous();
      }
      return stock.apply(input);
    };
    await h.run({ adjustStock }, async (s) => {
      await s.startSale(oneLine(s));
      const waiting = await ledgerWhen(s, (st) => st.open.some((m) => m.status === 'needs_operator'), 'an operator');
      const movement = waiting.open[0]!;
      expect(movement.problem).toMatch(/something else moved the item/);
      const ledger = s.ledger();
      expect(await s.searchAttribute(ledger, NeedsAttention)).toBe(true);
      expect(await s.searchAttribute(ledger, AttentionReason)).toBe('stock_needs_operator');

      await expectRefusedAs(
        ledger.executeUpdate(settleMovementUpdate, { args: [{ referenceId: 'nothing-here', decision: 'applied' }] }),
        'invalid_operation',
        /no movement nothing-here waits/,
      );
      // What the UI's update form or another SDK may send: refused naming the field, nothing changed.
      await expectRefusedAs(
        ledger.executeUpdate(settleMovementUpdate, {
          args: [{ referenceId: movement.referenceId, decision: 'maybe' } as never],
        }),
        'invalid_input',
        /settleMovement needs .*decision/,
      );
      await expectRefusedAs(
        ledger.executeUpdate(settleMovementUpdate, { args: [undefined as never] }),
        'invalid_input',
        /no data was given/,
      );
      const settled = await ledger.executeUpdate(settleMovementUpdate, {
        args: [{ referenceId: movement.referenceId, decision: 'applied' }],
      });
      expect(settled).toMatchObject({ status: 'recorded', settledBy: 'operator' });
      const after = await settledLedger(s);
      expect(after.totals.operatorDecisions).toBe(1);
      expect(await s.searchAttribute(ledger, NeedsAttention)).toBe(false);
      expect(stock.recorded.filter((m) => m.quantity > 0)).toHaveLength(1);
    });
  });

  it('hands a refused movement to an operator with the service’s reason, and sends it again on `resend`', async () => {
    const stock = stockModel();
    let refused = false;
    const adjustStock = async (input: AdjustStockInput) => {
      if (!isProbe(input) && !refused) {
        refused = true;
        throw refusal('authority_rejected', 'Item itm_sugar_2kg is not registered with the tax authority');
      }
      return stock.apply(input);
    };
    await h.run({ adjustStock }, async (s) => {
      await s.startSale(oneLine(s));
      const waiting = await ledgerWhen(s, (st) => st.open.some((m) => m.status === 'needs_operator'), 'an operator');
      expect(waiting.open[0]!.problem).toMatch(/refused it \(authority_rejected/);
      await s.ledger().executeUpdate(settleMovementUpdate, {
        args: [{ referenceId: waiting.open[0]!.referenceId, decision: 'resend' }],
      });
      const after = await settledLedger(s);
      expect(after.recent[0]).toMatchObject({ status: 'recorded', settledBy: 'operator' });
      expect(stock.onHand(SUGAR)).toBe(97);
    });
  });

  it('retries only what provably was not taken (429), after the delay asked for, without an operator', async () => {
    const stock = stockModel();
    let limited = false;
    const adjustStock = async (input: AdjustStockInput) => {
      if (!isProbe(input) && !limited) {
        limited = true;
        throw ApplicationFailure.create({
          type: 'rate_limited',
          message: 'rate limited',
          details: [{ operation: 'adjustStock', status: 429, retryAfterSeconds: 7 }],
        });
      }
      return stock.apply(input);
    };
    await h.run({ adjustStock }, async (s) => {
      await s.startSale(oneLine(s));
      const ledger = await settledLedger(s);
      expect(ledger.totals).toMatchObject({ movementsRecorded: 1, settledByEvidence: 0, operatorDecisions: 0 });
      const [first, second] = s.ledgerCalls().filter((c) => (c.input as AdjustStockInput).quantity > 0);
      expect(second!.scheduledAtMs - first!.scheduledAtMs).toBeGreaterThanOrEqual(7_000);
    });
  });

  it('takes a hand-over sent twice (its activity retried) once', async () => {
    await h.run({}, async (s) => {
      const lines = [
        {
          lineId: 'doc:0:DEDUCT',
          saleWorkflowId: 'sale:none',
          itemId: SUGAR,
          action: 'DEDUCT' as const,
          quantity: 4,
          unitPrice: 250,
        },
      ];
      const start = () =>
        s.env.client.workflow.signalWithStart(STOCK_LEDGER_WORKFLOW_TYPE, {
          workflowId: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
          taskQueue: s.taskQueue,
          args: [{ businessId: s.businessId }],
          signal: handOverStockSignal,
          signalArgs: [{ lines, reporting: { mode: 'coalesced', maxDelaySeconds: 120 } }],
        });
      await start();
      await start();
      const ledger = await settledLedger(s);
      expect(ledger.totals).toMatchObject({ linesTaken: 1, linesRecorded: 1 });
      expect(s.movementsSent()).toHaveLength(1);
    });
  });

  it('merges lines of one item from different sales that wait while its movement is in flight (coalesced), the merged movement naming each sale’s line', async () => {
    const { stock, adjustStock, release } = firstMovementHeld();
    await h.run({ adjustStock }, async (s) => {
      const first = await s.startSale(oneLine(s, 1));
      await eventually(
        async () => s.movementsSent().length,
        (n) => n === 1,
        { timeoutMs: 10_000, intervalMs: 20, what: 'the first movement in flight' },
      );
      const later = [await s.startSale(oneLine(s, 2)), await s.startSale(oneLine(s, 4))];
      await ledgerWhen(s, (st) => st.pending[SUGAR] === 2, 'two lines waiting');
      release();
      const ledger = await settledLedger(s);
      const merged = ledger.recent.find((m) => m.lines.length === 2)!;
      expect(merged).toMatchObject({
        itemId: SUGAR,
        action: 'DEDUCT',
        quantity: 6,
        referenceId: expect.stringMatching(/^stk:[\w-]{16}:\d+$/),
      });
      expect(s.movementsSent()).toHaveLength(2);
      const lineOf = async (sale: typeof first) => {
        const { stockMovements } = await s.state(sale);
        const [line] = stockMovements;
        return { lineId: line!.referenceId, saleWorkflowId: sale.workflowId, quantity: line!.quantity };
      };
      // The lines joined it in no set order.
      const byQuantity = <T extends { quantity: number }>(lines: T[]) =>
        [...lines].sort((x, y) => x.quantity - y.quantity);
      expect(byQuantity(merged.lines)).toEqual(await Promise.all(later.map(lineOf)));
      const alone = ledger.recent.find((m) => m.lines.length === 1)!;
      expect(alone.lines).toEqual([await lineOf(first)]);
      expect(stock.onHand(SUGAR)).toBe(93);
    });
  });

  it('sends every line alone for a business reporting per sale, even when lines wait', async () => {
    const { adjustStock, release } = firstMovementHeld();
    // The worker's setting for this business, as STOCK_REPORTING_BY_BUSINESS=<business>=per-sale makes it.
    const handOverStock = (input: Parameters<ReturnType<typeof handOverWith>>[0]) =>
      handOverWith({ mode: 'per-sale' })(input);
    await h.run({ adjustStock, handOverStock }, async (s) => {
      await s.startSale(oneLine(s, 1));
      await eventually(
        async () => s.movementsSent().length,
        (n) => n === 1,
        { timeoutMs: 10_000, intervalMs: 20, what: 'the first movement in flight' },
      );
      await s.startSale(oneLine(s, 2));
      await s.startSale(oneLine(s, 4));
      await ledgerWhen(s, (st) => st.pending[SUGAR] === 2, 'two lines waiting');
      release();
      const ledger = await settledLedger(s);
      expect(ledger.reporting).toEqual({ mode: 'per-sale' });
      expect(
        s
          .movementsSent()
          .map((m) => m.quantity)
          .sort(),
      ).toEqual([1, 2, 4]);
      expect(ledger.recent.every((m) => m.lines.length === 1 && m.referenceId === m.lines[0]!.lineId)).toBe(true);
    });
  });

  it('puts refunded goods back through the same ledger', async () => {
    await h.run({}, async (s) => {
      const input = oneLine(s);
      const sale = await (await s.startSale(input)).result();
      await ledgerWhen(s, (st) => st.totals.linesRecorded === 1 && st.open.length === 0, 'the sale recorded');
      const refund = await s.refund(input.traderInvoiceNumber, {
        reason: '01',
        returnDate: '2026-11-22',
        traderInvoiceNumber: `CN-${Date.now()}`,
      });
      // The refund closes once the ledger has taken its restock line; the ledger sends it.
      const result = await refund.answer;
      const ledgerId = stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH);
      expect(sale.stockMovements.map((m) => [m.action, m.status, m.ledger])).toEqual([
        ['DEDUCT', 'handed_over', ledgerId],
      ]);
      expect(result.stockMovements.map((m) => [m.action, m.quantity, m.status, m.ledger])).toEqual([
        ['ADD', 3, 'handed_over', ledgerId],
      ]);
      const ledger = await ledgerWhen(
        s,
        (st) => st.totals.linesRecorded === 2 && st.open.length === 0,
        'the restock recorded',
      );
      expect(s.movementsSent().map((m) => m.action)).toEqual(['DEDUCT', 'ADD']);
      expect(s.sequence().filter((n) => n === 'handOverStock')).toHaveLength(2);
      const restock = ledger.recent.find((m) => m.action === 'ADD')!;
      expect(restock.lines).toEqual([
        expect.objectContaining({
          lineId: result.stockMovements[0]!.referenceId,
          saleWorkflowId: refund.handle.workflowId,
        }),
      ]);
    });
  });
});

describe('the stock ledger under a contended budget', () => {
  it('holds an item’s lines while its movements wait in the queue (the budget spent), then sends them together with the tills', async () => {
    const stock = stockModel();
    // Every attempt reports a 5 s wait in the compliance queue: what a movement sees when the tills spend the budget.
    const adjustStock = async (input: AdjustStockInput) => ({ ...(await stock.apply(input)), queuedMs: 5000 });
    // A short max delay in real time: the test server does not skip time while the test polls.
    const handOverStock = (input: Parameters<ReturnType<typeof handOverWith>>[0]) =>
      handOverWith({ mode: 'coalesced', maxDelaySeconds: 3 })(input);
    await h.run({ adjustStock, handOverStock }, async (s) => {
      const sales = [await s.startSale(oneLine(s, 1))];
      await ledgerWhen(s, (st) => st.totals.probes === 1, 'the item probed (the budget seen spent)');
      sales.push(await s.startSale(oneLine(s, 2)), await s.startSale(oneLine(s, 4)));
      const ledger = await settledLedger(s);
      expect(ledger.totals.linesRecorded).toBe(3);
      // One movement for the three sales' lines, not one each.
      expect(s.movementsSent().map((m) => m.quantity)).toEqual([7]);
      const events = (await s.ledger().fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) =>
        e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : [],
      );
      const movement = scheduled.find(
        (a) => (defaultPayloadConverter.fromPayload(a.input!.payloads![0]!) as AdjustStockInput).quantity > 0,
      )!;
      expect(movement.priority?.priorityKey).toBe(1);
      expect(events.some((e) => e.timerStartedEventAttributes)).toBe(true);
      expect(stock.onHand(SUGAR)).toBe(93);
    });
  });

  it('sends a coalesced movement that was not started within the max delay with the tills, carrying every line of the item waiting by then', async () => {
    // Its calls go to a queue no worker polls: the budget as a ledger sees it when the tills take all of it.
    const placeBusiness = async ({ businessId }: { businessId: string }) => ({
      application: 'default',
      fairnessKey: businessId,
      ownQueue: 'nobody-polls',
    });
    await h.run({ placeBusiness }, async (s) => {
      const line = (n: number, quantity: number) => ({
        lineId: `doc-${n}:0:DEDUCT`,
        saleWorkflowId: `sale:none:${n}`,
        itemId: SUGAR,
        action: 'DEDUCT' as const,
        quantity,
        unitPrice: 250,
      });
      // A short max delay in real time: the test server does not skip time while an activity waits to be started.
      const reporting = { mode: 'coalesced' as const, maxDelaySeconds: 3 };
      const carried = freshCarry(reporting, { [SUGAR]: 100 });
      const ledger = await s.env.client.workflow.signalWithStart(STOCK_LEDGER_WORKFLOW_TYPE, {
        workflowId: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
        taskQueue: s.taskQueue,
        args: [{ businessId: s.businessId, carried }],
        signal: handOverStockSignal,
        signalArgs: [{ lines: [line(1, 1)], reporting }],
      });
      await ledgerWhen(s, (st) => st.open.length === 1, 'the first movement scheduled');
      await ledger.signal(handOverStockSignal, { lines: [line(2, 2), line(3, 4)], reporting });
      await ledgerWhen(s, (st) => st.pending[SUGAR] === 2, 'two lines waiting behind it');
      const scheduled = await eventually(
        async () => ((await ledger.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes),
        (events) => events.length === 2,
        { timeoutMs: 10_000, intervalMs: 50, what: 'the movement scheduled again' },
      );
      const events = (await ledger.fetchHistory()).events ?? [];
      expect(events.filter((e) => e.activityTaskTimedOutEventAttributes)).toHaveLength(1);
      const [first, again] = scheduled.map((e) => e.activityTaskScheduledEventAttributes!);
      const input = (a: typeof first) =>
        defaultPayloadConverter.fromPayload(a!.input!.payloads![0]!) as AdjustStockInput;
      expect(input(first)).toMatchObject({ quantity: 1, referenceId: 'doc-1:0:DEDUCT' });
      expect(Number(first!.scheduleToStartTimeout?.seconds)).toBeGreaterThanOrEqual(2);
      expect(first!.priority?.priorityKey).toBe(3);
      expect(input(again)).toMatchObject({ quantity: 7, referenceId: expect.stringMatching(/^stk:/) });
      // No deadline of its own any more (the server fills in its default of years).
      expect(Number(again!.scheduleToStartTimeout?.seconds ?? Infinity)).toBeGreaterThan(86_400);
      expect(again!.priority?.priorityKey).toBe(1);
      expect(s.movementsSent()).toHaveLength(0);
      await terminateKeepingClock(s.env, ledger, 'test over');
    });
  });

  it('sends goods that came in behind the tills even past their max delay, and a sale’s lines with the tills as before', async () => {
    const stock = stockModel();
    // Every attempt reports a 5 s wait in the compliance queue: the budget spent by the tills.
    const adjustStock = async (input: AdjustStockInput) => ({ ...(await stock.apply(input)), queuedMs: 5000 });
    await h.run({ adjustStock }, async (s) => {
      const reporting = { mode: 'coalesced' as const, maxDelaySeconds: 3 };
      const sold = (n: number, quantity: number): StockLine => ({
        lineId: `doc-${n}:0:DEDUCT`,
        saleWorkflowId: `sale:${s.businessId}:${n}`,
        itemId: SUGAR,
        action: 'DEDUCT',
        quantity,
        unitPrice: 250,
      });
      // As the stock-in hands a supplier invoice's line over: under its own workflow id, at the supplier's price.
      const cameIn = (n: number, quantity: number): StockLine => ({
        lineId: `sin-v1:${n}:add`,
        saleWorkflowId: stockInWorkflowId(s.taskQueue, s.businessId),
        itemId: MILK,
        action: 'ADD',
        quantity,
        unitPrice: 40,
      });
      const ledger = await s.env.client.workflow.signalWithStart(STOCK_LEDGER_WORKFLOW_TYPE, {
        workflowId: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
        taskQueue: s.taskQueue,
        args: [{ businessId: s.businessId, carried: freshCarry(reporting, { [SUGAR]: 100, [MILK]: 100 }) }],
        signal: handOverStockSignal,
        signalArgs: [{ lines: [sold(1, 1), cameIn(1, 1)], reporting }],
      });
      await ledgerWhen(s, (st) => st.totals.linesRecorded === 2, 'the first lines recorded (the budget seen spent)');
      await ledger.signal(handOverStockSignal, {
        lines: [sold(2, 2), sold(3, 4), cameIn(2, 5), cameIn(3, 6)],
        reporting,
      });
      await ledgerWhen(s, (st) => st.totals.linesRecorded === 6 && st.open.length === 0, 'every line recorded');
      const sent = (await scheduledMovements(s)).map((m) => ({
        item: m.input.itemId,
        quantity: m.input.quantity,
        priorityKey: m.priorityKey,
        deadline: m.deadlineSeconds <= 86_400,
      }));
      // The budget idle at first: each line at once, behind the tills, within its max delay. Then, contended, each
      // item's lines held and merged: the sales' go with the tills, the goods that came in behind them, no deadline.
      const bySale = sent.filter((m) => m.item === SUGAR);
      const byStockIn = sent.filter((m) => m.item === MILK);
      expect(bySale).toEqual([
        { item: SUGAR, quantity: 1, priorityKey: 3, deadline: true },
        { item: SUGAR, quantity: 6, priorityKey: 1, deadline: false },
      ]);
      expect(byStockIn).toEqual([
        { item: MILK, quantity: 1, priorityKey: 3, deadline: true },
        { item: MILK, quantity: 11, priorityKey: 3, deadline: false },
      ]);
      const events = (await ledger.fetchHistory()).events ?? [];
      expect(events.some((e) => e.timerStartedEventAttributes)).toBe(true);
      expect(stock.onHand(SUGAR)).toBe(93);
      expect(stock.onHand(MILK)).toBe(112);
    });
  });

  it('sends goods that came in and were not started within the max delay again behind the tills, with no deadline', async () => {
    // Its calls go to a queue no worker polls: the budget as a ledger sees it when the tills take all of it.
    const placeBusiness = async ({ businessId }: { businessId: string }) => ({
      application: 'default',
      fairnessKey: businessId,
      ownQueue: 'nobody-polls',
    });
    await h.run({ placeBusiness }, async (s) => {
      const cameIn = (n: number, quantity: number): StockLine => ({
        lineId: `sin-v1:${n}:add`,
        saleWorkflowId: stockInWorkflowId(s.taskQueue, s.businessId),
        itemId: SUGAR,
        action: 'ADD',
        quantity,
        unitPrice: 150,
      });
      const reporting = { mode: 'coalesced' as const, maxDelaySeconds: 3 };
      const ledger = await s.env.client.workflow.signalWithStart(STOCK_LEDGER_WORKFLOW_TYPE, {
        workflowId: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
        taskQueue: s.taskQueue,
        args: [{ businessId: s.businessId, carried: freshCarry(reporting, { [SUGAR]: 100 }) }],
        signal: handOverStockSignal,
        signalArgs: [{ lines: [cameIn(1, 1)], reporting }],
      });
      await ledgerWhen(s, (st) => st.open.length === 1, 'the first movement scheduled');
      await ledger.signal(handOverStockSignal, { lines: [cameIn(2, 2), cameIn(3, 4)], reporting });
      const [first, again] = await eventually(
        () => scheduledMovements(s),
        (scheduled) => scheduled.length === 2,
        { timeoutMs: 10_000, intervalMs: 50, what: 'the movement scheduled again' },
      );
      expect(first).toMatchObject({ input: { quantity: 1, referenceId: 'sin-v1:1:add' }, priorityKey: 3 });
      expect(first!.deadlineSeconds).toBeGreaterThanOrEqual(2);
      // Every line waiting by then, still behind the tills, and no deadline: it waits for the tills to leave room.
      expect(again).toMatchObject({
        input: { quantity: 7, referenceId: expect.stringMatching(/^stk:/) },
        priorityKey: 3,
      });
      expect(again!.deadlineSeconds).toBeGreaterThan(86_400);
      expect(s.movementsSent()).toHaveLength(0);
      await terminateKeepingClock(s.env, ledger, 'test over');
    });
  });
});

/**
 * The sale and refund workflows' logic against stub activities on the time-skipping test server: refund windows of
 * 30 days, outcome timeouts of hours, backoffs and fix deadlines pass in milliseconds. What only a real
 * service, real HTTP or a real callback receiver can show stays in the end-to-end tests beside this file.
 */
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { documentInFlight } from '../../activities/failures.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { AdjustStockInput } from '../../activities/types.js';
import type { FiscalDocument } from '../../src/contracts/sale.js';
import { Application, AttentionReason, FiscalStatus, NeedsAttention } from '../../src/contracts/search-attributes.js';
import {
  SALE_WORKFLOW_TYPE,
  awaitReceiptUpdate,
  businessServedSignal,
  callbackReceivedSignal,
  cancelUpdate,
  getSaleStateQuery,
  itemFixedUpdate,
  itemRegistrationSettledSignal,
  retryUpdate,
  type RefundRequest,
  type SaleState,
} from '../../src/contracts/sale.js';
import { refundUpdate } from '../../src/contracts/refund.js';
import {
  DEFAULT_STOCK_REPORTING,
  STOCK_LEDGER_WORKFLOW_TYPE,
  settleMovementUpdate,
  FIRST_BRANCH,
  stockLedgerWorkflowId,
  type StockLedgerState,
} from '../../src/contracts/stock-ledger.js';
import { complianceTaskQueue } from '../../src/contracts/task-queues.js';
import { eventually } from '../helpers/eventually.js';
import { expectInvalidArgument, expectRefusedAs, expectUpdateRefused, updateRefusal } from '../helpers/updates.js';
import { terminateKeepingClock } from '../helpers/time-skipping.js';
import { creditNoteIdempotencyKey, saleIdempotencyKey, stockReferenceId } from '../../workflows/keys.js';
import {
  DAY,
  HOUR,
  MINUTE,
  creditNoteDocument,
  receipt,
  refusal,
  saleDocument,
  stockModel,
  submission,
  useLogicHarness,
  type Scenario,
} from './logic-harness.js';

const h = useLogicHarness();

const SUGAR = 'itm_sugar_2kg';
const MILK = 'itm_milk_500ml';
const VOUCHER = 'itm_gift_voucher';
const SIGNED_STEPS: Array<SaleState['step']> = ['reporting_stock', 'completed'];

function refundRequest(overrides: Partial<RefundRequest> = {}): RefundRequest {
  return {
    reason: '01',
    returnDate: '2026-11-22',
    traderInvoiceNumber: `CN-${Math.random().toString(36).slice(2, 10)}`,
    ...overrides,
  };
}

/** Failed in flight or on submission: the document as the service shows it then. */
const failed = (error = 'failed by the authority') => saleDocument({ status: 'failed', error });
const pending = () => saleDocument({ status: 'pending' });
const count = (s: Scenario, name: Parameters<Scenario['inputs']>[0]) => s.inputs(name).length;

async function serverElapsed(s: Scenario, handle: Awaited<ReturnType<Scenario['startSale']>>): Promise<number> {
  const { startTime, closeTime } = await handle.describe();
  return (closeTime ?? new Date(await s.env.currentTimeMs())).getTime() - startTime.getTime();
}

/** Stock movements sorted by reference: movements sent together arrive in any order. */
function byReference<T extends { referenceId: string }>(movements: T[]): T[] {
  return [...movements].sort((a, b) => a.referenceId.localeCompare(b.referenceId));
}

/** A probe of the stock ledger (a movement of nothing, its read of the quantity on hand): it carries no line. */
const isProbe = (m: AdjustStockInput) => m.quantity === 0;

/** The branch's stock ledger once `predicate` holds (it starts with the first hand-over and runs apart from the sale). */
function ledgerWhen(
  s: Scenario,
  predicate: (st: StockLedgerState) => boolean,
  what: string,
): Promise<StockLedgerState> {
  return eventually(
    () => s.ledgerState().catch(() => undefined),
    (st) => st !== undefined && predicate(st),
    { timeoutMs: 20_000, intervalMs: 50, what },
  ).then((st) => st!);
}

/** The ledger once it took `lines` lines and settled everything: nothing pending, nothing open. */
const settledLedger = (s: Scenario, lines: number) =>
  ledgerWhen(
    s,
    (st) => st.totals.linesTaken === lines && st.open.length === 0 && Object.keys(st.pending).length === 0,
    `a settled ledger of ${lines} lines`,
  );

/**
 * A sale (or ledger) that never needed an operator never writes NeedsAttention: the lean path writes it only when it
 * changes, and these tests start sales without the `false` a client sets at start (docs/starting-sales.md).
 */
async function expectNeverNeededAttention(
  s: Scenario,
  handle: Parameters<Scenario['searchAttribute']>[0],
): Promise<void> {
  expect(await s.searchAttribute(handle, NeedsAttention)).toBeUndefined();
}

/** Updates the server accepted into history: a validator's refusal leaves none. */
async function acceptedUpdates(handle: WorkflowHandle): Promise<string[]> {
  return ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
    e.workflowExecutionUpdateAcceptedEventAttributes
      ? [e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name ?? '']
      : [],
  );
}

describe('a sale closes once signed and its stock handed over; a refund is its own workflow', () => {
  it('closes a signed sale once its lines are handed to the stock ledger, with when it was signed and until when it can be refunded in its result', async () => {
    const stock = stockModel();
    await h.run({ adjustStock: (movement) => stock.apply(movement) }, async (s) => {
      const input = s.saleInput();
      const handle = await s.startSale(input);
      const closed = await handle.result();
      expect(closed.step).toBe('completed');
      expect(closed.creditNote).toBeNull();
      expect(closed.history.at(-1)?.event).toBe('signed and its stock handed over; closed');
      // Nothing holds it open once its work is done: no window, no timer.
      expect(await serverElapsed(s, handle)).toBeLessThan(MINUTE);
      const closedAt = (await handle.describe()).closeTime!.getTime();
      expect(closedAt - Date.parse(closed.signedAt!)).toBeGreaterThanOrEqual(0);
      expect(closedAt - Date.parse(closed.signedAt!)).toBeLessThan(MINUTE);
      expect(Date.parse(closed.refundDeadline!) - Date.parse(closed.signedAt!)).toBe(30 * DAY);
      // What a refund reads of it: its lines as sold, no branch (none was named).
      expect(closed.lines).toEqual(input.lines);
      expect(closed).not.toHaveProperty('branchId');

      const key = saleIdempotencyKey(input.businessId, input.traderInvoiceNumber);
      const ledger = stockLedgerWorkflowId(s.taskQueue, input.businessId, FIRST_BRANCH);
      expect(s.sequence()).toEqual(['checkItems', 'createSale', 'handOverStock', 'enterFiscalDay']);
      expect(s.inputs('checkItems')).toEqual([{ businessId: input.businessId, itemIds: [SUGAR, MILK] }]);
      // The callback URL's expiry counts from the sale's start, whichever attempt or worker files it.
      const startedAtMs = (await handle.describe()).startTime.getTime();
      expect(s.inputs('createSale')).toEqual([
        {
          businessId: input.businessId,
          workflowId: handle.workflowId,
          idempotencyKey: key,
          request: { traderInvoiceNumber: input.traderInvoiceNumber, saleDate: input.saleDate, lines: input.lines },
          callbackAnchorMs: startedAtMs,
        },
      ]);
      // Both lines in one hand-over, each under its own reference; the sale closes, so it asks to be told nothing.
      expect(s.inputs('handOverStock')).toEqual([
        {
          businessId: input.businessId,
          taskQueue: s.taskQueue,
          lines: [
            {
              lineId: stockReferenceId(key, 0, 'DEDUCT'),
              saleWorkflowId: handle.workflowId,
              itemId: SUGAR,
              action: 'DEDUCT',
              quantity: 2,
              unitPrice: 250,
            },
            {
              lineId: stockReferenceId(key, 1, 'DEDUCT'),
              saleWorkflowId: handle.workflowId,
              itemId: MILK,
              action: 'DEDUCT',
              quantity: 1,
              unitPrice: 65,
            },
          ],
        },
      ]);
      // Nobody is told which movement carried a line: the lines name the sale, nothing more.
      expect(s.inputs('handOverStock')[0]!.lines.map((l) => Object.keys(l).sort())).toEqual([
        ['action', 'itemId', 'lineId', 'quantity', 'saleWorkflowId', 'unitPrice'],
        ['action', 'itemId', 'lineId', 'quantity', 'saleWorkflowId', 'unitPrice'],
      ]);
      // Every API call (the ledger's included) ran on the compliance queue; placement asks the worker, on the sale's
      // own queue. Signed at once, the sale's stock was handed over by the signing activity: no local activity did.
      const serviceCalls = s.calls.filter((c) => c.name !== 'placeBusiness');
      expect(new Set(serviceCalls.map((c) => c.taskQueue))).toEqual(new Set([complianceTaskQueue(s.taskQueue)]));
      expect(s.calls.filter((c) => c.name === 'handOverStock').map((c) => c.taskQueue)).toEqual([
        complianceTaskQueue(s.taskQueue),
      ]);
      expect(closed.sale).toMatchObject({ status: 'completed', receipt: { cuInvoiceNo: 'KRACU0100000001/1' } });
      // Handed over, not reported: the ledger tells no sale which movement carried its line.
      expect(
        closed.stockMovements.map((m) => [m.itemId, m.action, m.status, m.ledger, m.carriedBy, m.movementId]),
      ).toEqual([
        [SUGAR, 'DEDUCT', 'handed_over', ledger, undefined, undefined],
        [MILK, 'DEDUCT', 'handed_over', ledger, undefined, undefined],
      ]);
      expect(closed.submissions).toBe(1);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('signed');
      await expectNeverNeededAttention(s, handle);

      // The ledger moves the stock after the sale closed: each line alone (the budget was idle), under the line's
      // reference, at its branch's id; items go in no set order.
      await settledLedger(s, 2);
      expect(byReference(s.movementsSent())).toEqual([
        {
          businessId: input.businessId,
          branchId: FIRST_BRANCH,
          itemId: SUGAR,
          action: 'DEDUCT',
          quantity: 2,
          unitPrice: 250,
          referenceId: stockReferenceId(key, 0, 'DEDUCT'),
        },
        {
          businessId: input.businessId,
          branchId: FIRST_BRANCH,
          itemId: MILK,
          action: 'DEDUCT',
          quantity: 1,
          unitPrice: 65,
          referenceId: stockReferenceId(key, 1, 'DEDUCT'),
        },
      ]);
      expect(stock.onHand(SUGAR)).toBe(98);
      expect(stock.onHand(MILK)).toBe(99);
    });
  });

  it('hands its stock over itself, once, when the signing activity could not, and keeps its branch and its own refund window in its result', async () => {
    let tries = 0;
    const handOverStock = async () => {
      tries++;
      if (tries === 1) throw new Error('Temporal cannot be reached');
      return { ledgerWorkflowId: 'stock-ledger:elsewhere', reporting: DEFAULT_STOCK_REPORTING };
    };
    await h.run({ handOverStock }, async (s) => {
      const input = s.saleInput({ branchId: 'BR-2', options: { refundWindowDays: 7 } });
      const closed = await (await s.startSale(input)).result();
      const handOvers = s.calls.filter((c) => c.name === 'handOverStock');
      // The signing activity's attempt failed and left the hand-over to the sale: a local activity on its own queue.
      expect(handOvers.map((c) => c.taskQueue)).toEqual([complianceTaskQueue(s.taskQueue), s.taskQueue]);
      expect(s.inputs('handOverStock').map((i) => i.branchId)).toEqual(['BR-2', 'BR-2']);
      expect(closed.step).toBe('completed');
      expect(closed.stockMovements.map((m) => [m.status, m.ledger])).toEqual([
        ['handed_over', 'stock-ledger:elsewhere'],
        ['handed_over', 'stock-ledger:elsewhere'],
      ]);
      expect(closed.branchId).toBe('BR-2');
      expect(Date.parse(closed.refundDeadline!) - Date.parse(closed.signedAt!)).toBe(7 * DAY);
    });
  });

  it('signs a credit note for a refund on day 29, after the sale closed, and hands the tracked goods back to the stock ledger: the refund workflow ends refunded', async () => {
    const checkItems = async ({ itemIds }: { itemIds: string[] }) => ({
      items: itemIds.map((itemId) => ({ itemId, registered: true, stockTracked: itemId !== VOUCHER, unitPrice: null })),
    });
    const stock = stockModel();
    await h.run({ checkItems, adjustStock: (movement) => stock.apply(movement) }, async (s) => {
      const input = s.saleInput({
        lines: [
          { itemId: SUGAR, quantity: 2, unitPrice: 250 },
          { itemId: MILK, quantity: 1, unitPrice: 65 },
          { itemId: VOUCHER, quantity: 1, unitPrice: 1000 },
        ],
      });
      const sale = await s.startSale(input);
      const signed = await sale.result();
      expect(signed.step).toBe('completed');
      expect(signed.stockMovements.map((m) => m.itemId)).toEqual([SUGAR, MILK]);
      await settledLedger(s, 2);
      await s.env.sleep(29 * DAY);

      const request = refundRequest();
      const { handle, answer } = await s.refund(input.traderInvoiceNumber, request);
      const result = await answer;
      const cnKey = creditNoteIdempotencyKey(input.businessId, input.traderInvoiceNumber, request.traderInvoiceNumber);
      const ledger = stockLedgerWorkflowId(s.taskQueue, input.businessId, FIRST_BRANCH);
      expect(result.creditNote).toEqual(creditNoteDocument({ traderInvoiceNumber: request.traderInvoiceNumber }));
      // The refund answers once the ledger has taken the restock lines; it sends them on its own time.
      expect(result.stockMovements).toEqual([
        {
          referenceId: stockReferenceId(cnKey, 0, 'ADD'),
          itemId: SUGAR,
          action: 'ADD',
          quantity: 2,
          unitPrice: 250,
          status: 'handed_over',
          ledger,
        },
        {
          referenceId: stockReferenceId(cnKey, 1, 'ADD'),
          itemId: MILK,
          action: 'ADD',
          quantity: 1,
          unitPrice: 65,
          status: 'handed_over',
          ledger,
        },
      ]);
      // The refund read the closed sale's result, not the service.
      expect(s.inputs('findSignedSale')).toEqual([
        { businessId: input.businessId, traderInvoiceNumber: input.traderInvoiceNumber },
      ]);
      expect(s.inputs('readSaleRecord')).toEqual([]);
      // A credit note's callback URL counts from the refund's start, a month after the sale's.
      const refundStart = (await handle.describe()).startTime.getTime();
      expect(s.inputs('createCreditNote')).toEqual([
        {
          businessId: input.businessId,
          workflowId: handle.workflowId,
          saleId: signed.sale!.id,
          traderInvoiceNumber: request.traderInvoiceNumber,
          returnDate: request.returnDate,
          reason: '01',
          idempotencyKey: cnKey,
          callbackAnchorMs: refundStart,
        },
      ]);
      expect(refundStart - (await sale.describe()).startTime.getTime()).toBeGreaterThanOrEqual(29 * DAY);
      expect(s.sequence()).toEqual([
        'checkItems',
        'createSale',
        'handOverStock',
        'enterFiscalDay',
        'findSignedSale',
        'createCreditNote',
        'enterFiscalDay',
        'handOverStock',
      ]);
      // The restock lines are the refund's, and nobody is told which movement carries them.
      expect(s.inputs('handOverStock')[1]).toEqual({
        businessId: input.businessId,
        taskQueue: s.taskQueue,
        lines: [
          {
            lineId: stockReferenceId(cnKey, 0, 'ADD'),
            saleWorkflowId: handle.workflowId,
            itemId: SUGAR,
            action: 'ADD',
            quantity: 2,
            unitPrice: 250,
          },
          {
            lineId: stockReferenceId(cnKey, 1, 'ADD'),
            saleWorkflowId: handle.workflowId,
            itemId: MILK,
            action: 'ADD',
            quantity: 1,
            unitPrice: 65,
          },
        ],
      });

      expect(await handle.result()).toEqual(result);
      const refunded = await s.refundState(handle);
      expect(refunded.step).toBe('completed');
      expect(refunded.history.at(-1)?.event).toBe('refunded; closed');
      expect(refunded.sale).toEqual(signed.sale);
      expect(refunded.creditNote).toEqual(result.creditNote);
      expect([refunded.signedAt, refunded.refundDeadline]).toEqual([signed.signedAt, signed.refundDeadline]);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('refunded');
      // The sale itself is untouched: its result and its search attribute are those of its close.
      expect(await sale.result()).toEqual(signed);
      expect(await s.searchAttribute(sale, FiscalStatus)).toBe('signed');

      // The ledger puts the goods back, each restock line alone, after the sale's movements.
      await eventually(
        () => s.movementsSent().length,
        (n) => n === 4,
        { timeoutMs: 20_000, intervalMs: 50, what: 'the restock sent' },
      );
      const sent = (m: { itemId: string; action: string; referenceId: string }) => ({
        itemId: m.itemId,
        action: m.action,
        referenceId: m.referenceId,
      });
      expect(byReference(s.movementsSent().map(sent))).toEqual(
        byReference([
          { itemId: SUGAR, action: 'DEDUCT', referenceId: signed.stockMovements[0]!.referenceId },
          { itemId: MILK, action: 'DEDUCT', referenceId: signed.stockMovements[1]!.referenceId },
          { itemId: SUGAR, action: 'ADD', referenceId: stockReferenceId(cnKey, 0, 'ADD') },
          { itemId: MILK, action: 'ADD', referenceId: stockReferenceId(cnKey, 1, 'ADD') },
        ]),
      );
      expect(s.movementsSent().map((m) => m.action)).toEqual(['DEDUCT', 'DEDUCT', 'ADD', 'ADD']);
      await eventually(
        () => stock.onHand(SUGAR) === 100 && stock.onHand(MILK) === 100,
        (back) => back,
        { timeoutMs: 20_000, intervalMs: 50, what: 'the goods back in stock' },
      );
      expect(stock.recorded.filter((m) => m.quantity > 0)).toHaveLength(4);
    });
  });

  it.each([
    ['damaged goods (reason 03)', { reason: '03' as const }],
    ['wasted goods (reason 04)', { reason: '04' as const }],
    ['restock: false', { reason: '01' as const, restock: false }],
  ])('puts nothing back in stock for %s', async (_label, overrides) => {
    await h.run({}, async (s) => {
      const input = s.saleInput();
      await (await s.startSale(input)).result();
      const { handle, answer } = await s.refund(input.traderInvoiceNumber, refundRequest(overrides));
      const result = await answer;
      expect(result.stockMovements).toEqual([]);
      expect(result.creditNote.status).toBe('completed');
      expect(s.inputs('createCreditNote').map((c) => c.reason)).toEqual([overrides.reason]);
      expect((await handle.result()).stockMovements).toEqual([]);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('refunded');
      // Handed over once, at signing: the refund handed nothing to the ledger, which moved only the sale's goods.
      expect(s.sequence().filter((n) => n === 'handOverStock')).toHaveLength(1);
      await settledLedger(s, 2);
      expect(s.movementsSent().map((m) => m.action)).toEqual(['DEDUCT', 'DEDUCT']);
    });
  });

  it("refuses a refund once the sale's refund window is over: the refund workflow fails invalid_operation, and so does its update; a sale's own longer window holds", async () => {
    await h.run({}, async (s) => {
      const input = s.saleInput();
      const longer = s.saleInput({ options: { refundWindowDays: 45 } });
      const sale = await (await s.startSale(input)).result();
      await (await s.startSale(longer)).result();
      await s.env.sleep(31 * DAY);

      const { handle, answer } = await s.refund(input.traderInvoiceNumber, refundRequest());
      const refusal = await expectRefusedAs(answer, FAILURE_TYPES.invalidOperation, /refund window of the sale ended/);
      expect(refusal.message).toBe(`the refund window of the sale ended at ${sale.refundDeadline}`);
      // The run fails with the same refusal, so a corrected refund may start again under the same id.
      expect(await s.ended(handle)).toEqual({
        status: 'FAILED',
        failure: { type: FAILURE_TYPES.invalidOperation, message: refusal.message, nonRetryable: true },
      });
      expect((await s.refundState(handle)).step).toBe('failed');
      expect(count(s, 'createCreditNote')).toBe(0);

      // The other sale's 45 days are not over: its refund is signed.
      const within = await s.refund(longer.traderInvoiceNumber, refundRequest());
      expect((await within.answer).creditNote.status).toBe('completed');
      expect(s.inputs('createCreditNote').map((c) => c.workflowId)).toEqual([within.handle.workflowId]);
    });
  });

  it('refuses a refund of a sale that is not signed (parked, then cancelled) or has no workflow and no sale id given, before anything is filed', async () => {
    const createSale = async () =>
      submission.rejected(failed('invalid customer PIN'), [
        { code: 'authority_rejected', message: 'invalid customer PIN' },
      ]);
    await h.run({ createSale }, async (s) => {
      const input = s.saleInput();
      const sale = await s.startSale(input);
      await s.waitFor(sale, (st) => st.step === 'parked');
      const parked = await s.refund(input.traderInvoiceNumber, refundRequest());
      await expectUpdateRefused(parked.answer, /^the sale is not signed \(step parked, run running\)$/);
      expect(await s.ended(parked.handle)).toMatchObject({
        status: 'FAILED',
        failure: { type: FAILURE_TYPES.invalidOperation },
      });

      await sale.executeUpdate(cancelUpdate, { args: [{ reason: 'customer walked away' }] });
      expect((await s.settled(sale)).step).toBe('cancelled');
      // A refused refund leaves its id free: asked again, it is refused again, the sale now cancelled.
      const cancelled = await s.refund(input.traderInvoiceNumber, refundRequest());
      await expectUpdateRefused(cancelled.answer, /^the sale is not signed \(step cancelled, run completed\)$/);
      // Refused from what the sale's run says, before the refund took any of the budget: only the sale placed itself.
      expect(s.calls.filter((c) => c.name === 'placeBusiness').map((c) => c.workflowType)).toEqual([
        SALE_WORKFLOW_TYPE,
      ]);

      const never = await s.refund('INV-NEVER-SOLD', refundRequest());
      await expectUpdateRefused(never.answer, /sale's workflow is not found .*give the service's sale id as saleId/);
      expect(count(s, 'createCreditNote')).toBe(0);
      expect(count(s, 'readSaleRecord')).toBe(0);
    });
  });

  it('refuses a refund the service says is credited already (another credit note reversed the sale): nothing parks', async () => {
    const createCreditNote = async () => {
      throw ApplicationFailure.create({
        type: FAILURE_TYPES.alreadyCredited,
        message: 'sale sal_1 was already credited by cn_9',
        nonRetryable: true,
      });
    };
    await h.run({ createCreditNote }, async (s) => {
      const input = s.saleInput();
      // Read by query, not by awaiting the result: that would let the test server skip time past the sale's window.
      await s.waitFor(await s.startSale(input), (st) => st.step === 'completed');
      const { handle, answer } = await s.refund(input.traderInvoiceNumber, refundRequest());
      await expectRefusedAs(answer, FAILURE_TYPES.alreadyCredited, /already credited by cn_9/);
      expect(await s.ended(handle)).toMatchObject({
        status: 'FAILED',
        failure: { type: FAILURE_TYPES.alreadyCredited },
      });
      const state = await s.refundState(handle);
      expect(state).toMatchObject({ step: 'failed', parked: null });
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      expect(count(s, 'handOverStock')).toBe(1);
    });
  });

  it("refunds a sale whose workflow is gone from the service's record, given the sale's id: its stock-tracked lines go back at the branch named", async () => {
    let signedOn = '';
    const readSaleRecord = async ({ documentId }: { documentId: string }) => ({
      document: saleDocument({
        id: documentId,
        traderInvoiceNumber: 'INV-OLD',
        receipt: { ...receipt(), scuDate: signedOn },
      }),
      saleDate: '2026-11-21',
      lines: [
        { itemId: SUGAR, quantity: 2, unitPrice: 250 },
        { itemId: VOUCHER, quantity: 1, unitPrice: 1000 },
      ],
    });
    const checkItems = async ({ itemIds }: { itemIds: string[] }) => ({
      items: itemIds.map((itemId) => ({ itemId, registered: true, stockTracked: itemId !== VOUCHER, unitPrice: null })),
    });
    await h.run({ readSaleRecord, checkItems }, async (s) => {
      const [day, month, year] = new Date(await s.env.currentTimeMs()).toISOString().slice(0, 10).split('-').reverse();
      signedOn = `${day}/${month}/${year}`;
      const request = refundRequest({ saleId: 'sal_old', branchId: 'BR-2' });
      const { handle, answer } = await s.refund('INV-OLD', request);
      const result = await answer;
      const cnKey = creditNoteIdempotencyKey(s.businessId, 'INV-OLD', request.traderInvoiceNumber);
      expect(result.stockMovements).toEqual([
        {
          referenceId: stockReferenceId(cnKey, 0, 'ADD'),
          itemId: SUGAR,
          action: 'ADD',
          quantity: 2,
          unitPrice: 250,
          status: 'handed_over',
          ledger: stockLedgerWorkflowId(s.taskQueue, s.businessId, 'BR-2'),
        },
      ]);
      expect(s.inputs('readSaleRecord')).toEqual([{ businessId: s.businessId, documentId: 'sal_old' }]);
      expect(s.inputs('createCreditNote').map((c) => c.saleId)).toEqual(['sal_old']);
      expect(s.sequence()).toEqual([
        'findSignedSale',
        'readSaleRecord',
        'checkItems',
        'createCreditNote',
        'enterFiscalDay',
        'handOverStock',
      ]);
      const refunded = await s.refundState(handle);
      expect(refunded).toMatchObject({ step: 'completed', branchId: 'BR-2', signedAt: `${year}-${month}-${day}` });
      expect(Date.parse(refunded.refundDeadline!) - Date.parse(refunded.signedAt!)).toBe(30 * DAY);
    });
  });

  it('refuses invalid refund arguments in the validator, and another request while the credit note is with the authority (already_credited); the same request again joins it', async () => {
    const createCreditNote = async ({ traderInvoiceNumber }: { traderInvoiceNumber: string }) =>
      submission.inFlight(creditNoteDocument({ traderInvoiceNumber, status: 'pending', receipt: null }));
    const awaitDocumentOutcome = async ({ documentId }: { documentId: string }) => {
      throw documentInFlight(documentId, 'pending');
    };
    await h.run({ createCreditNote, awaitDocumentOutcome }, async (s) => {
      const input = s.saleInput();
      await (await s.startSale(input)).result();
      const request = refundRequest();
      const first = await s.refund(input.traderInvoiceNumber, request);
      const { handle } = first;
      await s.waitForRefund(handle, (st) => st.step === 'awaiting_outcome' && st.creditNote?.status === 'pending');

      // Checked against the refund schema (src/contracts/sale-input.ts): an argument it cannot use is invalid_input.
      const bad: Array<[RefundRequest, RegExp]> = [
        [refundRequest({ reason: '07' as RefundRequest['reason'] }), /reason must be one of 01, 02, 03, 04, 05, 06/],
        [refundRequest({ returnDate: '22/11/2026' }), /returnDate must be a date in the form YYYY-MM-DD/],
        [refundRequest({ traderInvoiceNumber: '' }), /traderInvoiceNumber must not be empty/],
        [refundRequest({ traderInvoiceNumber: 'x'.repeat(51) }), /traderInvoiceNumber must be at most 50 characters/],
      ];
      for (const [argument, message] of bad)
        await expectInvalidArgument(handle.executeUpdate(refundUpdate, { args: [argument] }), message);
      await expectInvalidArgument(handle.executeUpdate('refund'), /^refund needs .*: no data was given/);

      const conflict = await expectRefusedAs(
        (await s.refund(input.traderInvoiceNumber, refundRequest())).answer,
        FAILURE_TYPES.alreadyCredited,
        /already refunded with another request: traderInvoiceNumber differs$/,
      );
      expect(conflict.details?.[0]).toEqual({ fields: ['traderInvoiceNumber'] });
      await expectRefusedAs(
        handle.executeUpdate(refundUpdate, { args: [{ ...request, reason: '06' }] }),
        FAILURE_TYPES.alreadyCredited,
        /reason differs$/,
      );
      expect(await acceptedUpdates(handle)).toEqual(['refund']);
      expect((await s.refundState(handle)).step).toBe('awaiting_outcome');

      const again = await s.refund(input.traderInvoiceNumber, request);
      await eventually(
        () => acceptedUpdates(handle),
        (names) => names.length === 2,
        { intervalMs: 20, what: 'the same request accepted' },
      );
      // The authority signs it; the callback's hint has the credit note read (getDocument finds it signed).
      await handle.signal(callbackReceivedSignal, {
        documentId: 'crn_1',
        event: 'credit_note.completed',
        callbackId: 'cbk_1',
      });
      const [answer, answerAgain] = await Promise.all([first.answer, again.answer]);
      expect(answer.creditNote).toMatchObject({
        id: 'crn_1',
        type: 'credit_note',
        status: 'completed',
        receipt: { receiptLabel: 'NC' },
      });
      expect(answerAgain).toEqual(answer);
      expect(await handle.result()).toEqual(answer);
      expect(s.inputs('createCreditNote').map((c) => c.traderInvoiceNumber)).toEqual([request.traderInvoiceNumber]);
      expect(s.inputs('getDocument')).toEqual([{ businessId: s.businessId, documentId: 'crn_1' }]);
    });
  });

  it('parks a refund whose credit note meets a refused item check, then a rejection, for a retry only (no cancel: the sale is signed); a retry files the credit note again', async () => {
    let checks = 0;
    const checkItems = async ({
      businessId,
      itemIds,
      fresh,
    }: {
      businessId: string;
      itemIds: string[];
      fresh?: boolean;
    }) => {
      if (fresh && ++checks === 1)
        throw refusal(FAILURE_TYPES.itemNotFound, `business ${businessId} has no item ${SUGAR}`);
      return { items: itemIds.map((itemId) => ({ itemId, registered: true, stockTracked: true, unitPrice: null })) };
    };
    const rejected = (traderInvoiceNumber?: string) =>
      submission.rejected(
        creditNoteDocument({
          ...(traderInvoiceNumber ? { traderInvoiceNumber } : {}),
          status: 'failed',
          receipt: null,
        }),
        [{ code: 'authority_rejected', message: 'Item not registered' }],
      );
    let fixed = false;
    const createCreditNote = async ({ traderInvoiceNumber }: { traderInvoiceNumber: string }) =>
      rejected(traderInvoiceNumber);
    const retrySale = async ({ documentId }: { documentId: string }) =>
      fixed ? submission.signed(creditNoteDocument({ id: documentId })) : rejected();
    await h.run({ checkItems, createCreditNote, retrySale }, async (s) => {
      const input = s.saleInput();
      await (await s.startSale(input)).result();
      const { handle, answer } = await s.refund(input.traderInvoiceNumber, refundRequest());
      const parked = await s.waitForRefund(handle, (st) => st.step === 'parked');
      expect(parked.parked).toMatchObject({ code: FAILURE_TYPES.itemNotFound, actions: ['retry'] });
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);
      // A refund has no cancel: its sale is signed, and this credit note is the way back to the books.
      const cancel = await updateRefusal(
        handle.executeUpdate(cancelUpdate, { args: [{ reason: 'customer walked away' }] }),
      );
      expect(cancel.message).toBe('No registered handler for update: cancel');
      expect(await acceptedUpdates(handle)).toEqual(['refund']);

      await handle.executeUpdate(retryUpdate);
      const again = await s.waitForRefund(
        handle,
        (st) => st.step === 'parked' && st.parked?.code === 'authority_rejected',
      );
      expect(again.parked?.actions).toEqual(['retry']);
      expect(count(s, 'retrySale')).toBe(0);

      fixed = true;
      await handle.executeUpdate(retryUpdate);
      const result = await answer;
      expect(result.creditNote).toMatchObject({ id: 'crn_1', status: 'completed' });
      expect(s.inputs('retrySale')).toEqual([{ businessId: s.businessId, documentId: 'crn_1' }]);
      expect(count(s, 'createCreditNote')).toBe(1);
      expect(result.stockMovements.map((m) => m.action)).toEqual(['ADD', 'ADD']);
      const closed = await s.refundState(handle);
      expect(closed.step).toBe('completed');
      expect(closed.history.filter((e) => e.event.startsWith('parked')).map((e) => e.event)).toEqual([
        `parked: ${FAILURE_TYPES.itemNotFound}`,
        'parked: authority_rejected',
      ]);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('refunded');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
    });
  });
});

describe('awaiting the authority', () => {
  // Three hours of polls and two days parked: about 200 workflow tasks, slow on a loaded machine.
  it(
    'parks outcome_timeout when no outcome comes within outcomeTimeout (hours), and signs when the retry reads it settled',
    { timeout: 120_000 },
    async () => {
      const createSale = async () => submission.inFlight(pending());
      const awaitDocumentOutcome = async ({ documentId }: { documentId: string }) => {
        throw documentInFlight(documentId, 'pending');
      };
      await h.run({ createSale, awaitDocumentOutcome }, async (s) => {
        const handle = await s.startSale(s.saleInput({ options: { outcomeTimeout: '3 hours' } }));
        await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
        const started = await s.env.currentTimeMs();
        await s.env.sleep(3 * HOUR + MINUTE);

        const parked = await s.waitFor(handle, (st) => st.step === 'parked');
        expect(parked.parked).toMatchObject({
          code: 'outcome_timeout',
          message: 'no outcome from the authority within 3 hours',
          actions: ['retry', 'cancel'],
        });
        expect(Date.parse(parked.parked!.since) - started).toBeGreaterThanOrEqual(3 * HOUR - MINUTE);
        expect(parked.sale?.status).toBe('pending');
        // Polled through activity retries (backoff up to a minute) for the whole three hours.
        const polls = s.inputs('awaitDocumentOutcome');
        expect(polls.length).toBeGreaterThan(150);
        expect(new Set(polls.map((p) => p.documentId))).toEqual(new Set(['sal_1']));
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);

        // Parked means nothing happens by itself, for days.
        await s.env.sleep(2 * DAY);
        expect(count(s, 'awaitDocumentOutcome')).toBe(polls.length);
        expect((await s.state(handle)).step).toBe('parked');

        await handle.executeUpdate(retryUpdate);
        const closed = await s.settled(handle);
        expect(closed.step).toBe('completed');
        expect(closed.sale).toMatchObject({ status: 'completed', receipt: { cuInvoiceNo: 'KRACU0100000001/1' } });
        // The retry read the document first and found it signed: nothing was resubmitted.
        expect(s.inputs('getDocument')).toEqual([{ businessId: s.businessId, documentId: 'sal_1' }]);
        expect(count(s, 'retrySale')).toBe(0);
        expect(closed.submissions).toBe(1);
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      });
    },
  );

  it('after an outcome timeout, resubmits a document the authority failed meanwhile', async () => {
    const createSale = async () => submission.inFlight(pending());
    const awaitDocumentOutcome = async ({ documentId }: { documentId: string }) => {
      throw documentInFlight(documentId, 'pending');
    };
    const getDocument = async () => ({ document: failed() });
    await h.run({ createSale, awaitDocumentOutcome, getDocument }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { outcomeTimeout: '90 minutes' } }));
      await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      await s.env.sleep(2 * HOUR);
      await s.waitFor(handle, (st) => st.parked?.code === 'outcome_timeout');
      await handle.executeUpdate(retryUpdate);
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      expect(s.sequence()).toEqual([
        'checkItems',
        'createSale',
        'getDocument',
        'retrySale',
        'enterFiscalDay',
        'handOverStock',
      ]);
      expect(s.inputs('retrySale')).toEqual([{ businessId: s.businessId, documentId: 'sal_1' }]);
      expect(closed.submissions).toBe(2);
    });
  });

  it('stops polling on a callback, reads the document, and closes once it reads it signed: a later callback finds no sale to wake', async () => {
    let authoritySigned = false;
    const createSale = async () => submission.inFlight(pending());
    const awaitDocumentOutcome = async ({ documentId }: { documentId: string }) => {
      throw documentInFlight(documentId, 'pending');
    };
    const getDocument = async ({ documentId }: { documentId: string }) => ({
      document: authoritySigned ? saleDocument({ id: documentId }) : pending(),
    });
    await h.run({ createSale, awaitDocumentOutcome, getDocument }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      await eventually(
        () => count(s, 'awaitDocumentOutcome'),
        (n) => n > 0,
        { intervalMs: 10 },
      );

      // A hint the service does not confirm: one read, still pending, and it goes on waiting.
      await handle.signal(callbackReceivedSignal, {
        documentId: 'sal_1',
        event: 'sale.completed',
        callbackId: 'cbk_1',
      });
      await eventually(
        () => count(s, 'getDocument'),
        (n) => n === 1,
        { intervalMs: 10 },
      );
      const still = await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      expect(still.sale?.status).toBe('pending');
      expect(still.stockMovements).toEqual([]);

      authoritySigned = true;
      await handle.signal(callbackReceivedSignal, {
        documentId: 'sal_1',
        event: 'sale.completed',
        callbackId: 'cbk_2',
      });
      const closed = await s.settled(handle);
      expect(closed).toMatchObject({ step: 'completed', submissions: 1, sale: { status: 'completed' } });
      expect(closed.sale).toMatchObject({ receipt: { cuInvoiceNo: 'KRACU0100000001/1' } });
      expect(s.inputs('getDocument')).toEqual([
        { businessId: s.businessId, documentId: 'sal_1' },
        { businessId: s.businessId, documentId: 'sal_1' },
      ]);
      // The poll was stopped by the hint, not answered: none came after the read that found the sale signed. (A
      // retry of the poll may start between the signal's sending and its handling: that one is before the read.)
      const names = s.calls.map((c) => c.name);
      expect(names.lastIndexOf('awaitDocumentOutcome')).toBeLessThan(names.lastIndexOf('getDocument'));
      expect(s.sequence().filter((n) => n !== 'getDocument')).toEqual([
        'checkItems',
        'createSale',
        'enterFiscalDay',
        'handOverStock',
      ]);

      // A duplicate or stale callback after that reaches no running sale: the receiver's signal is refused.
      const late = await handle
        .signal(callbackReceivedSignal, { documentId: 'sal_1', event: 'sale.failed', callbackId: 'cbk_1' })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(late).toBeInstanceOf(WorkflowNotFoundError);
      expect(count(s, 'getDocument')).toBe(2);
    });
  });

  it('does not poll a document whose callback is announced: the callback alone leads to one read', async () => {
    let authoritySigned = false;
    const createSale = async () => ({ ...submission.inFlight(pending()), outcomeAnnounced: true });
    const getDocument = async ({ documentId }: { documentId: string }) => ({
      document: authoritySigned ? saleDocument({ id: documentId }) : pending(),
    });
    await h.run({ createSale, getDocument }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      authoritySigned = true;
      await handle.signal(callbackReceivedSignal, {
        documentId: 'sal_1',
        event: 'sale.completed',
        callbackId: 'cbk_1',
      });
      const signed = await s.settled(handle);
      expect(signed.sale).toMatchObject({ status: 'completed' });
      expect(count(s, 'awaitDocumentOutcome')).toBe(0);
      expect(count(s, 'getDocument')).toBe(1);
    });
  });

  it('polls a document whose announced callback is overdue (10 s), and signs by the poll', async () => {
    const createSale = async () => ({ ...submission.inFlight(pending()), outcomeAnnounced: true });
    await h.run({ createSale }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      expect(count(s, 'awaitDocumentOutcome')).toBe(0);
      await s.env.sleep(11_000);
      const signed = await s.waitFor(handle, (st) => st.step === 'completed');
      expect(count(s, 'awaitDocumentOutcome')).toBe(1);
      const [created, polled] = s.calls.filter((c) => c.name === 'createSale' || c.name === 'awaitDocumentOutcome');
      expect(polled!.scheduledAtMs - created!.scheduledAtMs).toBeGreaterThanOrEqual(10_000);
      expect(signed.sale).toMatchObject({ status: 'completed' });
    });
  });

  it('resubmits a document that failed in flight by itself (no cause given counts as transient)', async () => {
    const createSale = async () => submission.inFlight(pending());
    const awaitDocumentOutcome = async () => ({ document: failed('authority timed out') });
    await h.run({ createSale, awaitDocumentOutcome }, async (s) => {
      const closed = await (await s.startSale(s.saleInput())).result();
      expect(closed.step).toBe('completed');
      expect(closed.parked).toBeNull();
      expect(closed.submissions).toBe(2);
      // It waited on its application's outage watch, which had it probe at once: the resubmission got through.
      expect(s.sequence()).toEqual([
        'checkItems',
        'createSale',
        'joinOutageWatch',
        'retrySale',
        'enterFiscalDay',
        'handOverStock',
      ]);
    });
  });
});

describe('rejections', () => {
  const unavailable = () =>
    submission.rejected(failed('The authority is unavailable'), [
      { code: 'authority_unavailable', message: 'The authority is unavailable' },
    ]);

  it('retries authority_unavailable with a growing backoff up to a transientRetryLimit of 5, then parks; a retry then signs', async () => {
    let authorityBack = false;
    const retrySale = async ({ documentId }: { documentId: string }) =>
      authorityBack ? submission.signed(saleDocument({ id: documentId })) : unavailable();
    await h.run({ createSale: async () => unavailable(), retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { transientRetryLimit: 5 } }));
      await s.env.sleep(10 * MINUTE);
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked).toMatchObject({ code: 'authority_unavailable', actions: ['retry', 'cancel'] });
      expect(parked.parked?.message).toBe('The authority is unavailable (still failing after 5 automatic retries)');
      expect(parked.submissions).toBe(6);
      expect(parked.sale?.status).toBe('failed');
      expect(s.inputs('retrySale')).toEqual(Array(5).fill({ businessId: s.businessId, documentId: 'sal_1' }));
      const times = s.calls
        .filter((c) => c.name === 'createSale' || c.name === 'retrySale')
        .map((c) => c.scheduledAtMs);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      gaps.forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual(2 ** (i + 1) * 1000);
        expect(gap).toBeLessThan(2 ** (i + 1) * 1000 + 1500);
      });
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);

      authorityBack = true;
      await handle.executeUpdate(retryUpdate);
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      expect(closed.submissions).toBe(7);
      expect(closed.history.filter((e) => e.event.startsWith('parked')).map((e) => e.event)).toEqual([
        'parked: authority_unavailable',
      ]);
    });
  });

  it('honours a smaller transientRetryLimit', async () => {
    await h.run({ createSale: async () => unavailable(), retrySale: async () => unavailable() }, async (s) => {
      const handle = await s.startSale(s.saleInput({ options: { transientRetryLimit: 1 } }));
      await s.env.sleep(MINUTE);
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked?.message).toBe('The authority is unavailable (still failing after 1 automatic retry)');
      expect(parked.submissions).toBe(2);
    });
  });

  it('parks a hard rejection without retrying by itself, parks again while the cause remains, and signs once it is gone', async () => {
    const rejected = () =>
      submission.rejected(failed('The customer PIN is invalid'), [
        { code: 'authority_rejected', message: 'The customer PIN is invalid' },
      ]);
    let fixed = false;
    const retrySale = async ({ documentId }: { documentId: string }) =>
      fixed ? submission.signed(saleDocument({ id: documentId })) : rejected();
    await h.run({ createSale: async () => rejected(), retrySale }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked).toMatchObject({
        code: 'authority_rejected',
        message: 'The customer PIN is invalid',
        actions: ['retry', 'cancel'],
      });
      expect(parked.sale?.status).toBe('failed');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('failed');

      // Nothing happens by itself while parked, for a week.
      await s.env.sleep(7 * DAY);
      expect((await s.state(handle)).submissions).toBe(1);
      expect(count(s, 'retrySale')).toBe(0);

      await handle.executeUpdate(retryUpdate);
      const again = await s.waitFor(handle, (st) => st.step === 'parked' && st.submissions === 2);
      expect(again.parked?.code).toBe('authority_rejected');

      fixed = true;
      await handle.executeUpdate(retryUpdate);
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      expect(closed.submissions).toBe(3);
      expect(s.inputs('retrySale')).toHaveLength(2);
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('signed');
    });
  });

  it("cancels a parked sale on the operator's cancel, with the reason in its history, and reports no stock", async () => {
    const rejected = async () =>
      submission.rejected(failed('Invalid tax code'), [{ code: 'authority_rejected', message: 'Invalid tax code' }]);
    await h.run({ createSale: rejected }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.step === 'parked');
      await expectInvalidArgument(
        handle.executeUpdate(cancelUpdate, { args: [{ reason: '  ' }] }),
        /cancel needs \{"reason": "…"\}: reason must not be empty/,
      );
      expect(await acceptedUpdates(handle)).toEqual([]);
      await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'customer walked away' }] });
      const closed = await s.settled(handle);
      expect(closed.step).toBe('cancelled');
      expect(closed.parked).toBeNull();
      expect(closed.stockMovements).toEqual([]);
      expect(closed.history.at(-1)?.event).toBe('cancelled: customer walked away');
      expect(count(s, 'handOverStock')).toBe(0);
      expect(count(s, 'adjustStock')).toBe(0);
      expect(await acceptedUpdates(handle)).toEqual(['cancel']);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('cancelled');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
    });
  });

  it('refuses operator actions that do not fit a sale or a refund whose document is with the authority', async () => {
    const createSale = async () => submission.inFlight(pending());
    const createCreditNote = async ({ traderInvoiceNumber }: { traderInvoiceNumber: string }) =>
      submission.inFlight(creditNoteDocument({ traderInvoiceNumber, status: 'pending', receipt: null }));
    const awaitDocumentOutcome = async ({ documentId }: { documentId: string }) => {
      throw documentInFlight(documentId, 'pending');
    };
    await h.run({ createSale, awaitDocumentOutcome }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const waiting = await s.waitFor(handle, (st) => st.step === 'awaiting_outcome');
      await expectUpdateRefused(handle.executeUpdate(retryUpdate), /retry is possible only while the sale is parked/);
      await expectUpdateRefused(
        handle.executeUpdate(cancelUpdate, { args: [{ reason: 'changed my mind' }] }),
        /cancel is possible only while the sale is parked and unsigned/,
      );
      expect(await s.state(handle)).toEqual(waiting);
      expect(await acceptedUpdates(handle)).toEqual([]);
    });
    await h.run({ createCreditNote, awaitDocumentOutcome }, async (s) => {
      const input = s.saleInput();
      await (await s.startSale(input)).result();
      const { handle } = await s.refund(input.traderInvoiceNumber, refundRequest());
      const waiting = await s.waitForRefund(handle, (st) => st.step === 'awaiting_outcome');
      await expectUpdateRefused(handle.executeUpdate(retryUpdate), /retry is possible only while the sale is parked/);
      await expectUpdateRefused(
        handle.executeUpdate(itemFixedUpdate, { args: [{ itemId: SUGAR }] }),
        new RegExp(`item ${SUGAR} is not waiting for a fix`),
      );
      expect(await s.refundState(handle)).toEqual(waiting);
      expect(await acceptedUpdates(handle)).toEqual(['refund']);
    });
  });
});

describe('items', () => {
  const unregistered =
    (missing: string) =>
    async ({ itemIds }: { itemIds: string[] }) => ({
      items: itemIds.map((itemId) => ({ itemId, registered: itemId !== missing, stockTracked: true, unitPrice: null })),
    });
  const needsFixing = {
    outcome: 'needs_fixing' as const,
    needs: { productType: true, classificationMapping: false },
  };

  it('fails the sale when an item still needs fixing after itemFixDeadline, without ever creating it', async () => {
    await h.run({ checkItems: unregistered(MILK), registerItem: async () => needsFixing }, async (s) => {
      const input = s.saleInput({ options: { itemFixDeadline: '3 days' } });
      const handle = await s.startSale(input);
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked).toMatchObject({ code: 'item_needs_fixing', actions: ['itemFixed'], itemIds: [MILK] });
      expect(s.inputs('requestItemRegistration')).toEqual([
        {
          businessId: s.businessId,
          itemId: MILK,
          waiterWorkflowId: handle.workflowId,
          taskQueue: s.taskQueue,
          fixDeadline: '3 days',
        },
      ]);
      // Coordination runs on the sale's own queue, next to the workflows.
      expect(s.calls.find((c) => c.name === 'requestItemRegistration')?.taskQueue).toBe(s.taskQueue);
      expect(await s.registrationState(MILK)).toMatchObject({
        status: 'needs_fixing',
        needs: needsFixing.needs,
        waiters: [handle.workflowId],
      });
      expect(await s.searchAttribute(handle, AttentionReason)).toBe('item_needs_fixing');
      expect(await s.searchAttribute(s.registration(MILK), AttentionReason)).toBe('item_needs_fixing');

      const failure = await handle.result().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const cause = (failure as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe(FAILURE_TYPES.itemRegistrationFailed);
      expect((cause as ApplicationFailure).message).toContain(MILK);
      expect(await serverElapsed(s, handle)).toBeGreaterThanOrEqual(3 * DAY);
      expect(await s.registration(MILK).result()).toMatchObject({ itemId: MILK, status: 'failed' });
      expect(count(s, 'createSale')).toBe(0);
      expect(count(s, 'registerItem')).toBe(1);
      expect(await s.searchAttribute(handle, FiscalStatus)).toBe('failed');
      expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);
      expect(await s.searchAttribute(handle, AttentionReason)).toBe(FAILURE_TYPES.itemRegistrationFailed);
    });
  });

  it('goes on with the sale once the operator fixes the item before the deadline', async () => {
    let fixed = false;
    const registerItem = async () => (fixed ? { outcome: 'registered' as const } : needsFixing);
    await h.run({ checkItems: unregistered(MILK), registerItem }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      await s.waitFor(handle, (st) => st.parked?.code === 'item_needs_fixing');
      await s.env.sleep(6 * DAY);
      expect((await s.state(handle)).parked?.code).toBe('item_needs_fixing');
      await expectUpdateRefused(
        handle.executeUpdate(itemFixedUpdate, { args: [{ itemId: SUGAR }] }),
        new RegExp(`item ${SUGAR} is not waiting for a fix`),
      );

      fixed = true;
      await handle.executeUpdate(itemFixedUpdate, { args: [{ itemId: MILK }] });
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      expect(s.sequence()).toEqual([
        'checkItems',
        'requestItemRegistration',
        'registerItem',
        'registerItem',
        'createSale',
        'enterFiscalDay',
        'handOverStock',
      ]);
      expect(await s.registration(MILK).result()).toMatchObject({ status: 'registered' });
    });
  });

  it('lets a second sale needing the same item join its registration; one fix unblocks both', async () => {
    let fixed = false;
    const registerItem = async () => (fixed ? { outcome: 'registered' as const } : needsFixing);
    await h.run({ checkItems: unregistered(MILK), registerItem }, async (s) => {
      const a = await s.startSale(s.saleInput());
      await s.waitFor(a, (st) => st.parked?.code === 'item_needs_fixing');
      const b = await s.startSale(s.saleInput());
      // The second sale hears the registration's latest outcome as soon as it joins.
      await s.waitFor(b, (st) => st.parked?.code === 'item_needs_fixing');
      expect((await s.registrationState(MILK)).waiters).toEqual([a.workflowId, b.workflowId]);

      fixed = true;
      await a.executeUpdate(itemFixedUpdate, { args: [{ itemId: MILK }] });
      const [sa, sb] = await Promise.all([s.settled(a), s.settled(b)]);
      expect([sa.step, sb.step]).toEqual(['completed', 'completed']);
      expect(count(s, 'requestItemRegistration')).toBe(2);
      expect(count(s, 'registerItem')).toBe(2);
      expect(count(s, 'createSale')).toBe(2);
      expect(await s.registration(MILK).result()).toMatchObject({
        status: 'registered',
        waiters: [a.workflowId, b.workflowId],
      });
    });
  });

  it('registers an item the service lists as unregistered after a rejection, then resubmits the same document', async () => {
    const createSale = async () =>
      submission.rejected(failed('Item not registered'), [
        { code: 'item_not_registered', message: 'Item not registered', itemId: MILK },
      ]);
    // Filed on a check that found every item registered; the service's list read after the rejection shows milk is not.
    let reads = 0;
    const checkItems = async ({ itemIds }: { itemIds: string[] }) => {
      const first = ++reads === 1;
      return {
        items: itemIds.map((itemId) => ({
          itemId,
          registered: first || itemId !== MILK,
          stockTracked: true,
          unitPrice: null,
        })),
      };
    };
    // The registration settles at once: the stub tells the sale itself, as the registration workflow would.
    const requestItemRegistration = async ({
      itemId,
      waiterWorkflowId,
    }: {
      itemId: string;
      waiterWorkflowId: string;
    }) => {
      await h.env.client.workflow
        .getHandle(waiterWorkflowId)
        .signal(itemRegistrationSettledSignal, { itemId, status: 'registered' });
    };
    await h.run({ createSale, requestItemRegistration, checkItems }, async (s) => {
      const closed = await s.settled(await s.startSale(s.saleInput()));
      expect(closed.step).toBe('completed');
      expect(closed.submissions).toBe(2);
      expect(s.sequence()).toEqual([
        'checkItems',
        'createSale',
        'checkItems',
        'requestItemRegistration',
        'retrySale',
        'enterFiscalDay',
        'handOverStock',
      ]);
      expect(s.inputs('requestItemRegistration')[0]).toMatchObject({ itemId: MILK });
      expect(s.inputs('retrySale')).toEqual([{ businessId: s.businessId, documentId: 'sal_1' }]);
    });
  });

  it('parks a refusal while checking items (item_not_found) and files nothing until an operator retries', async () => {
    let attempt = 0;
    const checkItems = async ({ businessId, itemIds }: { businessId: string; itemIds: string[] }) => {
      attempt++;
      if (attempt === 1)
        throw refusal(FAILURE_TYPES.itemNotFound, `business ${businessId} has no item itm_does_not_exist`);
      return {
        items: itemIds.map((itemId) => ({ itemId, registered: true, stockTracked: true, unitPrice: null })),
      };
    };
    await h.run({ checkItems }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const parked = await s.waitFor(handle, (st) => st.step === 'parked');
      expect(parked.parked).toMatchObject({ code: FAILURE_TYPES.itemNotFound, actions: ['retry', 'cancel'] });
      expect(parked.parked?.message).toContain('itm_does_not_exist');
      // A retry of its own would have come within seconds.
      await s.env.sleep(MINUTE);
      expect(s.sequence()).toEqual(['checkItems']);

      await handle.executeUpdate(retryUpdate);
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      expect(s.sequence()).toEqual(['checkItems', 'checkItems', 'createSale', 'handOverStock', 'enterFiscalDay']);
    });
  });
});

describe('placement on the budget', () => {
  it('asks which application serves the business before anything is sent, and carries its fairness key and search attribute', async () => {
    const placeBusiness = async () => ({ application: 'merchant-a', fairnessKey: 'app_merchant_a' });
    await h.run({ placeBusiness }, async (s) => {
      const handle = await s.startSale(s.saleInput());
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      // The sale asks as new work; the stock ledger it handed its lines to asks for itself, as work already taken.
      const placements = (workflowType: string) =>
        s.calls.filter((c) => c.name === 'placeBusiness' && c.workflowType === workflowType).map((c) => c.input);
      expect(placements(SALE_WORKFLOW_TYPE)).toEqual([{ businessId: s.businessId, newWork: true }]);
      await settledLedger(s, 2);
      expect(placements(STOCK_LEDGER_WORKFLOW_TYPE)).toEqual([{ businessId: s.businessId, newWork: false }]);
      expect(await s.searchAttribute(handle, Application)).toBe('merchant-a');
      const fairnessKeys = async (of: typeof handle | ReturnType<Scenario['ledger']>) =>
        ((await of.fetchHistory()).events ?? []).flatMap((e) => {
          const key = e.activityTaskScheduledEventAttributes?.priority?.fairnessKey;
          return key ? [key] : [];
        });
      // The sale's calls and the ledger's stock movements spend the same application's budget.
      for (const keys of [await fairnessKeys(handle), await fairnessKeys(s.ledger())]) {
        expect(keys.length).toBeGreaterThan(0);
        expect(new Set(keys)).toEqual(new Set(['app_merchant_a']));
      }
    });
  });

  describe('a business no application serves yet (business_not_served)', () => {
    const unservedUntil =
      (served: { now: boolean }) =>
      async ({ businessId }: { businessId: string }) => {
        if (!served.now)
          throw refusal(
            FAILURE_TYPES.businessNotServed,
            `business ${businessId} is served by no compliance application of tenants.json`,
          );
        return { application: 'merchant-a', fairnessKey: 'app_merchant_a' };
      };

    it('waits in view, sends nothing and needs nobody, then goes on by itself as soon as a worker says the business is served', async () => {
      const served = { now: false };
      await h.run({ placeBusiness: unservedUntil(served) }, async (s) => {
        const handle = await s.startSale(s.saleInput());
        const waiting = await s.waitFor(handle, (st) => st.step === 'awaiting_business');
        expect(waiting.parked).toBeNull();
        expect(waiting.awaitingBusiness).toMatchObject({ attempts: 1, since: expect.any(String) });
        expect(waiting.awaitingBusiness?.message).toContain('served by no compliance application');
        expect(await s.searchAttribute(handle, AttentionReason)).toBe(FAILURE_TYPES.businessNotServed);
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
        // A till asking hears why at once, not after its wait.
        const answer = await handle.executeUpdate(awaitReceiptUpdate, { args: [{ wait: '10 minutes' }] });
        expect(answer).toMatchObject({ signed: false, reason: expect.stringContaining('business_not_served') });
        expect(s.sequence()).toEqual([]);

        served.now = true;
        await handle.signal(businessServedSignal);
        const closed = await s.settled(handle);
        expect(closed.step).toBe('completed');
        expect(closed.awaitingBusiness).toBeNull();
        expect(closed.history.map((h) => h.event)).toContain('business served after 1 refused placement');
        expect(s.sequence()).toEqual(['checkItems', 'createSale', 'handOverStock', 'enterFiscalDay']);
        expect(await s.searchAttribute(handle, AttentionReason)).toBe('');
      });
    });

    it('tries again by itself when no worker tells it (a reload its visibility did not list), backing off to minutes', async () => {
      const served = { now: false };
      await h.run({ placeBusiness: unservedUntil(served) }, async (s) => {
        const handle = await s.startSale(s.saleInput());
        await s.waitFor(handle, (st) => st.step === 'awaiting_business');
        await s.env.sleep(HOUR);
        const state = await handle.query(getSaleStateQuery);
        // 5 s doubling to 5 minutes: about 17 tries in the first hour, not one a few seconds.
        expect(state.awaitingBusiness?.attempts).toBeGreaterThan(8);
        expect(state.awaitingBusiness?.attempts).toBeLessThan(25);
        expect(s.sequence()).toEqual([]);
        served.now = true;
        await s.env.sleep(5 * MINUTE);
        const closed = await s.settled(handle);
        expect(closed.step).toBe('completed');
      });
    });

    it("still unserved after a day: asks for a person, and the cancel update (or Temporal's cancel) ends it with nothing sent", async () => {
      await h.run({ placeBusiness: unservedUntil({ now: false }) }, async (s) => {
        const handle = await s.startSale(s.saleInput());
        await s.waitFor(handle, (st) => st.step === 'awaiting_business');
        await s.env.sleep(DAY + 10 * MINUTE);
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);
        expect(await s.searchAttribute(handle, AttentionReason)).toBe(FAILURE_TYPES.businessNotServed);
        const cancelled = await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'merchant never onboarded' }] });
        expect(cancelled.step).toBe('cancelled');
        expect(cancelled.awaitingBusiness).toBeNull();
        expect(await s.searchAttribute(handle, NeedsAttention)).toBe(false);
        expect(s.sequence()).toEqual([]);

        const other = await s.startSale(s.saleInput());
        await s.waitFor(other, (st) => st.step === 'awaiting_business');
        await other.cancel();
        expect((await s.settled(other)).step).toBe('cancelled');
        expect(s.sequence()).toEqual([]);
      });
    });
  });
});

describe('stock movements (handed to the branch’s stock ledger, which alone sends them)', () => {
  const ambiguous = () =>
    refusal(
      FAILURE_TYPES.ambiguousWrite,
      'adjustStock (POST /v1/stock/adjustments): 503 (service_unavailable); the request may have taken effect',
    );
  const oneLine = (s: Scenario) => s.saleInput({ lines: [{ itemId: SUGAR, quantity: 3, unitPrice: 250 }] });

  it('closes without waiting on an ambiguous stock write: the ledger settles it from the next quantity on hand, never sends it again, and nobody is asked', async () => {
    const stock = stockModel();
    let lost = false;
    const adjustStock = async (movement: AdjustStockInput) => {
      if (isProbe(movement) || lost) return stock.apply(movement);
      // Recorded by the service, its answer lost.
      lost = true;
      await stock.apply(movement);
      throw ambiguous();
    };
    await h.run({ adjustStock }, async (s) => {
      const handle = await s.startSale(oneLine(s));
      const closed = await s.settled(handle);
      expect(closed.step).toBe('completed');
      const line = closed.stockMovements[0]!;
      expect(line).toMatchObject({
        itemId: SUGAR,
        action: 'DEDUCT',
        quantity: 3,
        status: 'handed_over',
        ledger: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
      });
      expect(line).not.toHaveProperty('problem');

      // A sale closing at once asks not to be told which movement carried its line; the ledger settles it all the same.
      const ledger = await settledLedger(s, 1);
      expect(ledger.recent).toEqual([
        expect.objectContaining({
          referenceId: line.referenceId,
          status: 'recorded',
          settledBy: 'evidence',
          lines: [{ lineId: line.referenceId, saleWorkflowId: handle.workflowId, quantity: 3 }],
        }),
      ]);
      expect(ledger.totals).toMatchObject({ settledByEvidence: 1, resentAfterEvidence: 0, operatorDecisions: 0 });
      expect(s.movementsSent().map((m) => m.referenceId)).toEqual([line.referenceId]);
      expect(stock.recorded.filter((m) => m.quantity > 0)).toHaveLength(1);
      expect(stock.onHand(SUGAR)).toBe(97);
      expect(count(s, 'createSale')).toBe(1);
      await expectNeverNeededAttention(s, handle);
      await expectNeverNeededAttention(s, s.ledger());
    });
  });

  it('sends a movement again at once after a failure that never reached the service, and settles any other retryable one by the quantity on hand, not by an operator', async () => {
    const stock = stockModel();
    let sends = 0;
    const adjustStock = async (movement: AdjustStockInput) => {
      if (isProbe(movement)) return stock.apply(movement);
      sends++;
      if (sends === 1)
        throw ApplicationFailure.create({
          type: 'network_error',
          message: 'not sent',
          details: [{ operation: 'adjustStock', code: 'network_error', status: null, requestSent: false }],
        });
      // An unexpected error after the request may have gone out (it had not been taken): retryable for Temporal, but not provably not taken.
      if (sends === 2) throw ApplicationFailure.create({ type: 'TypeError', message: 'something broke after sending' });
      return stock.apply(movement);
    };
    await h.run({ adjustStock }, async (s) => {
      const handle = await s.startSale(oneLine(s));
      const closed = await s.settled(handle);
      const { referenceId } = closed.stockMovements[0]!;
      const ledger = await settledLedger(s, 1);
      // Not sent: tried again by the same step. Maybe sent: the next probe read 100, so it was not taken, and it went again.
      expect(s.movementsSent().map((m) => m.referenceId)).toEqual([referenceId, referenceId, referenceId]);
      expect(ledger.totals).toMatchObject({
        movementsRecorded: 1,
        settledByEvidence: 1,
        resentAfterEvidence: 1,
        operatorDecisions: 0,
      });
      expect(ledger.recent.map((m) => [m.referenceId, m.status])).toEqual([[referenceId, 'recorded']]);
      expect(stock.recorded.filter((m) => m.quantity > 0)).toHaveLength(1);
      expect(stock.onHand(SUGAR)).toBe(97);
    });
  });

  it('re-sends a movement on the operator’s word when the evidence cannot decide, under the same reference: the closed sale’s line, which needed no operator of its own', async () => {
    const stock = stockModel();
    let lost = false;
    const adjustStock = async (movement: AdjustStockInput) => {
      if (isProbe(movement) || lost) return stock.apply(movement);
      // Never taken, its answer lost; and someone else moves the item meanwhile.
      lost = true;
      stock.move(SUGAR, -5);
      throw ambiguous();
    };
    await h.run({ adjustStock }, async (s) => {
      const handle = await s.startSale(oneLine(s));
      const waiting = await ledgerWhen(
        s,
        (st) => st.open.some((m) => m.status === 'needs_operator'),
        'the ledger asking an operator',
      );
      // Read by query: awaiting the result would let the test server skip time while the ledger waits.
      const closed = await s.waitFor(handle, (st) => st.step === 'completed');
      const { referenceId } = closed.stockMovements[0]!;
      expect(waiting.open).toEqual([
        expect.objectContaining({
          referenceId,
          status: 'needs_operator',
          problem: expect.stringMatching(/something else moved the item/),
        }),
      ]);
      expect(closed.stockMovements[0]?.status).toBe('handed_over');

      // The dashboard shows no movement of that reference: the operator asks the ledger to send it again.
      await s.ledger().executeUpdate(settleMovementUpdate, { args: [{ referenceId, decision: 'resend' }] });
      const ledger = await settledLedger(s, 1);
      const recorded = stock.recorded.filter((m) => m.quantity > 0);
      expect(recorded.map((m) => m.referenceId)).toEqual([referenceId]);
      expect(s.movementsSent().map((m) => m.referenceId)).toEqual([referenceId, referenceId]);
      expect(ledger.recent).toEqual([
        expect.objectContaining({
          referenceId,
          status: 'recorded',
          settledBy: 'operator',
          lines: [expect.objectContaining({ lineId: referenceId, saleWorkflowId: handle.workflowId, quantity: 3 })],
        }),
      ]);
      expect(ledger.totals).toMatchObject({ operatorDecisions: 1, movementsRecorded: 1 });
      expect(stock.onHand(SUGAR)).toBe(92);
      expect(count(s, 'createSale')).toBe(1);
      await expectNeverNeededAttention(s, handle);
    });
  });

  it('leaves a movement the service refused to the ledger’s operator: the sale that handed its line over needs none', async () => {
    const adjustStock = async (movement: AdjustStockInput) => {
      if (isProbe(movement)) return { movementId: 'mov_probe', quantityOnHand: 100 };
      throw refusal(FAILURE_TYPES.invalidRequest, 'quantity must be positive');
    };
    await h.run({ adjustStock }, async (s) => {
      const handle = await s.startSale(oneLine(s));
      const waiting = await ledgerWhen(
        s,
        (st) => st.open.some((m) => m.status === 'needs_operator'),
        'the ledger asking an operator',
      );
      const before = await handle.result();
      const { referenceId } = before.stockMovements[0]!;
      expect(waiting.open).toEqual([
        expect.objectContaining({
          referenceId,
          problem: expect.stringContaining(
            `the service refused it (${FAILURE_TYPES.invalidRequest}: quantity must be positive)`,
          ),
        }),
      ]);
      expect(before.stockMovements[0]).toMatchObject({
        status: 'handed_over',
        ledger: stockLedgerWorkflowId(s.taskQueue, s.businessId, FIRST_BRANCH),
      });

      // The ledger's settleMovement is the operator's door, not the sale.
      expect(await acceptedUpdates(handle)).toEqual([]);
      expect(await s.state(handle)).toEqual(before);
      await expectNeverNeededAttention(s, handle);
      expect(await s.searchAttribute(s.ledger(), NeedsAttention)).toBe(true);
      expect(await s.searchAttribute(s.ledger(), AttentionReason)).toBe('stock_needs_operator');
      expect(s.movementsSent()).toHaveLength(1);
      // Left waiting, the ledger would be the next thing due (its execution timeout, 10 years on) whenever a later test
      // lets the test server skip time; the harness ends only the sales and registrations it started.
      await terminateKeepingClock(s.env, s.ledger());
    });
  });
});

describe('what counts as signed', () => {
  const completedWithoutReceipt = (): FiscalDocument => saleDocument({ status: 'completed', receipt: null });

  it.each([
    ['answered by createSale', { createSale: async () => submission.unknown(completedWithoutReceipt()) }],
    [
      'read by a poll',
      {
        createSale: async () => submission.inFlight(pending()),
        awaitDocumentOutcome: async () => ({ document: completedWithoutReceipt() }),
      },
    ],
  ])(
    'does not count a sale `completed` without a receipt (%s) as signed: it parks, and signs once a read finds the receipt',
    async (_how, stubs) => {
      let receiptIssued = false;
      await h.run(
        {
          ...stubs,
          getDocument: async () => ({
            document: receiptIssued ? saleDocument() : completedWithoutReceipt(),
          }),
        },
        async (s) => {
          const handle = await s.startSale(s.saleInput({ options: { outcomeTimeout: '1 hour' } }));
          const parked = await s.waitFor(handle, (st) => st.step === 'parked');
          await s.env.sleep(2 * HOUR);
          const state = await s.state(handle);
          // Completed at the service, it may be on the authority's books already: a cancel must not give it up.
          expect(state.parked).toMatchObject({ code: 'receipt_missing', actions: ['retry'] });
          expect(state.parked).toEqual(parked.parked);
          expect(s.inputs('handOverStock'), 'stock handed over for a sale that is not signed').toEqual([]);
          expect(s.inputs('adjustStock'), 'stock reported for a sale that is not signed').toEqual([]);
          expect(s.inputs('retrySale'), 'an accepted sale is never resubmitted').toEqual([]);
          expect(SIGNED_STEPS, `step ${state.step}`).not.toContain(state.step);
          expect(await s.searchAttribute(handle, FiscalStatus)).not.toBe('signed');
          expect(await s.searchAttribute(handle, NeedsAttention)).toBe(true);

          // The operator checks the dashboard, where the receipt now shows, and retries: the sale is read, not resubmitted.
          receiptIssued = true;
          await handle.executeUpdate(retryUpdate);
          const closed = await s.settled(handle);
          expect(closed.sale).toMatchObject({ status: 'completed', receipt: { cuInvoiceNo: 'KRACU0100000001/1' } });
          expect(s.inputs('retrySale')).toEqual([]);
          expect(s.inputs('handOverStock')).toHaveLength(1);
          await settledLedger(s, 2);
          expect(s.movementsSent()).toHaveLength(2);
          expect(await s.searchAttribute(handle, FiscalStatus)).toBe('signed');
        },
      );
    },
  );
});

describe('what an operator sees in the Temporal UI', () => {
  it('shows the step, and while parked the reason and the updates that resolve it, as current details; every activity carries a summary', async () => {
    const rejected = () =>
      submission.rejected(failed('The customer PIN is invalid'), [
        { code: 'authority_rejected', message: 'The customer PIN is invalid' },
      ]);
    await h.run({ createSale: async () => rejected() }, async (s) => {
      const input = s.saleInput();
      const handle = await s.startSale(input);
      await s.waitFor(handle, (st) => st.step === 'parked');
      const details = async () =>
        (await handle.query<{ currentDetails?: string | null }>('__temporal_workflow_metadata')).currentDetails ?? '';
      const parked = await details();
      expect(parked).toContain('**Step:** parked');
      expect(parked).toContain('`authority_rejected`');
      expect(parked).toContain('The customer PIN is invalid');
      expect(parked).toContain('`retry` or `cancel`');

      await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'test finished' }] });
      await s.settled(handle);
      expect(await details()).toBe('**Step:** cancelled\n\n**Sale:** sal_1 · failed');

      const summaries = ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
        const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
        const summary = e.userMetadata?.summary;
        return type ? [[type, summary ? defaultPayloadConverter.fromPayload(summary) : undefined]] : [];
      });
      expect(summaries).toEqual([
        // The item check and the sale are one activity.
        ['signSale', `sale ${input.traderInvoiceNumber}`],
        // After the rejection, the service's item list decides whether registering an item could fix it.
        ['checkItems', 'items itm_sugar_2kg, itm_milk_500ml'],
      ]);
    });
  });
});

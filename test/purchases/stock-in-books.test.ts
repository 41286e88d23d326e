/**
 * Invoices the stock-in put away in their purchases books, end to end (the real worker, the sandbox over HTTP, syncs
 * through the schedule): the stock-in carries only what is recent, and an invoice it no longer holds is still taken
 * back once when it leaves `confirmed`, added again once in a new round, and its line corrected onto another item.
 * The stock-in is started here with its settled invoices put away at once (in production: after an hour).
 */
import { describe, expect, it } from 'vitest';
import { getBookQuery, purchasesBookId } from '../../src/contracts/purchases-book.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  correctLineUpdate,
  getStockInStateQuery,
  stockInWorkflowId,
  type StockInInput,
} from '../../src/contracts/stock-in.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { eventually } from '../helpers/eventually.js';
import { DEMO, supplierInvoice, usePurchasesStack } from './harness.js';

const BUSINESS = DEMO.businesses.nairobi;
const BRANCH = DEMO.branches.nairobiCbd;

describe('stock-in: invoices put away in their books', () => {
  const stack = usePurchasesStack(() => ({
    sink: async () => ({ description: 'discard', deliver: async () => {}, close: async () => {} }),
    stockIn: { [BUSINESS]: { from: '2026-01-01', allOrNothing: false } },
  }));

  const levels = async () =>
    (
      (await (
        await fetch(new URL(`/__sandbox/stock/levels?businessId=${BUSINESS}`, stack.sandbox.complianceUrl))
      ).json()) as { levels: Array<{ branchId: string; itemId: string; quantity: number }> }
    ).levels;
  const onHand = async (itemId: string) =>
    (await levels()).find((l) => l.branchId === BRANCH && l.itemId === itemId)?.quantity ?? 0;
  const movements = async () =>
    (
      (await (
        await fetch(new URL(`/__sandbox/stock/movements?businessId=${BUSINESS}`, stack.sandbox.complianceUrl))
      ).json()) as { movements: Array<{ referenceId: string; itemId: string; action: string; quantity: number }> }
    ).movements;
  const stockIn = () => stack.client.workflow.getHandle(stockInWorkflowId(stack.taskQueue, BUSINESS));
  const held = async (purchaseId: string) =>
    (await stockIn().query(getStockInStateQuery)).invoices.some((i) => i.purchaseId === purchaseId);
  const quantityIs = (itemId: string, wanted: number, what: string) =>
    eventually(
      () => onHand(itemId),
      (q) => q === wanted,
      { timeoutMs: 60_000, what },
    );
  const putAway = (purchaseId: string) =>
    eventually(
      () => held(purchaseId).catch(() => true),
      (isHeld) => !isHeld,
      { timeoutMs: 60_000, what: `${purchaseId} put away` },
    );

  it(
    'takes back once, adds again once, and corrects a line of an invoice it no longer holds',
    { timeout: 240_000 },
    async () => {
      const milk = DEMO.items.milk;
      const sugar = DEMO.items.sugar;
      const invoiceDate = addDays(todayInKenya(Date.now()), -1);
      // The start-up sync started the business's stock-in (the demo's confirmed invoices): this one replaces it.
      if (!(await stack.firstSync())) throw new Error('no first sync');
      await stack.client.workflow
        .getHandle(stockInWorkflowId(stack.taskQueue, BUSINESS))
        .terminate('replaced by the test')
        .catch(() => undefined);
      await stack.client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
        workflowId: stockInWorkflowId(stack.taskQueue, BUSINESS),
        taskQueue: stack.taskQueue,
        args: [{ businessId: BUSINESS, settledKept: { minutes: 0, batch: 1 } } satisfies StockInInput],
      });
      const milkBefore = await onHand(milk);
      const sugarBefore = await onHand(sugar);

      await stack.addPurchase(
        supplierInvoice('pur_book_1', invoiceDate, {
          supplier: { name: 'Brookside Dairy Ltd', pin: 'P051234567X' },
          lines: [{ description: 'FRESH MILK 500ML', quantity: 12, unitPrice: 55, taxRate: 0 }],
        }),
      );
      await stack.sync();
      await stack.review('pur_book_1', 'confirmed');
      await stack.sync();
      await quantityIs(milk, milkBefore + 12, 'milk added');
      await putAway('pur_book_1');
      const book = stack.client.workflow.getHandle(
        purchasesBookId(stack.taskQueue, BUSINESS, invoiceDate, 'pur_book_1'),
      );
      expect(await book.query(getBookQuery)).toMatchObject({ date: invoiceDate, stocked: 1 });

      // Corrected after it was put away: its date finds it; without the date, the stock-in says what it needs.
      const refused = await stockIn()
        .executeUpdate(correctLineUpdate, { args: [{ purchaseId: 'pur_book_1', line: 0, itemId: sugar, factor: 1 }] })
        .then(
          () => undefined,
          (err: unknown) => err as Error,
        );
      expect(String((refused?.cause as Error | undefined)?.message)).toMatch(
        /no supplier invoice pur_book_1 is held here: give its invoiceDate/,
      );
      // A wrong date finds nothing, and says so.
      const wrongDate = await stockIn()
        .executeUpdate(correctLineUpdate, {
          args: [{ purchaseId: 'pur_book_1', line: 0, itemId: sugar, factor: 1, invoiceDate: '2025-01-01' }],
        })
        .then(
          () => undefined,
          (err: unknown) => err as Error,
        );
      expect(String((wrongDate?.cause as Error | undefined)?.message)).toMatch(/dated 2025-01-01 has stock recorded/);
      const corrected = await stockIn().executeUpdate(correctLineUpdate, {
        args: [{ purchaseId: 'pur_book_1', line: 0, itemId: sugar, factor: 1, invoiceDate }],
      });
      expect(corrected.lines[0]?.match).toMatchObject({ itemId: sugar, by: 'operator' });
      await quantityIs(milk, milkBefore, 'milk moved off');
      await quantityIs(sugar, sugarBefore + 12, 'sugar moved on');
      await putAway('pur_book_1');

      // Leaves confirmed while in its book: taken back once, from the item the correction moved it to.
      await stack.review('pur_book_1', 'pending_review');
      await stack.sync();
      await stack.sync();
      await quantityIs(sugar, sugarBefore, 'sugar taken back');
      expect(await onHand(milk)).toBe(milkBefore);
      // Confirmed again: a new round, added once (the learned mapping from the correction applies).
      await stack.review('pur_book_1', 'confirmed');
      await stack.sync();
      await stack.sync();
      await quantityIs(sugar, sugarBefore + 12, 'sugar added again');
      expect(await onHand(milk)).toBe(milkBefore);

      const refs = (await movements()).map((m) => m.referenceId);
      expect(refs.length).toBe(new Set(refs).size);
      const own = (await movements()).filter((m) => m.itemId === sugar || m.itemId === milk);
      expect(own.filter((m) => m.action === 'DEDUCT' && m.quantity > 0)).toHaveLength(2);
    },
  );
});

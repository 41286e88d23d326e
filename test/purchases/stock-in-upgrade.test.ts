/**
 * A business's stock-in as the previous release carried it (schema 1: every invoice and every mapping in the carry)
 * handed to this build at continue-as-new, end to end: the mappings move to their buckets, the stocked invoice to its
 * purchases book, and nothing is lost or stocked twice — the invoice told `confirmed` again adds nothing, taken back it
 * is deducted once under the references of the round it was added in, and the merchant's mapping still matches.
 */
import { describe, expect, it } from 'vitest';
import { StockInClient } from '../../src/client/stock-in.js';
import {
  STOCK_IN_WORKFLOW_TYPE,
  getStockInStateQuery,
  stockInWorkflowId,
  type StockInCarry,
  type StockInInput,
} from '../../src/contracts/stock-in.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { eventually } from '../helpers/eventually.js';
import { DEMO, supplierInvoice, usePurchasesStack } from './harness.js';

const BUSINESS = DEMO.businesses.nairobi;
const BRANCH = DEMO.branches.nairobiCbd;
const SUPPLIER = { name: 'Brookside Dairy Ltd', pin: 'P051234567X' };

describe('stock-in: a carry of the previous release', () => {
  const stack = usePurchasesStack(() => ({
    sink: async () => ({ description: 'discard', deliver: async () => {}, close: async () => {} }),
    stockIn: { [BUSINESS]: { from: '2026-01-01', allOrNothing: false } },
  }));

  const movements = async () =>
    (
      (await (
        await fetch(new URL(`/__sandbox/stock/movements?businessId=${BUSINESS}`, stack.sandbox.complianceUrl))
      ).json()) as { movements: Array<{ referenceId: string; itemId: string; action: string; quantity: number }> }
    ).movements;
  const onHand = async (itemId: string) =>
    (
      (await (
        await fetch(new URL(`/__sandbox/stock/levels?businessId=${BUSINESS}`, stack.sandbox.complianceUrl))
      ).json()) as { levels: Array<{ branchId: string; itemId: string; quantity: number }> }
    ).levels.find((l) => l.branchId === BRANCH && l.itemId === itemId)?.quantity ?? 0;

  it(
    'moves mappings and stocked invoices out of the carry, losing nothing and stocking nothing twice',
    { timeout: 240_000 },
    async () => {
      const milk = DEMO.items.milk;
      const sugar = DEMO.items.sugar;
      const invoiceDate = addDays(todayInKenya(Date.now()), -1);
      const workflowId = stockInWorkflowId(stack.taskQueue, BUSINESS);
      // As the previous release carried it: the invoice added 12 of milk in round 1; the merchant maps a carton.
      const carried: StockInCarry = {
        schema: 1,
        settings: { from: '2026-01-01', allOrNothing: false },
        taskQueue: stack.taskQueue,
        invoices: [
          {
            purchaseId: 'pur_up_1',
            supplierPin: SUPPLIER.pin,
            supplierName: SUPPLIER.name,
            supplierInvoiceNumber: 'BD-UP-1',
            invoiceDate,
            branch: 'Nairobi CBD',
            status: 'confirmed',
            state: 'added',
            round: 1,
            lines: [
              {
                line: 0,
                description: 'FRESH MILK 500ML',
                code: null,
                hsCode: null,
                quantity: 12,
                unitPrice: 55,
                match: { itemId: milk, factor: 1, by: 'name' },
                added: 12,
              },
            ],
            corrections: 0,
            updatedAt: new Date(Date.now() - 86_400_000).toISOString(),
          },
        ],
        mappings: [
          {
            supplierPin: SUPPLIER.pin,
            by: 'description',
            key: 'CTN 12x2KG SUGAR',
            itemId: sugar,
            factor: 12,
            source: 'merchant',
          },
        ],
        totals: {
          invoicesAdded: 1,
          linesAdded: 1,
          linesWaiting: 0,
          linesTakenBack: 0,
          matchedBy: { merchant: 0, learned: 0, name: 1, operator: 0 },
        },
      };
      // The start-up sync started the business's stock-in (the demo's confirmed invoices): this one replaces it.
      if (!(await stack.firstSync())) throw new Error('no first sync');
      await stack.client.workflow
        .getHandle(stockInWorkflowId(stack.taskQueue, BUSINESS))
        .terminate('replaced by the test')
        .catch(() => undefined);
      await stack.client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: stack.taskQueue,
        args: [{ businessId: BUSINESS, carried, settledKept: { minutes: 0, batch: 1 } } satisfies StockInInput],
      });
      const client = new StockInClient(stack.client, { taskQueue: stack.taskQueue });
      // The mapping is in its bucket, and the invoice in its book: the stock-in holds neither.
      const mappings = await eventually(
        () => client.mappings(BUSINESS).catch(() => []),
        (found) => found.length === 1,
        { timeoutMs: 30_000, what: 'the mapping in its bucket' },
      );
      expect(mappings[0]).toMatchObject({ key: 'CTN 12x2KG SUGAR', itemId: sugar, source: 'merchant' });
      await eventually(
        () => stack.client.workflow.getHandle(workflowId).query(getStockInStateQuery),
        (state) => state.invoices.length === 0,
        { timeoutMs: 30_000, what: 'the invoice put away' },
      );

      // The service lists the invoice confirmed (as it was): told again, it adds nothing.
      const milkBefore = await onHand(milk);
      await stack.addPurchase(
        supplierInvoice('pur_up_1', invoiceDate, {
          supplier: SUPPLIER,
          supplierInvoiceNumber: 'BD-UP-1',
          status: 'confirmed',
          lines: [{ description: 'FRESH MILK 500ML', quantity: 12, unitPrice: 55, taxRate: 0 }],
        }),
      );
      await stack.sync();
      // A new invoice of the supplier in the carton's wording: matched by the merchant's mapping from its bucket.
      const sugarBefore = await onHand(sugar);
      await stack.addPurchase(
        supplierInvoice('pur_up_2', invoiceDate, {
          supplier: SUPPLIER,
          supplierInvoiceNumber: 'BD-UP-2',
          status: 'confirmed',
          lines: [{ description: 'ctn 12x2kg sugar', quantity: 2, unitPrice: 2_640, taxRate: 16 }],
        }),
      );
      await stack.sync();
      await eventually(
        () => onHand(sugar),
        (q) => q === sugarBefore + 24,
        { timeoutMs: 60_000, what: 'the carton added by the mapping' },
      );
      expect(await onHand(milk)).toBe(milkBefore);

      // Un-confirmed: what round 1 added comes off once (the stock ledger sends it as a movement of its own).
      await stack.review('pur_up_1', 'pending_review');
      await stack.sync();
      await stack.sync();
      await eventually(
        () => onHand(milk),
        (q) => q === milkBefore - 12,
        { timeoutMs: 60_000, what: 'milk taken back' },
      );
      await stack.sync();
      const milkMoves = (await movements()).filter((m) => m.itemId === milk && m.quantity > 0);
      expect(milkMoves.map((m) => `${m.action} ${m.quantity}`)).toEqual(['DEDUCT 12']);
      expect(await onHand(milk)).toBe(milkBefore - 12);
    },
  );
});

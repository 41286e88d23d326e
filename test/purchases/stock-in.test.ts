/**
 * Stock-in end to end: the real worker process, the embedded sandbox over HTTP, syncs run through the schedule. A
 * confirmed invoice raises quantity on hand at the service, once, however often the sync runs; a line nobody can match
 * waits for a person, and a mapping made once matches the supplier's next invoice.
 */
import { describe, expect, it } from 'vitest';
import {
  getStockInStateQuery,
  mapLineUpdate,
  purchasesSeenSignal,
  stockInWorkflowId,
  type StockInState,
} from '../../src/contracts/stock-in.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { eventually } from '../helpers/eventually.js';
import { DEMO, supplierInvoice, usePurchasesStack } from './harness.js';

const BUSINESS = DEMO.businesses.nairobi;
const BRANCH = DEMO.branches.nairobiCbd;
const SUPPLIER = { name: 'Brookside Dairy Ltd', pin: 'P051234567X' };

describe('stock that comes in from confirmed supplier invoices', () => {
  const stack = usePurchasesStack(() => ({
    sink: async () => ({ description: 'discard', deliver: async () => {}, close: async () => {} }),
    stockIn: { [BUSINESS]: { from: '2026-01-01', allOrNothing: false } },
  }));

  const onHand = async (itemId: string) => {
    const levels = (await (
      await fetch(new URL(`/__sandbox/stock/levels?businessId=${BUSINESS}`, stack.sandbox.complianceUrl))
    ).json()) as { levels: Array<{ branchId: string; itemId: string; quantity: number }> };
    return levels.levels.find((l) => l.branchId === BRANCH && l.itemId === itemId)?.quantity ?? 0;
  };
  const movementsOf = async () => {
    const body = (await (
      await fetch(new URL(`/__sandbox/stock/movements?businessId=${BUSINESS}`, stack.sandbox.complianceUrl))
    ).json()) as { movements: Array<{ referenceId: string; itemId: string; action: string; quantity: number }> };
    return body.movements;
  };
  const stockIn = () => stack.client.workflow.getHandle(stockInWorkflowId(stack.taskQueue, BUSINESS));
  const state = () => stockIn().query(getStockInStateQuery);
  const invoiceState = async (purchaseId: string) => (await state()).invoices.find((i) => i.purchaseId === purchaseId);
  const settledTo = (purchaseId: string, wanted: string) =>
    eventually(
      () => invoiceState(purchaseId).catch(() => undefined),
      (inv) => inv?.state === wanted,
      { timeoutMs: 60_000, what: `invoice ${purchaseId} ${wanted}` },
    );
  // Within the window every sync lists: a confirmed invoice rejected is seen at the next sync (older ones: the sweep's).
  const invoice = (id: string, invoiceDate = addDays(todayInKenya(Date.now()), -1)) =>
    supplierInvoice(id, invoiceDate, {
      supplier: SUPPLIER,
      supplierInvoiceNumber: `BD-${id}`,
      lines: [
        { description: 'FRESH MILK 500ML', quantity: 12, unitPrice: 55, taxRate: 0 },
        { description: 'CTN 12x2KG SUGAR', quantity: 2, unitPrice: 2_640, taxRate: 16 },
        { description: 'Delivery charge', quantity: 1, unitPrice: 300, taxRate: 16 },
      ],
    });

  it(
    'adds a confirmed invoice once through three syncs, waits for a person on unknown lines, learns the mapping for the next invoice, and takes back and adds again on review changes',
    { timeout: 240_000 },
    async () => {
      const milk = DEMO.items.milk;
      const sugar = DEMO.items.sugar;
      const milkBefore = await onHand(milk);
      const sugarBefore = await onHand(sugar);

      await stack.addPurchase(invoice('pur_in_1'));
      await stack.addPurchase(invoice('pur_in_old', '2025-12-31'));
      await stack.sync();
      await stack.review('pur_in_1', 'confirmed');
      await stack.review('pur_in_old', 'confirmed');
      for (let n = 0; n < 3; n++) await stack.sync();

      // The milk line matched its item by name at once; sugar (a carton) and the fee wait for a person.
      const waiting = (await settledTo('pur_in_1', 'waiting'))!;
      expect(waiting.lines.map((l) => (l.match ? 'matched' : 'waiting'))).toEqual(['matched', 'waiting', 'waiting']);
      expect(waiting.lines[1]!.candidates?.map((c) => c.itemId)).toContain(sugar);
      await eventually(
        () => onHand(milk),
        (q) => q === milkBefore + 12,
        { timeoutMs: 60_000, what: 'milk added' },
      );
      expect((await invoiceState('pur_in_old'))?.state).toBe('before_start');
      const described = await stockIn().describe();
      expect(described.searchAttributes?.NeedsAttention).toEqual([true]);

      // A mapping to an item the business does not track is refused, and the line still waits.
      const wrong = await stockIn()
        .executeUpdate(mapLineUpdate, { args: [{ purchaseId: 'pur_in_1', line: 1, itemId: 'itm_nope', factor: 12 }] })
        .then(
          () => undefined,
          (err: unknown) => err as Error,
        );
      expect(String((wrong?.cause as Error | undefined)?.message)).toMatch(/itm_nope is not a stock-tracked item/);
      expect((await invoiceState('pur_in_1'))?.lines[1]?.match).toBeUndefined();

      // An operator maps the carton (12 of 2 kg) and marks the fee as not stock: the invoice's stock goes in at once.
      await stockIn().executeUpdate(mapLineUpdate, {
        args: [{ purchaseId: 'pur_in_1', line: 1, itemId: sugar, factor: 12 }],
      });
      const done = await stockIn().executeUpdate(mapLineUpdate, {
        args: [{ purchaseId: 'pur_in_1', line: 2, notStock: true }],
      });
      expect(done.state).toBe('added');
      await eventually(
        () => onHand(sugar),
        (q) => q === sugarBefore + 24,
        { timeoutMs: 60_000, what: 'sugar added' },
      );

      // The supplier's next invoice: every line is matched without a person.
      await stack.addPurchase(invoice('pur_in_2'));
      await stack.sync();
      await stack.review('pur_in_2', 'confirmed');
      await stack.sync();
      await settledTo('pur_in_2', 'added');
      await eventually(
        () => onHand(sugar),
        (q) => q === sugarBefore + 48,
        { timeoutMs: 60_000, what: 'second sugar' },
      );

      // Un-confirmed: taken back once; confirmed again: added again once.
      await stack.review('pur_in_1', 'pending_review');
      await stack.sync();
      await stack.sync();
      await settledTo('pur_in_1', 'taken_back');
      await eventually(
        () => onHand(milk),
        (q) => q === milkBefore + 12,
        { timeoutMs: 60_000, what: 'milk taken back' },
      );
      await eventually(
        () => onHand(sugar),
        (q) => q === sugarBefore + 24,
        { timeoutMs: 60_000, what: 'sugar back' },
      );
      await stack.review('pur_in_1', 'confirmed');
      await stack.sync();
      await settledTo('pur_in_1', 'added');
      await eventually(
        () => onHand(milk),
        (q) => q === milkBefore + 24,
        { timeoutMs: 60_000, what: 'milk again' },
      );
      await eventually(
        () => onHand(sugar),
        (q) => q === sugarBefore + 48,
        { timeoutMs: 60_000, what: 'sugar again' },
      );

      // A signal that is not one (another caller's mistake) is dropped: the stock-in goes on answering.
      await stockIn().signal(purchasesSeenSignal, { purchases: 'everything' } as never);
      await stockIn().signal(purchasesSeenSignal, {
        purchases: [{ id: 'pur_in_1', status: 'pending_review' }],
        settings: { from: 'soon' },
        taskQueue: stack.taskQueue,
      } as never);
      // It still takes what the sync tells it.
      await stack.review('pur_in_2', 'rejected');
      await stack.sync();
      await settledTo('pur_in_2', 'taken_back');
      expect((await invoiceState('pur_in_1'))?.state).toBe('added');

      // Nothing recorded twice at the service.
      const refs = (await movementsOf()).map((m) => m.referenceId);
      expect(refs.length).toBe(new Set(refs).size);
      const final: StockInState = await state();
      expect(final.totals.linesWaiting).toBe(0);
      expect((await stockIn().describe()).searchAttributes?.NeedsAttention).toEqual([false]);
    },
  );
});

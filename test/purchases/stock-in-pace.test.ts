/**
 * The stock-in hands its ledgers lines at their pace, end to end (the real worker, the sandbox over HTTP, syncs through
 * the schedule): with the service slow to record stock, a branch's ledger never holds more than the pace lets it run
 * ahead, the stock-in waits for room instead, and every line still reaches the service once. The stock-in runs here
 * with a pace of a few lines (in production: STOCK_PACE, hundreds).
 */
import { describe, expect, it } from 'vitest';
import { STOCK_IN_WORKFLOW_TYPE, stockInWorkflowId, type StockInInput } from '../../src/contracts/stock-in.js';
import { getBacklogQuery, stockLedgerWorkflowId } from '../../src/contracts/stock-ledger.js';
import { addDays, todayInKenya } from '../../workflows/purchases-sync/ledger.js';
import { eventually } from '../helpers/eventually.js';
import { DEMO, supplierInvoice, usePurchasesStack } from './harness.js';

const BUSINESS = DEMO.businesses.nairobi;
const BRANCH = DEMO.branches.nairobiCbd;
const PACE = { ledgerLines: 4, handOverLines: 2 };
const ITEMS = [
  { itemId: DEMO.items.sugar, description: 'Sugar 2kg', unitPrice: 200 },
  { itemId: DEMO.items.cookingOil, description: 'Cooking oil 1L', unitPrice: 312 },
  { itemId: DEMO.items.lpgRefill, description: 'LPG refill 6kg', unitPrice: 1_000 },
];
const INVOICES = 5;

describe('stock-in: paced to its ledgers', () => {
  const stack = usePurchasesStack(() => ({
    sink: async () => ({ description: 'discard', deliver: async () => {}, close: async () => {} }),
    stockIn: { [BUSINESS]: { from: '2026-01-01', allOrNothing: false } },
  }));

  const inspect = async <T>(path: string, init?: RequestInit) => {
    const response = await fetch(new URL(`/__sandbox${path}`, stack.sandbox.complianceUrl), init);
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    return (await response.json()) as T;
  };
  const onHand = async (itemId: string) =>
    (
      await inspect<{ levels: Array<{ branchId: string; itemId: string; quantity: number }> }>(
        `/stock/levels?businessId=${BUSINESS}`,
      )
    ).levels.find((l) => l.branchId === BRANCH && l.itemId === itemId)?.quantity ?? 0;

  it(
    'keeps a ledger within its pace while the service is slow, and adds every line once',
    { timeout: 240_000 },
    async () => {
      if (!(await stack.firstSync())) throw new Error('no first sync');
      const stockInId = stockInWorkflowId(stack.taskQueue, BUSINESS);
      await stack.client.workflow
        .getHandle(stockInId)
        .terminate('replaced by the test')
        .catch(() => undefined);
      await stack.client.workflow.start(STOCK_IN_WORKFLOW_TYPE, {
        workflowId: stockInId,
        taskQueue: stack.taskQueue,
        args: [{ businessId: BUSINESS, pace: PACE } satisfies StockInInput],
      });
      const before = await Promise.all(ITEMS.map((i) => onHand(i.itemId)));

      // Every line of 5 invoices on one branch: 15 lines, 5 per item; the first invoice told alone, then the other four.
      const invoiceDate = addDays(todayInKenya(Date.now()), -1);
      for (let n = 1; n <= INVOICES; n++)
        await stack.addPurchase(
          supplierInvoice(`pur_pace_${n}`, invoiceDate, {
            supplierInvoiceNumber: `PACE-${n}`,
            lines: ITEMS.map((i) => ({ description: i.description, quantity: n, unitPrice: i.unitPrice, taxRate: 16 })),
          }),
        );
      await stack.sync();
      // Each stock movement takes 4 s: lines handed over while their item's movement is on its way wait in the ledger.
      await inspect('/faults', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ path: '/v1/stock/adjustments', method: 'POST', kind: 'latency', delayMs: 4_000 }),
      });
      await stack.review('pur_pace_1', 'confirmed');
      await stack.sync();
      for (let n = 2; n <= INVOICES; n++) await stack.review(`pur_pace_${n}`, 'confirmed');

      const ledger = stack.client.workflow.getHandle(stockLedgerWorkflowId(stack.taskQueue, BUSINESS, BRANCH));
      const stockIn = stack.client.workflow.getHandle(stockInId);
      const seen = { ledger: 0, stockIn: 0 };
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const [atLedger, atStockIn] = await Promise.all([
            ledger.query(getBacklogQuery).catch(() => 0),
            stockIn.query(getBacklogQuery).catch(() => 0),
          ]);
          seen.ledger = Math.max(seen.ledger, atLedger);
          seen.stockIn = Math.max(seen.stockIn, atStockIn);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      try {
        await stack.sync();
        const expected = ITEMS.map((_, i) => before[i]! + (INVOICES * (INVOICES + 1)) / 2);
        await eventually(
          () => Promise.all(ITEMS.map((i) => onHand(i.itemId))),
          (now) => now.every((q, i) => q === expected[i]),
          { timeoutMs: 180_000, what: 'every line added' },
        );
      } finally {
        sampling = false;
        await sampler;
      }

      // The first hand-over of a run is the one not checked first: at most the pace plus one hand-over.
      expect(seen.ledger).toBeGreaterThan(0);
      expect(seen.ledger).toBeLessThanOrEqual(PACE.ledgerLines + PACE.handOverLines);
      // The lines waited in the stock-in instead, and it asked the ledger for room.
      expect(seen.stockIn).toBeGreaterThan(PACE.ledgerLines);
      const scheduled: string[] = [];
      for await (const event of (await stockIn.fetchHistory()).events ?? [])
        if (event.activityTaskScheduledEventAttributes?.activityType?.name)
          scheduled.push(event.activityTaskScheduledEventAttributes.activityType.name);
      expect(scheduled).toContain('waitForStockRoom');

      // Each line once: no movement reference twice, and the quantities exact (above).
      const { movements } = await inspect<{ movements: Array<{ referenceId: string }> }>(
        `/stock/movements?businessId=${BUSINESS}`,
      );
      const refs = movements.map((m) => m.referenceId);
      expect(refs.length).toBe(new Set(refs).size);
    },
  );
});

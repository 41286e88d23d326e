/**
 * What a stock-in meets at the sandbox, over HTTP: the demo's supplier invoices for it, the inspector's purchase and
 * stock controls, and stock adjustments that add an invoice's lines per branch.
 */
import { describe, expect, it } from 'vitest';
import {
  ItemListEnvelopeSchema,
  PullResultEnvelopeSchema,
  PurchasePageEnvelopeSchema,
  StockAdjustmentEnvelopeSchema,
  type Purchase,
} from '../../../src/compliance/schemas.js';
import type { PurchaseFixtureInput } from '../../../sandbox/compliance/fixture-schema.js';
import {
  normaliseName,
  purchaseLines,
  supplierLines,
  unitsAdded,
  type SupplierLine,
} from '../../../sandbox/compliance/supplier-lines.js';
import { DEMO_STOCK_IN } from '../../../sandbox/default-fixture.js';
import { DEMO, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();
const inspector = () => sbx.sandbox.inspector;

const NAIROBI = DEMO.businesses.nairobi;
const { nairobiCbd: CBD, nairobiWestlands: WESTLANDS } = DEMO.branches;
const I = DEMO.items;
const STOCK_IN_IDS: string[] = DEMO_STOCK_IN.invoices.map((i) => i.id);

async function listed(query: Record<string, string | number> = {}): Promise<Purchase[]> {
  return PurchasePageEnvelopeSchema.parse((await client.get('/v1/purchases', { pageSize: 100, ...query })).json).data
    .purchases;
}

async function pull(): Promise<void> {
  expect(PullResultEnvelopeSchema.parse((await client.post('/v1/purchases/pull')).json).data.pulled).toBeGreaterThan(0);
}

async function items() {
  return ItemListEnvelopeSchema.parse((await client.get('/v1/items')).json).data.items;
}

const codeOf = (line: object) => (line as { itemCode?: unknown }).itemCode;

describe('the demo business’s supplier invoices for the stock-in', () => {
  it('arrive at the first pull, pending review, from one supplier, with its codes on the stock lines', async () => {
    expect((await listed()).filter((p) => STOCK_IN_IDS.includes(p.id))).toEqual([]);
    const held = (await inspector().purchases(NAIROBI)).filter((p) => STOCK_IN_IDS.includes(p.purchase.id));
    expect(held.map((p) => [p.purchase.id, p.visible])).toEqual([
      ['pur_nbo_in_1', false],
      ['pur_nbo_in_2', false],
    ]);

    await pull();
    const arrived = (await listed({ status: 'pending_review' })).filter((p) => p.id.startsWith('pur_nbo_in_'));
    expect(arrived.map((p) => [p.id, p.branch, p.supplierInvoiceNumber])).toEqual([
      ['pur_nbo_in_2', 'Westlands', 'MB-1057'],
      ['pur_nbo_in_1', 'Nairobi CBD', 'MB-1041'],
    ]);
    for (const purchase of arrived) {
      expect(purchase.supplier).toEqual({ name: 'Maziwa Bora Distributors Ltd', pin: 'P051234567X' });
      expect(purchase.lines.map((l) => [l.description, codeOf(l)])).toEqual([
        ['SUGAR  2KG', 'MB-SUG-2KG'],
        ['COOKING  OIL  1L', 'MB-OIL-1L'],
        ['CTN 24x500ML MILK', 'MB-MLK-CTN24'],
        ['Delivery charge', undefined],
      ]);
      // A line without a code lists no itemCode at all, as the contract's lines do.
      expect(Object.keys(purchase.lines[3]!)).not.toContain('itemCode');
      const total = purchase.lines.reduce((sum, l) => sum + Math.round(l.total * 100), 0) / 100;
      expect(purchase.totals.total).toBe(total);
    }
  });

  it('name two stock-tracked items exactly, and no item on the carton and the fee', async () => {
    const catalogue = await items();
    await pull();
    for (const purchase of (await listed()).filter((p) => STOCK_IN_IDS.includes(p.id))) {
      const namesakes = purchase.lines.map((l) =>
        catalogue.filter((item) => normaliseName(item.name) === normaliseName(l.description)),
      );
      expect(namesakes.map((found) => found.map((item) => item.id))).toEqual([[I.sugar], [I.cookingOil], [], []]);
      expect(namesakes.flat().every((item) => item.stockTracked && item.registrationStatus === 'REGISTERED')).toBe(
        true,
      );
    }
    const [, , carton, fee] = DEMO_STOCK_IN.invoices[0].lines;
    expect(carton).toMatchObject({ kind: 'mapped', itemId: I.milk, factor: 24 });
    expect(fee).toMatchObject({ kind: 'unknown', itemId: null });
  });
});

describe('the inspector’s supplier invoices', () => {
  const supplier = { name: 'Test Wholesale Ltd', pin: 'P051234560Z' };

  it('adds an invoice built from the items the service lists; the next pull fetches it', async () => {
    const lines = supplierLines(await items(), { codePrefix: 'TW' });
    const invoice: PurchaseFixtureInput = {
      id: 'pur_tw_1',
      status: 'pending_review',
      supplier,
      supplierInvoiceNumber: 'TW-1',
      invoiceDate: '2025-06-15',
      branchId: WESTLANDS,
      lines: purchaseLines(lines),
    };
    const added = await inspector().addPurchase(NAIROBI, invoice);
    expect(added).toMatchObject({
      businessId: NAIROBI,
      visible: false,
      purchase: { id: 'pur_tw_1', status: 'pending_review', branch: 'Westlands' },
    });
    expect(added.purchase.lines.map((l) => l.itemCode)).toEqual(lines.map((l) => l.line.itemCode));

    await pull();
    expect((await inspector().purchases(NAIROBI)).find((p) => p.purchase.id === 'pur_tw_1')?.visible).toBe(true);
    const [listedInvoice] = (await listed()).filter((p) => p.id === 'pur_tw_1');
    expect(listedInvoice?.lines.map(codeOf)).toEqual([
      'TW-SUGAR-2KG',
      'TW-COOKING-OIL-1L',
      'TW-FRESH-MILK-500ML-CTN24',
      undefined,
    ]);

    await expect(inspector().addPurchase(NAIROBI, invoice)).rejects.toMatchObject({
      status: 409,
      code: 'already_exists',
    });
    await expect(inspector().addPurchase('biz_nope', { ...invoice, id: 'pur_tw_2' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('confirms an invoice and takes the confirmation back, to pending review or rejected, seen without a pull', async () => {
    await pull();
    const id = DEMO_STOCK_IN.invoices[0].id;
    const statusOf = async () => (await listed()).find((p) => p.id === id);

    expect((await inspector().reviewPurchase(id, 'confirmed')).purchase).toMatchObject({
      status: 'confirmed',
      confirmationError: null,
    });
    expect((await listed({ status: 'confirmed' })).map((p) => p.id)).toContain(id);
    await inspector().reviewPurchase(id, 'pending_review');
    expect(await statusOf()).toMatchObject({ status: 'pending_review', confirmationError: null });
    await inspector().reviewPurchase(id, 'confirmed');
    await inspector().reviewPurchase(id, 'rejected', 'Short delivery');
    expect(await statusOf()).toMatchObject({ status: 'rejected', confirmationError: 'Short delivery' });

    await expect(inspector().reviewPurchase('pur_nope', 'confirmed')).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('lists every business’s invoices without a businessId', async () => {
    const owners = new Set((await inspector().purchases()).map((p) => p.businessId));
    expect(owners).toEqual(new Set([NAIROBI, DEMO.businesses.mombasa]));
  });
});

describe('stock added from a confirmed invoice', () => {
  const invoice = DEMO_STOCK_IN.invoices[1];
  const onHand = (branchId: string, itemId: string) => inspector().quantityOnHand(NAIROBI, branchId, itemId);

  /** One `ADD` per stock line, in units of the item, each with a reference of the invoice and the line. */
  const adjustments = (lines: readonly SupplierLine[], round: number) =>
    lines.flatMap((l, n) =>
      l.kind === 'unknown'
        ? []
        : [
            {
              itemId: l.itemId,
              action: 'ADD',
              quantity: l.line.quantity * l.factor,
              unitPrice: l.line.unitPrice / l.factor,
              referenceId: `${invoice.id}:${round}:${n}`,
              branchId: WESTLANDS,
            },
          ],
    );

  it('raises quantity on hand at the invoice’s branch only; a reference applied twice shows in its movements', async () => {
    const stocked = [I.sugar, I.cookingOil, I.milk];
    const before = await Promise.all(stocked.map((itemId) => onHand(WESTLANDS, itemId)));
    const cbdBefore = await Promise.all(stocked.map((itemId) => onHand(CBD, itemId)));
    const adds = adjustments(invoice.lines, 1);
    for (const body of adds) {
      const answer = await client.post('/v1/stock/adjustments', body);
      expect(answer.status).toBe(201);
      expect(StockAdjustmentEnvelopeSchema.parse(answer.json).data.branchId).toBe(WESTLANDS);
    }

    const gained = unitsAdded(invoice.lines);
    expect(gained).toEqual({ [I.sugar]: 4, [I.cookingOil]: 12, [I.milk]: 24 });
    expect(await Promise.all(stocked.map((itemId) => onHand(WESTLANDS, itemId)))).toEqual(
      stocked.map((itemId, n) => before[n]! + gained[itemId]!),
    );
    expect(await Promise.all(stocked.map((itemId) => onHand(CBD, itemId)))).toEqual(cbdBefore);

    // The service does not de-duplicate: a line handed over twice is two movements under one reference.
    await client.post('/v1/stock/adjustments', adds[0]);
    const movements = await inspector().stockMovements({ businessId: NAIROBI, referencePrefix: `${invoice.id}:` });
    expect(movements).toHaveLength(4);
    const references = movements.map((m) => m.referenceId);
    expect(references.filter((r, n) => references.indexOf(r) !== n)).toEqual([adds[0]!.referenceId]);
    expect(await inspector().stockMovements({ referencePrefix: `${DEMO_STOCK_IN.invoices[0].id}:` })).toEqual([]);
    expect(await inspector().stockMovements({ itemId: I.sugar, branchId: WESTLANDS })).toHaveLength(2);
    expect(await inspector().stockMovements({ itemId: I.sugar, branchId: CBD })).toEqual([]);
  });

  it('waits for a quantity on hand, and refuses one of an item that keeps no stock', async () => {
    const before = await onHand(CBD, I.lpgRefill);
    const waited = inspector().waitForQuantityOnHand(NAIROBI, CBD, I.lpgRefill, (q) => q === before + 3);
    await client.post('/v1/stock/adjustments', { itemId: I.lpgRefill, action: 'ADD', quantity: 3, branchId: CBD });
    expect(await waited).toBe(before + 3);
    await expect(onHand(CBD, I.giftVoucher)).rejects.toThrow(/not stock tracked/);
    await expect(inspector().waitForQuantityOnHand(NAIROBI, CBD, I.lpgRefill, () => false, 100)).rejects.toThrow(
      /timed out/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { StockAdjustmentEnvelopeSchema } from '../../../src/compliance/schemas.js';
import { DEMO, errorOf, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

const I = DEMO.items;
const adjust = (body: Record<string, unknown>) => client.post('/v1/stock/adjustments', body);

describe('POST /v1/stock/adjustments (C2, C28, C29)', () => {
  it('adds and deducts per branch, reporting the quantity on hand and fiscal ok', async () => {
    const added = await adjust({ itemId: I.sugar, action: 'ADD', quantity: 5, unitPrice: 200, referenceId: 'GRN-1' });
    expect(added.status).toBe(201);
    const result = StockAdjustmentEnvelopeSchema.parse(added.json).data;
    expect(result).toMatchObject({
      itemId: I.sugar,
      branchId: DEMO.branches.nairobiCbd,
      quantityOnHand: 85,
      fiscal: { stockIo: { status: 'ok' }, stockMaster: { status: 'ok' } },
    });
    expect(result.movementId).toMatch(/^mov_/);
    const west = StockAdjustmentEnvelopeSchema.parse(
      (await adjust({ itemId: I.sugar, action: 'DEDUCT', quantity: 2.5, branchId: '01' })).json,
    ).data;
    expect(west).toMatchObject({ branchId: DEMO.branches.nairobiWestlands, quantityOnHand: 27.5 });
    const levels = await sbx.sandbox.inspector.stockLevels(DEMO.businesses.nairobi);
    expect(levels.filter((l) => l.itemId === I.sugar)).toEqual([
      { branchId: DEMO.branches.nairobiCbd, itemId: I.sugar, quantity: 85 },
      { branchId: DEMO.branches.nairobiWestlands, itemId: I.sugar, quantity: 27.5 },
    ]);
  });

  it('never goes below zero but records the movement', async () => {
    const answer = await adjust({ itemId: I.lpgRefill, action: 'DEDUCT', quantity: 100, referenceId: 'WRITE-OFF-1' });
    expect(StockAdjustmentEnvelopeSchema.parse(answer.json).data.quantityOnHand).toBe(0);
    const [movement] = await sbx.sandbox.inspector.stockMovements({ referenceId: 'WRITE-OFF-1' });
    expect(movement).toMatchObject({ action: 'DEDUCT', quantity: 100, quantityBefore: 15, quantityOnHand: 0 });
  });

  it('does not de-duplicate: the same call twice is two movements', async () => {
    const body = { itemId: I.milk, action: 'ADD', quantity: 1, referenceId: 'SAME-REF' };
    const first = StockAdjustmentEnvelopeSchema.parse((await adjust(body)).json).data;
    const second = StockAdjustmentEnvelopeSchema.parse((await adjust(body)).json).data;
    expect(second.movementId).not.toBe(first.movementId);
    expect(second.quantityOnHand).toBe(first.quantityOnHand + 1);
    expect(await sbx.sandbox.inspector.stockMovements({ referenceId: 'SAME-REF' })).toHaveLength(2);
  });

  it('refuses an unregistered item with 422 authority_rejected / item_not_registered', async () => {
    const answer = await adjust({ itemId: I.bathSoap, action: 'ADD', quantity: 1 });
    expect(answer.status).toBe(422);
    expect(errorOf(answer)).toMatchObject({
      code: 'authority_rejected',
      errors: [{ code: 'item_not_registered', itemId: I.bathSoap }],
    });
    expect(await sbx.sandbox.inspector.stockMovements({ itemId: I.bathSoap })).toEqual([]);
  });

  it('refuses an item that is not stock tracked with 422 item_not_stock_tracked', async () => {
    const answer = await adjust({ itemId: I.giftVoucher, action: 'ADD', quantity: 1 });
    expect(answer.status).toBe(422);
    expect(errorOf(answer).code).toBe('item_not_stock_tracked');
  });

  it.each([
    ['quantity', { quantity: -1 }],
    ['unitPrice', { unitPrice: -0.01 }],
    ['action', { action: 'REMOVE' }],
    ['referenceId', { referenceId: 'R'.repeat(101) }],
    ['itemId', { itemId: I.mombasaWater }],
    ['branchId', { branchId: 'br_nowhere' }],
  ])('refuses a bad %s with 400 naming it', async (field, overrides) => {
    const answer = await adjust({ itemId: I.sugar, action: 'ADD', quantity: 1, ...overrides });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message.startsWith(`${field}: `)).toBe(true);
  });

  it('requires quantity', async () => {
    expect(errorOf(await adjust({ itemId: I.sugar, action: 'ADD' })).message).toBe('quantity: is required');
  });
});

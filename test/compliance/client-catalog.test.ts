import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { authorityErrorsFromError, isRegistered, itemFromError } from '../../src/compliance/schemas.js';
import { RequestValidationError } from '../../src/http/errors.js';
import { DEMO, apiErrorOf, useClients, useSandbox } from './helpers.js';

const sandbox = useSandbox();
const client = useClients(sandbox);
const nairobi = () => client(DEMO.keys.nairobi);

/** A new PENDING item that lacks a product type and a classification mapping. */
async function newItemId(): Promise<string> {
  const { data } = await nairobi().createItem({
    externalId: `SKU-${randomUUID().slice(0, 8)}`,
    name: 'Chapati flour 2kg',
    taxTypeCode: 'B',
    unitPrice: 210,
  });
  return data.id;
}

async function quantityAt(branchId: string, itemId: string): Promise<number> {
  const levels = await sandbox().inspector.stockLevels(DEMO.businesses.nairobi);
  return levels.find((l) => l.branchId === branchId && l.itemId === itemId)?.quantity ?? 0;
}

describe('createItem', () => {
  it('201: a PENDING item that says what it lacks; its externalId again is a 409 carrying that item (C21)', async () => {
    const externalId = `SKU-${randomUUID().slice(0, 8)}`;
    const request = { externalId, name: 'Maize meal 2kg', taxTypeCode: 'B', productTypeCode: '2', unitPrice: 180 };
    const { data, meta } = await nairobi().createItem(request);
    expect(meta.status).toBe(201);
    expect(data).toMatchObject({
      externalId,
      name: 'Maize meal 2kg',
      productTypeCode: '2',
      registrationStatus: 'PENDING',
      needs: { productType: false, classificationMapping: true },
    });
    const err = await apiErrorOf(nairobi().createItem({ ...request, name: 'Maize meal 2 kg' }));
    expect(err).toMatchObject({ status: 409, code: 'already_exists' });
    expect(itemFromError(err)).toMatchObject({ id: data.id, externalId, name: 'Maize meal 2kg' });
    const items = await nairobi().listItems();
    expect(items.data.filter((item) => item.externalId === externalId)).toHaveLength(1);
  });

  it('a bad request is refused before anything is sent', async () => {
    const before = (await sandbox().inspector.requestLog()).length;
    await expect(
      nairobi().createItem({ externalId: ' ', name: 'Sugar', taxTypeCode: 'B', unitPrice: -1 }),
    ).rejects.toBeInstanceOf(RequestValidationError);
    expect((await sandbox().inspector.requestLog()).length).toBe(before);
  });
});

describe('registerItem', () => {
  it('422 with the item while it lacks something; registered once fixed; repeating is harmless (C23)', async () => {
    const item = { id: await newItemId() };
    const err = await apiErrorOf(nairobi().registerItem(item.id));
    expect(err).toMatchObject({ status: 422, code: 'authority_rejected' });
    expect(itemFromError(err)).toMatchObject({
      id: item.id,
      registrationStatus: 'PENDING',
      needs: { productType: true, classificationMapping: true },
    });
    expect(
      authorityErrorsFromError(err)
        .map((e) => e.code)
        .sort(),
    ).toEqual(['classification_mapping_missing', 'product_type_missing']);

    await sandbox().inspector.fixItem(item.id);
    const registered = await nairobi().registerItem(item.id, { branchId: '01' }); // authorityBhfId works too
    expect(registered.meta.status).toBe(200);
    expect(isRegistered(registered.data)).toBe(true);
    const again = await nairobi().registerItem(item.id);
    expect(again.data).toEqual(registered.data);
    const forced = await nairobi().registerItem(item.id, { reRegister: true, branchId: DEMO.branches.nairobiCbd });
    expect(isRegistered(forced.data)).toBe(true);
  });

  it('an item that lacks nothing registers at once', async () => {
    const { data } = await nairobi().registerItem(DEMO.items.bathSoap);
    expect(data).toMatchObject({ id: DEMO.items.bathSoap, registrationStatus: 'REGISTERED' });
  });

  it("another business's item is 404", async () => {
    const err = await apiErrorOf(nairobi().registerItem(DEMO.items.mombasaMandazi));
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('adjustStock', () => {
  it('201: adds at the default branch and reports the movement', async () => {
    const before = await quantityAt(DEMO.branches.nairobiCbd, DEMO.items.sugar);
    const referenceId = `GRN-${randomUUID()}`;
    const { data, meta } = await nairobi().adjustStock({
      itemId: DEMO.items.sugar,
      action: 'ADD',
      quantity: 12.5,
      unitPrice: 200,
      referenceId,
    });
    expect(meta.status).toBe(201);
    expect(data).toMatchObject({
      itemId: DEMO.items.sugar,
      branchId: DEMO.branches.nairobiCbd,
      quantityOnHand: before + 12.5,
      fiscal: { stockIo: { status: 'ok' }, stockMaster: { status: 'ok' } },
    });
    const movements = await sandbox().inspector.stockMovements({ referenceId });
    expect(movements.map((m) => m.movementId)).toEqual([data.movementId]);
  });

  it('each call is a separate movement, never de-duplicated', async () => {
    const referenceId = `ADJ-${randomUUID()}`;
    const input = { itemId: DEMO.items.milk, action: 'ADD', quantity: 1, referenceId } as const;
    const first = await nairobi().adjustStock(input);
    const second = await nairobi().adjustStock(input);
    expect(second.data.movementId).not.toBe(first.data.movementId);
    expect(second.data.quantityOnHand).toBe(first.data.quantityOnHand + 1);
    expect(await sandbox().inspector.stockMovements({ referenceId })).toHaveLength(2);
  });

  it('DEDUCT never takes the quantity below 0; a branch can be chosen by authorityBhfId', async () => {
    const before = await quantityAt(DEMO.branches.nairobiWestlands, DEMO.items.lpgRefill);
    const { data } = await nairobi().adjustStock({
      itemId: DEMO.items.lpgRefill,
      action: 'DEDUCT',
      quantity: before + 100,
      branchId: '01',
    });
    expect(data).toMatchObject({ branchId: DEMO.branches.nairobiWestlands, quantityOnHand: 0 });
  });

  it('an item that is not stock tracked is 422 item_not_stock_tracked', async () => {
    const err = await apiErrorOf(nairobi().adjustStock({ itemId: DEMO.items.giftVoucher, action: 'ADD', quantity: 1 }));
    expect(err).toMatchObject({ status: 422, code: 'item_not_stock_tracked', retry: 'final' });
  });

  it('an unregistered item is 422 authority_rejected with cause item_not_registered', async () => {
    const err = await apiErrorOf(nairobi().adjustStock({ itemId: DEMO.items.spiceMix, action: 'ADD', quantity: 1 }));
    expect(err).toMatchObject({ status: 422, code: 'authority_rejected' });
    expect(authorityErrorsFromError(err)).toEqual([
      expect.objectContaining({ code: 'item_not_registered', itemId: DEMO.items.spiceMix }),
    ]);
  });

  it('a key without stock:write is 403', async () => {
    const err = await apiErrorOf(
      client(DEMO.keys.readOnly).adjustStock({ itemId: DEMO.items.sugar, action: 'ADD', quantity: 1 }),
    );
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
  });
});

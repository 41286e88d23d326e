import { describe, expect, it } from 'vitest';
import { ItemEnvelopeSchema, ItemListEnvelopeSchema, type Item } from '../../../src/compliance/schemas.js';
import { DEMO, errorOf, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

const I = DEMO.items;
const itemOf = (json: unknown): Item => ItemEnvelopeSchema.parse(json).data.item;

describe('GET /v1/items', () => {
  it("lists the business's items, not another's", async () => {
    const answer = await client.get('/v1/items');
    expect(answer.status).toBe(200);
    const { items } = ItemListEnvelopeSchema.parse(answer.json).data;
    expect(items.map((i) => i.id)).toEqual([
      I.milk,
      I.sugar,
      I.cookingOil,
      I.maizeSeed,
      I.giftVoucher,
      I.lpgRefill,
      I.bathSoap,
      I.spiceMix,
      I.beefSamosa,
    ]);
    expect(items.find((i) => i.id === I.sugar)).toEqual({
      id: I.sugar,
      externalId: 'SKU-SUGAR-2KG',
      name: 'Sugar 2kg',
      sku: 'SUGAR-2KG',
      taxCategory: 'VAT_STANDARD',
      taxTypeCode: 'B',
      productTypeCode: '2',
      classificationCode: '5016150100',
      unitCode: 'U',
      packagingUnitCode: 'BG',
      unitPrice: 250,
      stockTracked: true,
      registrationStatus: 'REGISTERED',
      needs: { productType: false, classificationMapping: false },
    });
    expect(items.find((i) => i.id === I.beefSamosa)).toMatchObject({
      registrationStatus: 'PENDING',
      productTypeCode: null,
      needs: { productType: true, classificationMapping: false },
    });
  });
});

describe('POST /v1/items (C21)', () => {
  const newItem = { externalId: 'SKU-NEW-1', name: 'Chapati', taxTypeCode: 'B', unitPrice: 30 };

  it('creates a PENDING item with computed needs and defaults', async () => {
    const answer = await client.post('/v1/items', newItem);
    expect(answer.status).toBe(201);
    expect(itemOf(answer.json)).toMatchObject({
      externalId: 'SKU-NEW-1',
      taxCategory: 'VAT_STANDARD',
      unitCode: 'U',
      packagingUnitCode: 'NT',
      stockTracked: true,
      registrationStatus: 'PENDING',
      needs: { productType: true, classificationMapping: true },
    });
  });

  it('answers 409 already_exists with the existing item for a repeated externalId', async () => {
    const first = itemOf((await client.post('/v1/items', newItem)).json);
    const again = await client.post('/v1/items', { ...newItem, name: 'Chapati (copy)' });
    expect(again.status).toBe(409);
    expect(errorOf(again)).toMatchObject({ code: 'already_exists', item: { id: first.id, name: 'Chapati' } });
  });

  it('counts creations per externalId and registrations sent to the authority, for the inspection API', async () => {
    const item = { ...newItem, externalId: 'SKU-COUNTED-1', productTypeCode: '2', classificationCode: '5016150100' };
    const created = itemOf((await client.post('/v1/items', item)).json);
    expect((await client.post('/v1/items', item)).status).toBe(409);
    for (let i = 0; i < 2; i++) expect((await client.post(`/v1/items/${created.id}/register`)).status).toBe(200);
    const records = await sbx.sandbox.inspector.itemRecords(DEMO.businesses.nairobi);
    expect(records.find((r) => r.externalId === 'SKU-COUNTED-1')).toEqual({
      id: created.id,
      externalId: 'SKU-COUNTED-1',
      registrationStatus: 'REGISTERED',
      creations: 1,
      registrations: 1,
    });
    // The fixture's items were not created through the API.
    expect(records.find((r) => r.id === I.sugar)).toMatchObject({ creations: 0, registrations: 0 });
  });

  it.each([
    ['taxTypeCode', { taxTypeCode: 'F' }],
    ['unitPrice', { unitPrice: -5 }],
    ['externalId', { externalId: '' }],
    ['stockTracked', { stockTracked: 'yes' }],
  ])('refuses a bad %s with 400 naming it', async (field, overrides) => {
    const answer = await client.post('/v1/items', { ...newItem, ...overrides });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message.startsWith(`${field}: `)).toBe(true);
  });
});

describe("the authority's item-needs rules", () => {
  it('make matching new items lack a part whatever their codes, until fixed; a bad rule is 400', async () => {
    await sbx.sandbox.inspector.addItemNeedsRule({ externalId: '^SKU-NOMAP-', classificationMapping: true });
    try {
      const codes = { taxTypeCode: 'B', unitPrice: 40, productTypeCode: '2', classificationCode: '5016150100' };
      const unmapped = itemOf(
        (await client.post('/v1/items', { externalId: 'SKU-NOMAP-1', name: 'Salt', ...codes })).json,
      );
      expect(unmapped.needs).toEqual({ productType: false, classificationMapping: true });
      const mapped = itemOf((await client.post('/v1/items', { externalId: 'SKU-MAP-1', name: 'Salt', ...codes })).json);
      expect(mapped.needs).toEqual({ productType: false, classificationMapping: false });

      const refused = await client.post(`/v1/items/${unmapped.id}/register`);
      expect(refused.status).toBe(422);
      expect(errorOf(refused).errors?.map((e) => e.code)).toEqual(['classification_mapping_missing']);
      await sbx.sandbox.inspector.fixItem(unmapped.id);
      expect((await client.post(`/v1/items/${unmapped.id}/register`)).status).toBe(200);
    } finally {
      await sbx.sandbox.inspector.clearItemNeedsRules();
    }
    const after = itemOf(
      (await client.post('/v1/items', { externalId: 'SKU-NOMAP-2', name: 'Salt', taxTypeCode: 'B', unitPrice: 40 }))
        .json,
    );
    expect(after.needs).toEqual({ productType: true, classificationMapping: true }); // from its missing codes only
    await expect(sbx.sandbox.inspector.addItemNeedsRule({ externalId: '^SKU-' })).rejects.toThrow(
      /must set productType or classificationMapping/,
    );
  });
});

describe('POST /v1/items/{id}/register (C22, C23)', () => {
  it('registers a PENDING item that lacks nothing; the body is optional', async () => {
    const answer = await client.post(`/v1/items/${I.bathSoap}/register`);
    expect(answer.status).toBe(200);
    expect(itemOf(answer.json).registrationStatus).toBe('REGISTERED');
    expect(await client.post(`/v1/items/${I.bathSoap}/register`, {}).then((a) => a.status)).toBe(200);
  });

  it('refuses an item that lacks something with 422 carrying the item and the causes', async () => {
    const answer = await client.post(`/v1/items/${I.spiceMix}/register`, { branchId: '01' });
    expect(answer.status).toBe(422);
    const error = errorOf(answer);
    expect(error.code).toBe('authority_rejected');
    expect(error.item).toMatchObject({
      id: I.spiceMix,
      registrationStatus: 'PENDING',
      needs: { classificationMapping: true },
    });
    expect(error.errors?.map((e) => e.code)).toEqual(['classification_mapping_missing']);

    await sbx.sandbox.inspector.fixItem(I.spiceMix);
    expect(
      itemOf((await client.post(`/v1/items/${I.spiceMix}/register`, { branchId: '01' })).json).registrationStatus,
    ).toBe('REGISTERED');
  });

  it('fills in a missing product type through the inspection API (standing in for the dashboard)', async () => {
    expect(errorOf(await client.post(`/v1/items/${I.beefSamosa}/register`)).errors?.[0]?.code).toBe(
      'product_type_missing',
    );
    const fixed = await sbx.sandbox.inspector.fixItem(I.beefSamosa);
    expect(fixed).toMatchObject({ productTypeCode: '2', needs: { productType: false, classificationMapping: false } });
    expect((await client.post(`/v1/items/${I.beefSamosa}/register`)).status).toBe(200);
  });

  it('leaves a registered item unchanged, and re-registers it on request', async () => {
    expect(itemOf((await client.post(`/v1/items/${I.sugar}/register`)).json).registrationStatus).toBe('REGISTERED');
    expect(
      (
        await client.post(`/v1/items/${I.sugar}/register`, {
          reRegister: true,
          branchId: DEMO.branches.nairobiWestlands,
        })
      ).status,
    ).toBe(200);
  });

  it('refuses an unknown branch with 400 listing the branches', async () => {
    const answer = await client.post(`/v1/items/${I.bathSoap}/register`, { branchId: '09' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).branches?.map((b) => b.id)).toEqual([
      DEMO.branches.nairobiCbd,
      DEMO.branches.nairobiWestlands,
    ]);
  });

  it('refuses a non-boolean reRegister', async () => {
    const answer = await client.post(`/v1/items/${I.sugar}/register`, { reRegister: 'true' });
    expect(errorOf(answer).message).toMatch(/^reRegister: /);
  });

  it("answers 404 for another business's item", async () => {
    expect((await client.post(`/v1/items/${I.mombasaWater}/register`)).status).toBe(404);
    expect((await client.post('/v1/items/itm_unknown/register')).status).toBe(404);
  });
});

import { describe, expect, it } from 'vitest';
import { CodeListsEnvelopeSchema, ItemClassificationsEnvelopeSchema } from '../../../src/compliance/schemas.js';
import { DEMO, useTestSandbox } from './harness.js';

const { client } = useTestSandbox({ key: DEMO.keys.readOnly }); // any valid key, whatever its scopes (C39)

describe('lookups (C24)', () => {
  it('lists the code lists, or one by listId', async () => {
    const all = CodeListsEnvelopeSchema.parse((await client.get('/v1/lookups/code-lists')).json).data.codeLists;
    expect(all.map((l) => l.id)).toContain('taxType');
    const taxTypes = CodeListsEnvelopeSchema.parse(
      (await client.get('/v1/lookups/code-lists', { listId: 'taxType' })).json,
    ).data.codeLists;
    expect(taxTypes).toHaveLength(1);
    expect(taxTypes[0]?.codes.map((c) => c.code)).toEqual(['A', 'B', 'C', 'D', 'E']);
    const none = CodeListsEnvelopeSchema.parse((await client.get('/v1/lookups/code-lists', { listId: 'nope' })).json)
      .data.codeLists;
    expect(none).toEqual([]);
  });

  it('searches item classifications by name or code', async () => {
    const found = ItemClassificationsEnvelopeSchema.parse(
      (await client.get('/v1/lookups/item-classifications', { search: 'milk' })).json,
    ).data.classifications;
    expect(found).toEqual([{ code: '5010150100', name: 'Fresh milk', taxTypeCode: 'A', level: 4 }]);
    const byCode = ItemClassificationsEnvelopeSchema.parse(
      (await client.get('/v1/lookups/item-classifications', { search: '50161' })).json,
    ).data.classifications;
    expect(byCode.map((c) => c.name)).toEqual(['Sugar']);
  });
});

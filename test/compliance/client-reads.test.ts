import { describe, expect, it } from 'vitest';
import type { Purchase } from '../../src/compliance/schemas.js';
import { isSigned } from '../../src/contracts/compliance-rules.js';
import { DEMO, apiErrorOf, idempotencyKey, nairobiSale, useClients, useSandbox } from './helpers.js';

const sandbox = useSandbox();
const client = useClients(sandbox);

function fixtureBusiness(id: string) {
  const business = sandbox().fixture.compliance.businesses.find((b) => b.id === id);
  if (!business) throw new Error(`no business ${id} in the fixture`);
  return business;
}

/** Every purchase of every page. */
async function every(pages: AsyncIterable<{ data: { purchases: Purchase[] } }>): Promise<Purchase[]> {
  const purchases: Purchase[] = [];
  for await (const page of pages) purchases.push(...page.data.purchases);
  return purchases;
}

describe('identity and businesses', () => {
  it('getIdentity describes an organisation-wide key, with the rate-limit headers', async () => {
    const { data, meta } = await client(DEMO.keys.orgWide).getIdentity();
    expect(data.application?.id).toBe(DEMO.applications.retail);
    expect(data.apiKey?.environment).toBe('test');
    expect(data.apiKey?.businessId).toBeNull();
    expect(data.apiKey?.scopes).toEqual(expect.arrayContaining(['sales:read', 'sales:write', 'stock:write']));
    expect(meta.status).toBe(200);
    expect(meta.rateLimit.limit).toBe(120);
    expect(meta.rateLimit.remaining).toBeLessThan(120);
    expect(meta.rateLimit.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(meta.rateLimit.resetSeconds).toBeLessThanOrEqual(60);
    expect(meta.idempotentReplayed).toBe(false);
  });

  it('getIdentity of a business-bound key names its business and scopes', async () => {
    const { data } = await client(DEMO.keys.readOnly).getIdentity();
    expect(data.apiKey?.businessId).toBe(DEMO.businesses.nairobi);
    expect(data.apiKey?.scopes).toEqual(['sales:read']);
  });

  it('listBusinesses lists only what the key may act for, with branches', async () => {
    const orgWide = (await client(DEMO.keys.orgWide).listBusinesses()).data;
    expect(orgWide.map((b) => b.id).sort()).toEqual([DEMO.businesses.mombasa, DEMO.businesses.nairobi]);
    const nairobi = orgWide.find((b) => b.id === DEMO.businesses.nairobi);
    expect(nairobi?.branches.map((b) => [b.id, b.authorityBhfId])).toEqual(
      fixtureBusiness(DEMO.businesses.nairobi).branches.map((b) => [b.id, b.authorityBhfId]),
    );

    const bound = (await client(DEMO.keys.mombasa).listBusinesses()).data;
    expect(bound.map((b) => b.id)).toEqual([DEMO.businesses.mombasa]);
    const live = (await client(DEMO.keys.live).listBusinesses()).data;
    expect(live.map((b) => b.id)).toEqual([DEMO.businesses.production]);
  });
});

describe('businessId on business-scoped calls', () => {
  const itemIds = async (promise: Promise<{ data: Array<{ id: string }> }>) => (await promise).data.map((i) => i.id);

  it('an organisation-wide key without one gets 400 naming businessId', async () => {
    const err = await apiErrorOf(client(DEMO.keys.orgWide).listItems());
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', retry: 'final', requestSent: true });
    expect(err.message).toContain('businessId');
  });

  it('the configured business is sent, and a per-call businessId overrides it', async () => {
    const nairobiClient = client(DEMO.keys.orgWide, { businessId: DEMO.businesses.nairobi });
    expect(await itemIds(nairobiClient.listItems())).toContain(DEMO.items.sugar);
    const mombasaItems = await itemIds(nairobiClient.listItems({ businessId: DEMO.businesses.mombasa }));
    expect(mombasaItems).toContain(DEMO.items.mombasaWater);
    expect(mombasaItems).not.toContain(DEMO.items.sugar);
  });

  it('a business-bound key may omit it or send its own (C42)', async () => {
    expect(await itemIds(client(DEMO.keys.nairobi).listItems())).toContain(DEMO.items.sugar);
    expect(await itemIds(client(DEMO.keys.nairobi, { businessId: DEMO.businesses.nairobi }).listItems())).toContain(
      DEMO.items.sugar,
    );
  });
});

describe('items', () => {
  it('listItems returns every item of the business with registration state and needs', async () => {
    const { data } = await client(DEMO.keys.nairobi).listItems();
    expect(data.map((i) => i.id).sort()).toEqual(
      fixtureBusiness(DEMO.businesses.nairobi)
        .items.map((i) => i.id)
        .sort(),
    );
    expect(data.find((i) => i.id === DEMO.items.sugar)).toMatchObject({
      registrationStatus: 'REGISTERED',
      taxTypeCode: 'B',
    });
    expect(data.find((i) => i.id === DEMO.items.spiceMix)).toMatchObject({
      registrationStatus: 'PENDING',
      needs: { productType: false, classificationMapping: true },
    });
    expect(data.find((i) => i.id === DEMO.items.beefSamosa)?.needs?.productType).toBe(true);
  });
});

describe('sales: read and receipt', () => {
  it('getSale returns the document createSale filed', async () => {
    const nairobi = client(DEMO.keys.nairobi);
    const created = await nairobi.createSale(nairobiSale(), idempotencyKey());
    const { data: sale, meta } = await nairobi.getSale(created.data.id);
    expect(meta.status).toBe(200);
    expect(sale).toMatchObject({ id: created.data.id, type: 'sale', status: 'completed' });
    expect(isSigned(sale)).toBe(true);
    expect(sale.receipt?.cuInvoiceNo).toMatch(/^KRACU\d{10}\/\d+$/);
  });

  it('ids are URL-encoded into the path', async () => {
    const err = await apiErrorOf(client(DEMO.keys.nairobi).getSale('a/b?c=d'));
    expect(err.path).toBe('/v1/sales/a%2Fb%3Fc%3Dd');
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    expect(err.message).toContain('a/b?c=d'); // the sale route answered, not "no such route"
  });
});

describe('lookups (no business scope)', () => {
  it('listCodeLists returns every list, or the one asked for', async () => {
    const orgWide = client(DEMO.keys.orgWide);
    const all = (await orgWide.listCodeLists()).data;
    expect(all.length).toBeGreaterThan(1);
    const taxType = (await orgWide.listCodeLists({ listId: 'taxType' })).data;
    expect(taxType.map((l) => l.id)).toEqual(['taxType']);
    expect(taxType[0]?.codes.map((c) => c.code)).toEqual(['A', 'B', 'C', 'D', 'E']);
  });
});

describe('purchases', () => {
  const visible = () => fixtureBusiness(DEMO.businesses.nairobi).purchases.filter((p) => !p.pendingPull);

  it('listPurchases returns the first page, newest first, with a cursor', async () => {
    const { data } = await client(DEMO.keys.nairobi).listPurchases();
    expect(data.pagination.pageSize).toBe(20);
    expect(data.purchases).toHaveLength(20);
    expect(data.pagination.nextCursor).toEqual(expect.any(String));
    const dates = data.purchases.map((p) => p.invoiceDate);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(data.purchases[0]).toMatchObject({
      supplier: { name: expect.any(String) },
      totals: { total: expect.any(Number) },
    });
  });

  it('iteratePurchasePages walks every page passing nextCursor back', async () => {
    const pages = [];
    for await (const page of client(DEMO.keys.nairobi).iteratePurchasePages({ pageSize: 10 })) pages.push(page.data);
    const expected = visible().length;
    expect(pages).toHaveLength(Math.ceil(expected / 10));
    expect(pages.slice(0, -1).every((p) => p.purchases.length === 10 && p.pagination.nextCursor !== null)).toBe(true);
    expect(pages.at(-1)?.pagination.nextCursor).toBeNull();
    const ids = pages.flatMap((p) => p.purchases.map((x) => x.id));
    expect(new Set(ids).size).toBe(expected);
    expect(ids.sort()).toEqual(
      visible()
        .map((p) => p.id)
        .sort(),
    );
  });

  it('iteratePurchasePages applies the status and date filters', async () => {
    const nairobi = client(DEMO.keys.nairobi);
    const confirmed = await every(nairobi.iteratePurchasePages({ status: 'confirmed', pageSize: 7 }));
    expect(confirmed.map((p) => p.id).sort()).toEqual(
      visible()
        .filter((p) => p.status === 'confirmed')
        .map((p) => p.id)
        .sort(),
    );
    expect(confirmed.every((p) => p.status === 'confirmed')).toBe(true);

    const dates = visible()
      .map((p) => p.invoiceDate)
      .sort();
    const fromDate = dates[5]!;
    const toDate = dates[25]!;
    const inRange = await every(nairobi.iteratePurchasePages({ fromDate, toDate }));
    expect(inRange.length).toBe(dates.filter((d) => d >= fromDate && d <= toDate).length);
    expect(inRange.every((p) => p.invoiceDate >= fromDate && p.invoiceDate <= toDate)).toBe(true);
  });

  it('pullPurchases fetches the held-back invoices once', async () => {
    const nairobi = client(DEMO.keys.nairobi);
    const held = fixtureBusiness(DEMO.businesses.nairobi).purchases.filter((p) => p.pendingPull);
    // The first pull brings what the authority holds now; one more arrives by the second (a late invoice).
    const now = held.filter((p) => (p.arrivesAtPull ?? 1) === 1);
    const later = held.filter((p) => p.arrivesAtPull === 2);
    expect(now.length).toBeGreaterThan(0);
    const first = await nairobi.pullPurchases();
    expect(first.data).toMatchObject({ pulled: now.length });
    expect((await nairobi.pullPurchases()).data.pulled).toBe(later.length);
    const again = await nairobi.pullPurchases();
    expect(again.data.pulled).toBe(0);
    const ids = (await every(nairobi.iteratePurchasePages({ pageSize: 100 }))).map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining(held.map((p) => p.id)));
  });
});

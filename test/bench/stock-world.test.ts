/**
 * The stock section's world: a fixture the sandbox accepts and serves over real HTTP (the key acts for both
 * businesses, every item registered and stock-tracked, a movement of one of them recorded against ample stock), and
 * the tills' sales (L distinct catalogue items, at the catalogue price).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../sandbox/fixture.js';
import { startSandbox, type Sandbox } from '../../sandbox/server.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { branchOf, catalogue, itemId, saleMaker, STARTING_STOCK, stockWorld } from '../../tools/bench/stock-world.js';

const world = stockWorld({
  businesses: ['biz_stock_t_backlog', 'biz_stock_t_faults'],
  items: 30,
  requestsPerWindow: 120,
  windowMs: 5_000,
});

describe('the generated world', () => {
  it('is a fixture the sandbox accepts: an application and a key per business, each business with 30 registered stock-tracked items and ample stock', () => {
    const fixture = parseFixture({ compliance: world.fixture }).compliance;
    expect(fixture.rateLimitWindowMs).toBe(5_000);
    expect(fixture.applications.map((a) => a.requestsPerMinute)).toEqual([120, 120]);
    expect(fixture.apiKeys.map((k) => k.applicationId)).toEqual(fixture.applications.map((a) => a.id));
    expect(fixture.businesses.map((b) => b.applicationId)).toEqual(world.tenants.map((t) => t.application));
    expect(fixture.businesses).toHaveLength(2);
    for (const b of fixture.businesses) {
      expect(b.items).toHaveLength(30);
      expect(b.items.every((i) => i.stockTracked && i.registrationStatus === 'REGISTERED')).toBe(true);
      expect(b.stock.every((s) => s.quantity === STARTING_STOCK && s.branchId === branchOf(b.id))).toBe(true);
    }
  });

  it('prices every item differently and makes a new key every time', () => {
    expect(new Set(catalogue(30).map((i) => i.unitPrice)).size).toBe(30);
    expect(new Set(world.tenants.map((t) => t.key)).size).toBe(2);
    expect(
      stockWorld({ businesses: ['biz_x'], items: 3, requestsPerWindow: 120, windowMs: 60_000 }).tenants[0]!.key,
    ).not.toBe(world.tenants[0]!.key);
  });
});

describe("the tills' sales", () => {
  const make = saleMaker(world, 'biz_stock_t_backlog', { lines: 3, seed: 17, tag: 'T' });

  it("has L distinct items of the business's catalogue, 1–3 of each at the catalogue price, and no refund window", () => {
    const prices = new Map(world.catalogue.map((i) => [itemId('biz_stock_t_backlog', i), i.unitPrice]));
    for (let n = 0; n < 200; n++) {
      const sale = make(n);
      expect(sale.traderInvoiceNumber).toBe(`BS-T-${n}`);
      expect(new Set(sale.lines.map((l) => l.itemId)).size).toBe(3);
      for (const l of sale.lines) {
        expect(l.unitPrice).toBe(prices.get(l.itemId));
        expect(l.quantity).toBeGreaterThanOrEqual(1);
        expect(l.quantity).toBeLessThanOrEqual(3);
      }
      expect(sale.options).toEqual({ refundWindowDays: 0 });
    }
  });

  it('draws over the whole catalogue, and sale n is the same whenever it is made', () => {
    const items = new Set(Array.from({ length: 200 }, (_, n) => make(n).lines.map((l) => l.itemId)).flat());
    expect(items.size).toBe(30);
    expect(make(42)).toEqual(saleMaker(world, 'biz_stock_t_backlog', { lines: 3, seed: 17, tag: 'T' })(42));
    expect(() => saleMaker(world, 'biz_x', { lines: 31, seed: 1, tag: 'T' })).toThrow(RangeError);
  });
});

describe('served by the sandbox over HTTP', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ fixture: { compliance: world.fixture } });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('takes a sale and a stock movement of each business with its own key only, from ample stock', async () => {
    const [backlog, faults] = world.tenants;
    const business = faults!.businessId;
    const client = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: faults!.key });
    const other = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: backlog!.key });
    try {
      const sale = saleMaker(world, business, { lines: 3, seed: 1, tag: 'HTTP' })(0);
      const created = await client.createSale(
        { traderInvoiceNumber: sale.traderInvoiceNumber, saleDate: sale.saleDate, lines: sale.lines },
        'bench-stock-world-0',
        { businessId: business },
      );
      expect(created.meta.status).toBe(201);
      const first = sale.lines[0]!;
      const adjusted = await client.adjustStock(
        {
          itemId: first.itemId,
          action: 'DEDUCT',
          quantity: first.quantity,
          unitPrice: first.unitPrice,
          referenceId: 'bench-stock-world:0',
        },
        { businessId: business },
      );
      expect(adjusted.data.quantityOnHand).toBe(STARTING_STOCK - first.quantity);
      const movements = await sandbox.inspector.stockMovements({ businessId: business });
      expect(movements).toHaveLength(1);
      expect(movements[0]).toMatchObject({
        itemId: first.itemId,
        quantityBefore: STARTING_STOCK,
        branchId: branchOf(business),
        referenceId: 'bench-stock-world:0',
      });
      await expect(other.listItems({ businessId: business })).rejects.toMatchObject({ status: 403 });
    } finally {
      await client.close();
      await other.close();
    }
  });
});

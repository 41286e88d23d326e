/**
 * The tenancy section's generated world: a fixture the sandbox accepts and serves over real HTTP (every key acts for
 * its own businesses only), and a tenants file the worker's own loader reads as the bench means it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseFixture } from '../../sandbox/fixture.js';
import { startSandbox } from '../../sandbox/server.js';
import { ComplianceClient } from '../../src/compliance/client.js';
import { loadTenantsConfig } from '../../src/tenants/load.js';
import {
  businessCounts,
  itemOf,
  spread,
  tenancySale,
  tenancyWorld,
  tenantsFileContent,
} from '../../tools/bench/tenancy-world.js';

const dir = mkdtempSync(join(tmpdir(), 'tenancy-world-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('spreading businesses over applications', () => {
  it('gives each at least one, the first ones the remainder', () => {
    expect(spread(500, 200)).toEqual([
      ...Array.from({ length: 100 }, () => 3),
      ...Array.from({ length: 100 }, () => 2),
    ]);
    expect(spread(5, 5)).toEqual([1, 1, 1, 1, 1]);
    expect(() => spread(4, 5)).toThrow(RangeError);
  });

  it('makes every other application a single business and the others groups sharing the rest', () => {
    const counts = businessCounts(500, 200);
    expect(counts.slice(0, 4)).toEqual([1, 4, 1, 4]);
    expect(counts.filter((c) => c === 1)).toHaveLength(100);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(500);
    expect(businessCounts(10, 5)).toEqual([1, 4, 1, 3, 1]);
    expect(() => businessCounts(5, 4)).toThrow(RangeError);
    expect(() => businessCounts(1, 1)).toThrow(RangeError);
  });
});

describe('the generated world', () => {
  const world = tenancyWorld({ applications: 200, businesses: 500, requestsPerWindow: 120, windowMs: 60_000 });

  it('holds the scale asked for, and a newcomer outside it with its own application and business', () => {
    expect(world.merchants).toHaveLength(200);
    expect(world.merchants.flatMap((m) => m.businesses)).toHaveLength(500);
    expect(new Set(world.merchants.map((m) => m.key)).size).toBe(200);
    expect(world.merchants.map((m) => m.application)).not.toContain(world.newcomer.application);
    expect(world.newcomer.businesses).toHaveLength(1);
  });

  it('is a fixture the sandbox accepts: 201 applications, their keys, 501 businesses each with its item', () => {
    const fixture = parseFixture({ compliance: world.fixture }).compliance;
    expect(fixture.applications).toHaveLength(201);
    expect(fixture.apiKeys).toHaveLength(201);
    expect(fixture.businesses).toHaveLength(501);
    expect(fixture.rateLimitWindowMs).toBe(60_000);
    expect(
      fixture.businesses.every(
        (b) => b.items.length === 1 && b.items[0]!.id === itemOf(b.id) && !b.items[0]!.stockTracked,
      ),
    ).toBe(true);
  });

  it('makes a new key every time', () => {
    const again = tenancyWorld({ applications: 2, businesses: 3, requestsPerWindow: 120, windowMs: 60_000 });
    expect(again.merchants[0]!.key).not.toBe(world.merchants[0]!.key);
  });

  it('writes a tenants file the worker reads: every application with its key, its budget per minute and its businesses', () => {
    const file = join(dir, 'tenants.json');
    writeFileSync(file, JSON.stringify(tenantsFileContent(world.merchants, 'http://127.0.0.1:9', 5_000)));
    const tenants = loadTenantsConfig({ TENANTS_FILE: file });
    expect(tenants.compliance).toHaveLength(200);
    const first = tenants.compliance[0]!;
    expect(first.application).toBe('m0001');
    expect(first.service.apiKey).toBe(world.merchants[0]!.key);
    expect(first.service.baseUrl).toBe('http://127.0.0.1:9');
    // 120 per 5 s window is 1,440 a minute.
    expect(first.requestsPerMinute).toBe(1_440);
    expect(first.businesses).toEqual(world.merchants[0]!.businesses);
  });

  it("lets each key act for its own businesses and sell their item, and for no other merchant's business", async () => {
    const small = tenancyWorld({ applications: 3, businesses: 5, requestsPerWindow: 120, windowMs: 60_000 });
    const sandbox = await startSandbox({ fixture: { compliance: small.fixture } });
    try {
      const [single, group] = small.merchants;
      expect(group!.businesses.length).toBeGreaterThan(1);
      const client = new ComplianceClient({ baseUrl: sandbox.complianceUrl, apiKey: group!.key });
      const sale = tenancySale(group!.businesses[1]!, 'TENANCY-WORLD-1');
      const created = await client.createSale(
        { traderInvoiceNumber: sale.traderInvoiceNumber, saleDate: sale.saleDate, lines: sale.lines },
        'tenancy-world-0001',
        { businessId: sale.businessId },
      );
      expect(created.meta.status).toBe(201);
      await expect(client.listItems({ businessId: single!.businesses[0]! })).rejects.toMatchObject({ status: 403 });
      await client.close();
    } finally {
      await sandbox.close();
    }
  });
});

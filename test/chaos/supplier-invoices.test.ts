import { describe, expect, it } from 'vitest';
import { PurchaseFixtureSchema } from '../../sandbox/compliance/fixture-schema.js';
import { normalise } from '../../src/contracts/stock-in.js';
import { parseEntry, stockInEntry } from '../../src/tenants/file-schema.js';
import { untold } from '../../tools/chaos/stock-ins.js';
import {
  dayBefore,
  finalStatus,
  FROM_DAYS_BEFORE,
  plannedStockIn,
  purchaseFixture,
} from '../../tools/chaos/supplier-invoices.js';
import { tenantsFileContent } from '../../tools/chaos/tenants-file.js';
import { chaosWorld } from '../../tools/chaos/world.js';

const FAULT_MS = 60_000;
const DATE = '2026-05-01';
const { catalog, applications } = chaosWorld({ totalRequestsPerMinute: 1200 });
const plan = (seed: number, sales = 60) => plannedStockIn({ seed, sales, faultMs: FAULT_MS, catalog, date: DATE });

describe('the supplier invoices of a chaos run', () => {
  it('takes stock in at one business of each application, and the sandbox holds no invoice of its own', () => {
    const taking = catalog.filter((b) => b.takesStockIn);
    expect(new Set(taking.map((b) => b.applicationId)).size).toBe(applications.length);
    expect(catalog.some((b) => !b.takesStockIn)).toBe(true);
    for (const b of taking) expect(b.incomingItems.length).toBeGreaterThan(0);
    const { fixture } = chaosWorld({ totalRequestsPerMinute: 1200 });
    for (const b of catalog) expect(fixture.businesses!.find((f) => f.id === b.businessId)!.purchases).toEqual([]);
  });

  it('is the same for the same seed, and scales with the sales', () => {
    expect(plan(42)).toEqual(plan(42));
    expect(plan(43)).not.toEqual(plan(42));
    const businesses = Object.keys(plan(1).from).length;
    expect(businesses).toBe(3);
    // At least three per business and one before the start date.
    expect(plan(1, 10).invoices).toHaveLength(businesses * 4);
    expect(plan(1, 600).invoices).toHaveLength(businesses * 21);
  });

  it('names registered stock-tracked items in a supplier’s own spelling, and has every story at every business', () => {
    for (const seed of [1, 2, 3, 1699639067]) {
      const { from, invoices, syncs } = plan(seed);
      for (const [businessId, start] of Object.entries(from)) {
        expect(start).toBe(dayBefore(DATE, FROM_DAYS_BEFORE));
        const mine = invoices.filter((i) => i.businessId === businessId);
        expect(new Set(mine.map((i) => i.story))).toEqual(
          new Set(['confirmed', 'reconfirmed', 'rejected', 'before-start']),
        );
        const business = catalog.find((b) => b.businessId === businessId)!;
        for (const invoice of mine) {
          expect(business.branchIds).toContain(invoice.branchId);
          expect(invoice.lines.length).toBeGreaterThanOrEqual(2);
          expect(invoice.lines.length).toBeLessThanOrEqual(4);
          expect(invoice.invoiceDate < start).toBe(invoice.story === 'before-start');
          expect(invoice.invoiceDate <= DATE).toBe(true);
          for (const line of invoice.lines) {
            const item = business.incomingItems.find((i) => i.itemId === line.itemId)!;
            expect(normalise(line.description)).toBe(normalise(item.name));
            expect(line.description).not.toBe(item.name);
          }
          expect(PurchaseFixtureSchema.safeParse(purchaseFixture(invoice)).success).toBe(true);
        }
        expect(syncs.filter((s) => s.businessId === businessId).length).toBeGreaterThanOrEqual(4);
      }
      for (const s of syncs) expect(s.atMs).toBeLessThan(FAULT_MS);
    }
  });

  it('confirms every invoice first, on arrival or during the faults, and ends it as its story says', () => {
    let arrived = 0;
    for (const seed of [7, 8, 9]) {
      for (const invoice of plan(seed).invoices) {
        const statuses = [
          ...(invoice.arrives === 'confirmed' ? ['confirmed'] : []),
          ...invoice.reviews.map((r) => r.status),
        ];
        expect(statuses).toEqual(
          {
            confirmed: ['confirmed'],
            'before-start': ['confirmed'],
            reconfirmed: ['confirmed', 'pending_review', 'confirmed'],
            rejected: ['confirmed', 'rejected'],
          }[invoice.story],
        );
        // Only one taken back may arrive confirmed: every story keeps a confirmation during the faults too.
        if (invoice.arrives === 'confirmed') {
          arrived++;
          expect(['reconfirmed', 'rejected']).toContain(invoice.story);
        }
        const times = invoice.reviews.map((r) => r.atMs);
        expect([...times].sort((a, b) => a - b)).toEqual(times);
        for (const t of times) expect(t).toBeLessThan(FAULT_MS);
        expect(finalStatus(invoice)).toBe(invoice.story === 'rejected' ? 'rejected' : 'confirmed');
        expect(purchaseFixture(invoice).status).toBe(invoice.arrives);
      }
    }
    expect(arrived).toBeGreaterThan(0);
  });

  it('writes a tenants file whose stockIn entries the worker reads', () => {
    const { from } = plan(5);
    const content = tenantsFileContent({
      applications,
      complianceUrl: 'http://127.0.0.1:1',
      accountingUrl: 'http://127.0.0.1:2',
      stockIn: from,
    });
    expect(content.stockIn.map((e) => e.business).sort()).toEqual(Object.keys(from).sort());
    for (const entry of content.stockIn)
      expect(parseEntry(stockInEntry, entry, 'tenants.json')).toEqual({ ...entry, allOrNothing: false });
  });
});

describe('whether the stock-ins caught up with the reviews', () => {
  const recorded = (status: Record<string, string>) =>
    Object.entries(status).map(([id, s]) => ({ businessId: 'b', purchase: { id, status: s } }));
  const state = (invoices: Record<string, string>) => [
    { businessId: 'b', invoices: Object.entries(invoices).map(([purchaseId, status]) => ({ purchaseId, status })) },
  ];

  it('waits for an invoice confirmed that the stock-in holds otherwise or never heard of, and the other way round', () => {
    const now = recorded({ A: 'confirmed', B: 'rejected', C: 'rejected', D: 'confirmed', E: 'pending_review' });
    const told = state({ A: 'confirmed', B: 'pending_review', C: 'confirmed', E: 'confirmed' });
    expect(untold(told, now)).toEqual(['C', 'D', 'E']);
    // Never confirmed as far as it knows, and not confirmed now: nothing to wait for.
    expect(untold(state({}), recorded({ X: 'rejected' }))).toEqual([]);
  });
});

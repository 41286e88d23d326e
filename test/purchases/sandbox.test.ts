import { describe, expect, it } from 'vitest';
import { PullResultEnvelopeSchema, PurchasePageEnvelopeSchema, type Purchase } from '../../src/compliance/schemas.js';
import { ComplianceFixtureSchema, type ComplianceFixtureInput } from '../../sandbox/compliance/fixture-schema.js';
import type { InspectedPurchase } from '../../sandbox/compliance/purchase-inspection.js';
import { DEMO, fastFixture, startTestSandbox, type TestSandbox } from '../sandbox/compliance/harness.js';
import { supplierInvoice } from './stack.js';

const NAIROBI = DEMO.businesses.nairobi;

/** The demo world plus a late invoice and an invoice whose review moves over three pulls. */
function timelineFixture(): ComplianceFixtureInput {
  return fastFixture((fixture) => {
    const nairobi = fixture.businesses!.find((b) => b.id === NAIROBI)!;
    nairobi.purchases = [
      ...(nairobi.purchases ?? []),
      { ...supplierInvoice('pur_arrives_3', '2025-02-01'), pendingPull: true, arrivesAtPull: 3 } as never,
      {
        ...supplierInvoice('pur_reviewed', '2025-06-29'),
        reviews: [
          { atPull: 2, status: 'pending_review' },
          { atPull: 3, status: 'rejected', confirmationError: 'Not delivered' },
        ],
      } as never,
    ];
  }, 'sandbox');
}

async function withSandbox(body: (s: TestSandbox) => Promise<void>): Promise<void> {
  const sandbox = await startTestSandbox({ compliance: timelineFixture() });
  try {
    await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

async function inspect<T>(
  s: TestSandbox,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  const response = await fetch(new URL(`/__sandbox${path}`, s.sandbox.complianceUrl), {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as T };
}

async function listAll(s: TestSandbox): Promise<Purchase[]> {
  const page = PurchasePageEnvelopeSchema.parse((await s.client().get('/v1/purchases', { pageSize: 100 })).json);
  return page.data.purchases;
}

async function pull(s: TestSandbox): Promise<number | undefined> {
  return PullResultEnvelopeSchema.parse((await s.client().post('/v1/purchases/pull', {})).json).data.pulled;
}

describe('sandbox: supplier invoices over time (C9, C57)', () => {
  it('fetches an invoice held for a later pull only at that pull, and moves reviews by pull', () =>
    withSandbox(async (s) => {
      const find = async (id: string) => (await listAll(s)).find((p) => p.id === id);
      expect(await find('pur_reviewed')).toMatchObject({ status: 'pulled' });
      expect(await pull(s)).toBe(5); // the demo's three held-back invoices and the stock-in supplier's two
      expect(await find('pur_arrives_3')).toBeUndefined();
      expect(await pull(s)).toBe(1); // the demo's late invoice (arrivesAtPull 2)
      expect(await find('pur_reviewed')).toMatchObject({ status: 'pending_review', confirmationError: null });
      expect(await pull(s)).toBe(1);
      expect(await find('pur_arrives_3')).toMatchObject({ invoiceDate: '2025-02-01' });
      expect(await find('pur_reviewed')).toMatchObject({ status: 'rejected', confirmationError: 'Not delivered' });
      // After a reset the world starts over, pull counts included.
      await s.sandbox.inspector.reset();
      expect(await pull(s)).toBe(5);
      expect(await find('pur_reviewed')).toMatchObject({ status: 'pulled' });
    }));

  it('lets the inspection API hand the authority an invoice (fetched by the next pull) and review one', () =>
    withSandbox(async (s) => {
      const added = await inspect<InspectedPurchase>(s, 'POST', '/purchases', {
        businessId: NAIROBI,
        purchase: supplierInvoice('pur_new', '2024-12-31'),
      });
      expect(added.status).toBe(201);
      expect(added.json).toMatchObject({
        visible: false,
        businessId: NAIROBI,
        purchase: { id: 'pur_new', status: 'pulled' },
      });
      expect((await listAll(s)).some((p) => p.id === 'pur_new')).toBe(false);
      await pull(s);
      expect((await listAll(s)).at(-1)).toMatchObject({ id: 'pur_new', invoiceDate: '2024-12-31' });

      const reviewed = await inspect<InspectedPurchase>(s, 'POST', '/purchases/pur_new/review', {
        status: 'confirmed',
      });
      expect(reviewed.json.purchase).toMatchObject({ status: 'confirmed', confirmationError: null });
      const all = await inspect<{ purchases: InspectedPurchase[] }>(s, 'GET', `/purchases?businessId=${NAIROBI}`);
      expect(all.json.purchases.filter((p) => !p.visible).map((p) => p.purchase.id)).toEqual([
        'pur_nbo_late_001',
        'pur_arrives_3',
      ]);

      expect(
        (
          await inspect(s, 'POST', '/purchases', {
            businessId: NAIROBI,
            purchase: supplierInvoice('pur_new', '2024-12-31'),
          })
        ).status,
      ).toBe(409);
      expect(
        (
          await inspect(s, 'POST', '/purchases', {
            businessId: 'biz_nope',
            purchase: supplierInvoice('pur_x', '2024-12-31'),
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await inspect(s, 'POST', '/purchases', {
            businessId: DEMO.businesses.mombasa,
            purchase: supplierInvoice('pur_y', '2024-12-31'),
          })
        ).status,
      ).toBe(400);
      expect((await inspect(s, 'POST', '/purchases/pur_nope/review', { status: 'confirmed' })).status).toBe(404);
      expect((await inspect(s, 'POST', '/purchases/pur_new/review', { status: 'approved' })).status).toBe(400);
    }));

  it('refuses arrivesAtPull on an invoice that is not held back', () => {
    const fixture = timelineFixture();
    fixture.businesses![0]!.purchases!.push({ ...supplierInvoice('pur_bad', '2025-01-01'), arrivesAtPull: 2 } as never);
    const parsed = ComplianceFixtureSchema.safeParse(fixture);
    expect(parsed.success).toBe(false);
    expect(
      parsed.error?.issues.some(
        (i) => i.path.join('.').endsWith('arrivesAtPull') && i.message === 'needs pendingPull: true',
      ),
    ).toBe(true);
  });
});

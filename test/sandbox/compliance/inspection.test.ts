import { describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { InspectionError } from '../../../sandbox/inspector.js';
import { DEMO, errorOf, invoiceNumber, saleOf, saleRequest, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

const inspector = () => sbx.sandbox.inspector;

describe('documents', () => {
  it('lists documents with their internal facts, filtered by business, number and type', async () => {
    const request = saleRequest();
    const sale = saleOf(await client.post('/v1/sales', request, { headers: { 'idempotency-key': 'inspect-key-1' } }));
    await client.post('/v1/credit-notes', {
      traderInvoiceNumber: invoiceNumber('CN-'),
      returnDate: '2025-06-02',
      saleId: sale.id,
      reason: '06',
    });
    await sbx
      .client(DEMO.keys.mombasa)
      .post('/v1/sales', saleRequest({ lines: [{ itemId: DEMO.items.mombasaWater, quantity: 1, unitPrice: 50 }] }));

    const [found] = await inspector().documents({ traderInvoiceNumber: String(request.traderInvoiceNumber) });
    expect(found).toMatchObject({
      sale: { id: sale.id, status: 'completed' },
      applicationId: DEMO.applications.retail,
      idempotencyKeys: ['inspect-key-1'],
      submissions: 1,
      causes: [],
      history: [{ status: 'pending' }, { status: 'completed' }],
      creditNoteId: expect.stringMatching(/^crn_/),
    });
    expect(await inspector().documents({ businessId: DEMO.businesses.nairobi })).toHaveLength(2);
    expect(await inspector().documents({ businessId: DEMO.businesses.nairobi, type: 'credit_note' })).toHaveLength(1);
    expect(await inspector().documents()).toHaveLength(3);
    await expect(inspector().document('sale_unknown')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('settles an in-flight document now, either way', async () => {
    const a = saleOf(await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') })));
    const completed = await inspector().settle(a.id, 'completed');
    expect(completed.sale.status).toBe('completed');
    expect(completed.sale.receipt?.receiptLabel).toBe('NS');

    const b = saleOf(await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') })));
    const failed = await inspector().settle(b.id, 'failed', {
      errorCode: 'invalid_customer_pin',
      message: 'PIN unknown',
    });
    expect(failed.sale).toMatchObject({ status: 'failed', error: 'PIN unknown' });
    expect(failed.causes).toEqual([{ code: 'invalid_customer_pin', field: 'customer.pin', message: 'PIN unknown' }]);

    // The timer that would have settled them is gone.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await inspector().document(b.id)).sale.status).toBe('failed');
    await expect(inspector().settle(a.id, 'failed')).rejects.toMatchObject({ status: 409, code: 'not_in_flight' });
  });

  it('cancels an in-flight or failed document, not a completed one (C6)', async () => {
    const pending = saleOf(
      await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') })),
    );
    expect((await inspector().cancel(pending.id)).sale.status).toBe('cancelled');
    const done = saleOf(await client.post('/v1/sales', saleRequest()));
    await expect(inspector().cancel(done.id)).rejects.toMatchObject({ status: 409, code: 'not_cancellable' });
  });

  it('refuses bad input naming the field', async () => {
    const a = saleOf(await client.post('/v1/sales', saleRequest({ traderInvoiceNumber: invoiceNumber('ASYNC-') })));
    const error = await inspector()
      .settle(a.id, 'maybe' as 'completed')
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(InspectionError);
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_request',
      message: expect.stringContaining('outcome: '),
    });
    await expect(inspector().documents({ type: 'receipt' as 'sale' })).rejects.toMatchObject({
      message: expect.stringContaining('type: '),
    });
    await expect(inspector().requestLog({ since: 'yesterday' as unknown as number })).rejects.toMatchObject({
      message: expect.stringContaining('since: '),
    });
  });
});

describe('stock, items, requests', () => {
  it('shows stock levels and movements', async () => {
    await client.post('/v1/stock/adjustments', {
      itemId: DEMO.items.milk,
      action: 'ADD',
      quantity: 10,
      referenceId: 'GRN-77',
    });
    const levels = await inspector().stockLevels(DEMO.businesses.nairobi);
    expect(levels).toContainEqual({ branchId: DEMO.branches.nairobiCbd, itemId: DEMO.items.milk, quantity: 130 });
    expect(levels.some((l) => l.itemId === DEMO.items.giftVoucher)).toBe(false); // not stock tracked
    expect(
      await inspector().stockMovements({ businessId: DEMO.businesses.nairobi, itemId: DEMO.items.milk }),
    ).toHaveLength(1);
    await expect(inspector().stockLevels('biz_unknown')).rejects.toMatchObject({ status: 404 });
  });

  it('counts API requests per route and status, never its own routes', async () => {
    await client.get('/v1/identity');
    await client.get('/v1/sales/sale_missing');
    await sbx.client(DEMO.keys.otherApplication).get('/v1/identity');
    await inspector().health();
    const summary = await inspector().requests();
    expect(summary.total).toBe(3);
    expect(summary.routes).toContainEqual({
      service: 'compliance',
      method: 'GET',
      route: '/v1/sales/:id',
      count: 1,
      statuses: { '404': 1 },
    });
    const since = Date.now() - 60_000;
    expect(await inspector().requestLog({ since, applicationId: DEMO.applications.other })).toHaveLength(1);
    expect(await inspector().requestLog({ since: Date.now() + 60_000 })).toEqual([]);
  });

  it('is reachable without a key and never rate limited', async () => {
    const res = await fetch(`${sbx.sandbox.complianceUrl}/__sandbox/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('authority rules at run time', () => {
  it('lists, adds, removes and clears rules; fixture rules stay', async () => {
    const fixtureRules = await inspector().authorityRules();
    expect(fixtureRules.map((r) => r.id)).toContain(DEMO.rules.flaky);
    expect(fixtureRules.every((r) => r.source === 'fixture')).toBe(true);

    const added = await inspector().addAuthorityRule({
      match: { documentType: 'sale' },
      outcome: 'async',
      delayMs: 50,
    });
    expect(added).toMatchObject({ source: 'runtime', applied: 0, id: expect.any(String) });
    expect((await inspector().authorityRules())[0]?.id).toBe(added.id);
    expect((await client.post('/v1/sales', saleRequest())).status).toBe(202);
    expect((await inspector().authorityRules())[0]?.applied).toBe(1);

    await inspector().removeAuthorityRule(added.id);
    expect((await client.post('/v1/sales', saleRequest())).status).toBe(201);
    await inspector().addAuthorityRule({ outcome: 'reject' });
    await inspector().clearAuthorityRules();
    expect(await inspector().authorityRules()).toEqual(fixtureRules);
    await expect(inspector().removeAuthorityRule('rule-nope')).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a bad rule naming the field', async () => {
    await expect(
      inspector().addAuthorityRule({ outcome: 'accept', match: { traderInvoiceNumber: '(' } }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('match.traderInvoiceNumber: '),
    });
  });
});

describe('reset', () => {
  it('puts everything back to the fixture', async () => {
    const sale = saleOf(
      await client.post('/v1/sales', saleRequest(), { headers: { 'idempotency-key': 'reset-key-123' } }),
    );
    await client.post(`/v1/items/${DEMO.items.bathSoap}/register`);
    await client.post('/v1/purchases/pull');
    await inspector().addAuthorityRule({ outcome: 'reject' });
    await inspector().addFault({ path: '/v1/businesses', kind: 'error' });

    await inspector().reset();
    expect(await inspector().documents()).toEqual([]);
    expect(errorOf(await client.get(`/v1/sales/${sale.id}`)).code).toBe('not_found');
    expect((await inspector().authorityRules()).every((r) => r.source === 'fixture')).toBe(true);
    expect(await inspector().faults()).toEqual([]);
    const items = (await client.get('/v1/items')).json as {
      data: { items: Array<{ id: string; registrationStatus: string }> };
    };
    expect(items.data.items.find((i) => i.id === DEMO.items.bathSoap)?.registrationStatus).toBe('PENDING');
    // Receipt counters and the idempotency key start over too.
    const again = await client.post('/v1/sales', saleRequest(), { headers: { 'idempotency-key': 'reset-key-123' } });
    expect(again.status).toBe(201);
    expect(saleOf(again).receipt?.receiptNumber).toBe(1);
  });
});

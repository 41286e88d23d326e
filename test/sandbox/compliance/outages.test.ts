/**
 * Outages over real HTTP: a service outage answers every route 503 (or drops the connection) until its end; an
 * authority outage fails, or holds in flight until its end, every sale and credit-note submission while reads,
 * items and stock keep working. Durations are a few hundred ms.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/http/errors.js';
import { eventually } from '../../helpers/eventually.js';
import { DEMO, errorOf, fastFixture, saleOf, saleRequest, useTestSandbox } from './harness.js';
import { startSandbox } from '../../../sandbox/server.js';
import { FixtureError, parseFixture } from '../../../sandbox/fixture.js';

const { sbx, client } = useTestSandbox();
const inspector = () => sbx.sandbox.inspector;
const inspect = (path: string, init?: RequestInit) => fetch(`${sbx.sandbox.complianceUrl}/__sandbox${path}`, init);
const postOutage = (body: unknown) =>
  inspect('/outages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Waits until the outage is over as the service sees it. */
const untilEnded = (id: string) =>
  eventually(
    async () => (await inspector().outages()).find((o) => o.id === id)?.state,
    (state) => state === 'ended',
    { timeoutMs: 3_000, intervalMs: 25, what: `outage ${id} to end` },
  );

describe('service outage', () => {
  it('answers every route 503 service_unavailable with Retry-After until its end, then serves again', async () => {
    const outage = await inspector().addOutage({ kind: 'service', durationMs: 400 });
    expect(outage).toMatchObject({ kind: 'service', service: 'compliance', mode: 'unavailable', active: true });

    const items = await client.get('/v1/items');
    expect(items.status).toBe(503);
    expect(errorOf(items).code).toBe('service_unavailable');
    expect(Number(items.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(items.headers['retry-after'])).toBeLessThanOrEqual(5);
    const sale = await client.post('/v1/sales', saleRequest());
    expect(sale.status).toBe(503);
    expect((await client.get('/v1/no-such-route')).status).toBe(503);
    // Nothing was filed, and the inspection API itself is never down.
    expect(await inspector().documents()).toEqual([]);
    expect((await inspect('/health')).status).toBe(200);

    await untilEnded(outage.id);
    expect((await client.get('/v1/items')).status).toBe(200);

    // Requests answered while down are counted with the status they got.
    const log = await inspector().requestLog({ service: 'compliance' });
    expect(log.filter((r) => r.status === 503).map((r) => r.route)).toEqual(
      expect.arrayContaining(['/v1/items', '/v1/sales']),
    );
    const summary = await inspector().requests();
    expect(summary.routes.find((r) => r.route === '/v1/items')?.statuses).toMatchObject({ '503': 1, '200': 1 });
    expect((await inspector().outages()).find((o) => o.id === outage.id)).toMatchObject({ active: false, affected: 3 });
  });

  it('refuse mode drops every connection without an answer, recorded with status 0', async () => {
    const outage = await inspector().addOutage({ kind: 'service', mode: 'refuse', durationMs: 400 });
    const failure = await client.get('/v1/items').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe('connection_reset');
    expect((await inspector().requestLog()).at(-1)).toMatchObject({ route: '/v1/items', status: 0 });

    await untilEnded(outage.id);
    expect((await client.get('/v1/items')).status).toBe(200);
  });

  it('does not start before startInMs, and a deleted outage is over at once', async () => {
    const outage = await inspector().addOutage({ kind: 'service', startInMs: 300 });
    expect(outage).toMatchObject({ state: 'scheduled', active: false, endsAt: null });
    expect((await client.get('/v1/items')).status).toBe(200);
    await eventually(
      () => client.get('/v1/items'),
      (answer) => answer.status === 503,
      { timeoutMs: 3_000, intervalMs: 25, what: 'the outage to start' },
    );
    await inspector().removeOutage(outage.id);
    expect((await client.get('/v1/items')).status).toBe(200);
    expect(await inspector().outages()).toEqual([]);
  });
});

describe('authority outage', () => {
  it('refuses every sale, credit note and retry as authority_unavailable; reads, items and stock keep working', async () => {
    const signed = saleOf(await client.post('/v1/sales', saleRequest()));
    const outage = await inspector().addOutage({ kind: 'authority' });
    expect(outage).toMatchObject({ kind: 'authority', service: 'compliance', mode: 'reject', endsAt: null });

    const refused = await client.post('/v1/sales', saleRequest());
    expect(refused.status).toBe(422);
    const error = errorOf(refused);
    expect(error.code).toBe('authority_rejected');
    expect(error.errors?.map((e) => e.code)).toEqual(['authority_unavailable']);
    const saleId = error.sale?.id ?? '';
    const document = await inspector().document(saleId);
    expect(document.sale.status).toBe('failed');
    expect(document.causes.map((c) => c.code)).toEqual(['authority_unavailable']);

    const creditNote = await client.post('/v1/credit-notes', {
      traderInvoiceNumber: `${signed.traderInvoiceNumber}-CN`,
      returnDate: '2025-06-02',
      saleId: signed.id,
      reason: '06',
    });
    expect(creditNote.status).toBe(422);
    expect(errorOf(creditNote).errors?.map((e) => e.code)).toEqual(['authority_unavailable']);

    const retried = await client.post(`/v1/sales/${saleId}/retry`);
    expect(retried.status).toBe(422);
    expect(errorOf(retried).errors?.map((e) => e.code)).toEqual(['authority_unavailable']);

    expect((await client.get(`/v1/sales/${signed.id}`)).status).toBe(200);
    expect((await client.get('/v1/items')).status).toBe(200);
    const stock = await client.post('/v1/stock/adjustments', {
      itemId: DEMO.items.sugar,
      action: 'ADD',
      quantity: 1,
      unitPrice: 200,
      referenceId: 'GRN-OUTAGE',
    });
    expect(stock.status).toBe(201);
    expect((await inspector().outages())[0]).toMatchObject({ active: true, affected: 3 });

    // Once the authority is back, the client's resubmission signs the document.
    await inspector().removeOutage(outage.id);
    const resubmitted = await client.post(`/v1/sales/${saleId}/retry`);
    expect(resubmitted.status).toBe(200);
    expect(saleOf(resubmitted).status).toBe('completed');
  });

  it('in_flight mode accepts the document as pending, then fails it with authority_unavailable at the end', async () => {
    const outage = await inspector().addOutage({ kind: 'authority', mode: 'in_flight', durationMs: 400 });
    const accepted = await client.post('/v1/sales', saleRequest());
    expect(accepted.status).toBe(202);
    const sale = saleOf(accepted);
    expect(sale.status).toBe('pending');
    expect((await client.get(`/v1/sales/${sale.id}`)).status).toBe(200);

    const failed = await inspector().waitForDocument(sale.id, (d) => d.sale.status === 'failed', 3_000);
    expect(Date.parse(failed.sale.updatedAt)).toBeGreaterThanOrEqual(Date.parse(outage.endsAt ?? '') - 5);
    expect(failed.causes.map((c) => c.code)).toEqual(['authority_unavailable']);
    expect(failed.history.map((h) => h.status)).toEqual(['pending', 'failed']);

    const resubmitted = await client.post(`/v1/sales/${sale.id}/retry`);
    expect(saleOf(resubmitted).status).toBe('completed');
  });

  it('in_flight without an end holds the document until the outage is deleted', async () => {
    const outage = await inspector().addOutage({ kind: 'authority', mode: 'in_flight', message: 'KRA is down' });
    const sale = saleOf(await client.post('/v1/sales', saleRequest()));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await inspector().document(sale.id)).sale.status).toBe('pending');
    await inspector().removeOutage(outage.id);
    const failed = await inspector().document(sale.id);
    expect(failed.sale).toMatchObject({ status: 'failed', error: 'KRA is down' });
  });
});

describe('managing outages', () => {
  it('refuses a bad outage with 400 invalid_request naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ kind: 'nap' }, /^kind: /],
      [{ kind: 'service', durationMs: -5 }, /^durationMs: /],
      [{ kind: 'service', mode: 'in_flight' }, /^mode: /],
      [{ kind: 'service', startsAt: 'tomorrow' }, /^startsAt: must be an ISO date-time/],
      [{ kind: 'service', startsAt: new Date().toISOString(), startInMs: 10 }, /^startInMs: give startsAt or/],
      [{ kind: 'service', endsAt: '2024-01-01T00:00:00Z' }, /^endsAt: must be after the outage's start/],
      [
        { kind: 'service', startsAt: '2030-01-02T00:00:00Z', endsAt: '2030-01-01T00:00:00Z' },
        /^endsAt: must be after startsAt/,
      ],
      [{ kind: 'authority', service: 'accounting' }, /^service: /],
    ];
    for (const [body, message] of cases) {
      const answer = await postOutage(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      const { error } = (await answer.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('invalid_request');
      expect(error.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await inspector().outages()).toEqual([]);
    expect((await inspect('/outages/nope', { method: 'DELETE' })).status).toBe(404);
  });

  it('a reset clears the outages added at run time', async () => {
    await inspector().addOutage({ kind: 'service' });
    await inspector().addOutage({ kind: 'authority', id: 'kra-down' });
    expect(await inspector().outages()).toHaveLength(2);
    await inspector().reset();
    expect(await inspector().outages()).toEqual([]);
    expect((await client.post('/v1/sales', saleRequest())).status).toBe(201);
  });

  it('DELETE /__sandbox/outages ends every outage', async () => {
    await inspector().addOutage({ kind: 'service' });
    await inspector().clearOutages();
    expect(await inspector().outages()).toEqual([]);
    expect((await client.get('/v1/items')).status).toBe(200);
  });
});

describe('outages in the fixture', () => {
  it('are armed at start, listed as the fixture’s, and armed again by a reset', async () => {
    const sandbox = await startSandbox({
      fixture: {
        compliance: fastFixture(undefined, 'sandbox'),
        outages: [
          { id: 'compliance-down', kind: 'service', durationMs: 300 },
          { id: 'kra-later', kind: 'authority', startInMs: 60_000 },
        ],
      },
    });
    try {
      const headers = { 'x-api-key': DEMO.keys.nairobi };
      const items = () => fetch(`${sandbox.complianceUrl}/v1/items`, { headers });
      expect(await sandbox.inspector.outages()).toMatchObject([
        { id: 'compliance-down', source: 'fixture', active: true },
        { id: 'kra-later', source: 'fixture', state: 'scheduled' },
      ]);
      expect((await items()).status).toBe(503);
      await eventually(
        async () => (await items()).status,
        (status) => status === 200,
        { timeoutMs: 3_000, intervalMs: 25, what: 'the fixture outage to end' },
      );
      await sandbox.inspector.clearOutages();
      await sandbox.inspector.reset();
      expect((await sandbox.inspector.outages()).map((o) => [o.id, o.state])).toEqual([
        ['compliance-down', 'active'],
        ['kra-later', 'scheduled'],
      ]);
      expect((await items()).status).toBe(503);
    } finally {
      await sandbox.close();
    }
  });

  it('a bad fixture outage names its field', () => {
    const parse = () => parseFixture({ outages: [{ kind: 'service', durationMs: 0 }] });
    expect(parse).toThrow(FixtureError);
    expect(parse).toThrow(/outages\[0\]\.durationMs/);
    expect(() =>
      parseFixture({
        outages: [
          { id: 'a', kind: 'service' },
          { id: 'a', kind: 'authority' },
        ],
      }),
    ).toThrow(/outages\[1\]\.id: duplicate id a/);
  });
});

/**
 * Outages of the accounting service: managed on its own /__sandbox/outages (its outages only) or on the compliance
 * port (every outage); while one lasts every accounting route answers 503 in the A1 shape, and the compliance
 * service is not affected.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTING_API_KEY } from '../../../sandbox/accounting/default-fixture.js';
import { DEMO } from '../../../sandbox/default-fixture.js';
import { startSandbox, type Sandbox } from '../../../sandbox/server.js';
import type { InspectedOutage } from '../../../sandbox/shared/outages.js';
import { eventually } from '../../helpers/eventually.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.inspector.reset());

const companies = () =>
  fetch(`${sandbox.accountingUrl}/companies`, { headers: { 'x-api-key': DEMO_ACCOUNTING_API_KEY } });
const identity = () => fetch(`${sandbox.complianceUrl}/v1/identity`, { headers: { 'x-api-key': DEMO.keys.nairobi } });

async function accountingInspection(method: string, path: string, body?: unknown) {
  const res = await fetch(`${sandbox.accountingUrl}/__sandbox${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('accounting outages', () => {
  it('answer every accounting route 503 in the A1 shape until the end; compliance keeps serving', async () => {
    const added = await accountingInspection('POST', '/outages', { kind: 'service', durationMs: 400 });
    expect(added.status).toBe(201);
    const outage = added.json.outage as InspectedOutage;
    expect(outage).toMatchObject({ service: 'accounting', mode: 'unavailable', active: true });

    const down = await companies();
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toMatch(/^[1-5]$/);
    expect(await down.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'The service is temporarily unavailable',
    });
    expect((await identity()).status).toBe(200);
    expect((await accountingInspection('GET', '/sync-batches')).status).toBe(200);
    // Listed on both ports: the compliance port shows every outage.
    expect((await accountingInspection('GET', '/outages')).json.outages).toMatchObject([{ id: outage.id }]);
    expect(await sandbox.inspector.outages()).toMatchObject([{ id: outage.id, service: 'accounting' }]);

    await eventually(
      async () => (await companies()).status,
      (status) => status === 200,
      { timeoutMs: 3_000, intervalMs: 25, what: 'the accounting outage to end' },
    );
    const log = await sandbox.inspector.requestLog({ service: 'accounting' });
    expect(log.map((r) => r.status)).toContain(503);
  });

  it('can be added on the compliance port with service: accounting', async () => {
    await sandbox.inspector.addOutage({ kind: 'service', service: 'accounting', mode: 'refuse' });
    await expect(companies()).rejects.toThrow();
    expect((await identity()).status).toBe(200);
    expect((await accountingInspection('DELETE', '/outages')).json).toEqual({ outages: [] });
    expect((await companies()).status).toBe(200);
  });

  it('refuse on the accounting port what is not its own, and a malformed outage, with 400', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ kind: 'authority' }, /^kind: the accounting service has no tax authority/],
      [{ kind: 'service', service: 'compliance' }, /^service: /],
      [{ kind: 'service', durationMs: 'soon' }, /^durationMs: /],
      [{ kind: 'service', colour: 'red' }, /Unrecognized key/],
    ];
    for (const [body, message] of cases) {
      const answer = await accountingInspection('POST', '/outages', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json).toMatchObject({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.stringMatching(message),
      });
    }
  });

  it("the accounting reset removes the accounting service's outages only", async () => {
    await sandbox.inspector.addOutage({ kind: 'service', service: 'accounting', id: 'acc' });
    await sandbox.inspector.addOutage({ kind: 'authority', id: 'kra' });
    // Another service's outage is not the accounting port's to delete.
    expect((await accountingInspection('DELETE', '/outages/kra')).status).toBe(404);
    expect((await accountingInspection('POST', '/reset', {})).status).toBe(200);
    expect((await sandbox.inspector.outages()).map((o) => o.id)).toEqual(['kra']);
    expect((await companies()).status).toBe(200);
  });
});

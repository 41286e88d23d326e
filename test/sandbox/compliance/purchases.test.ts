import { describe, expect, it } from 'vitest';
import {
  PullResultEnvelopeSchema,
  PurchasePageEnvelopeSchema,
  type Purchase,
} from '../../../src/compliance/schemas.js';
import { DEMO, errorOf, useTestSandbox } from './harness.js';

const { sbx, client } = useTestSandbox();

async function page(query: Record<string, string | number> = {}) {
  const answer = await client.get('/v1/purchases', query);
  expect(answer.status).toBe(200);
  return PurchasePageEnvelopeSchema.parse(answer.json);
}

async function everything(query: Record<string, string | number> = {}): Promise<Purchase[]> {
  const all: Purchase[] = [];
  let cursor: string | null = null;
  do {
    const current = await page({ ...query, ...(cursor ? { cursor } : {}) });
    all.push(...current.data.purchases);
    cursor = current.pagination.nextCursor;
  } while (cursor);
  return all;
}

const newestFirst = (a: Purchase, b: Purchase) =>
  a.invoiceDate === b.invoiceDate ? (a.id < b.id ? 1 : -1) : a.invoiceDate < b.invoiceDate ? 1 : -1;

describe('GET /v1/purchases (C27)', () => {
  it('pages 20 at a time by default, newest first', async () => {
    const first = await page();
    expect(first.pagination.pageSize).toBe(20);
    expect(first.data.purchases).toHaveLength(20);
    expect(first.pagination.nextCursor).toEqual(expect.any(String));
    expect([...first.data.purchases].sort(newestFirst)).toEqual(first.data.purchases);
    expect(first.data.purchases[0]).toMatchObject({
      branch: expect.any(String),
      supplier: { name: expect.any(String), pin: expect.any(String) },
    });
  });

  it('walks every stored invoice exactly once through the cursors, ties broken by id', async () => {
    const all = await everything({ pageSize: 7 });
    expect(all).toHaveLength(45);
    expect(new Set(all.map((p) => p.id)).size).toBe(45);
    expect([...all].sort(newestFirst)).toEqual(all);
    expect(all.some((p, i) => i > 0 && all[i - 1]?.invoiceDate === p.invoiceDate)).toBe(true);
  });

  it('filters by status and date range', async () => {
    const confirmed = await everything({ status: 'confirmed', pageSize: 100 });
    expect(confirmed.length).toBeGreaterThan(0);
    expect(confirmed.every((p) => p.status === 'confirmed')).toBe(true);
    const rejected = await everything({ status: 'rejected' });
    expect(rejected.every((p) => p.confirmationError !== null)).toBe(true);
    const window = await everything({ fromDate: '2025-06-01', toDate: '2025-06-20' });
    expect(window.length).toBeGreaterThan(0);
    expect(window.every((p) => p.invoiceDate >= '2025-06-01' && p.invoiceDate <= '2025-06-20')).toBe(true);
  });

  it('keeps totals consistent with the lines', async () => {
    for (const p of (await page({ pageSize: 100 })).data.purchases) {
      const total = p.lines.reduce((sum, l) => sum + Math.round(l.total * 100), 0) / 100;
      const vat = p.lines.reduce((sum, l) => sum + Math.round(l.taxAmount * 100), 0) / 100;
      expect(p.totals).toEqual({ total, vat, subtotal: Math.round((total - vat) * 100) / 100 });
    }
  });

  it.each([
    ['pageSize', { pageSize: 0 }],
    ['pageSize', { pageSize: 101 }],
    ['pageSize', { pageSize: 'ten' }],
    ['pageSize', { pageSize: 2.5 }],
    ['status', { status: 'open' }],
    ['fromDate', { fromDate: '2025-13-01' }],
    ['toDate', { fromDate: '2025-06-02', toDate: '2025-06-01' }],
    ['cursor', { cursor: 'not a cursor!' }],
    ['cursor', { cursor: Buffer.from('{"x":1}').toString('base64url') }],
  ])('refuses a bad %s with 400 naming it (never clamped)', async (field, query) => {
    const answer = await client.get('/v1/purchases', query);
    expect(answer.status).toBe(400);
    expect(errorOf(answer).message.startsWith(`${field}: `)).toBe(true);
  });

  it("shows only the key's business", async () => {
    const mombasa = PurchasePageEnvelopeSchema.parse((await sbx.client(DEMO.keys.mombasa).get('/v1/purchases')).json);
    expect(mombasa.data.purchases.map((p) => p.id).every((id) => id.startsWith('pur_msa_'))).toBe(true);
  });
});

describe('POST /v1/purchases/pull (C26)', () => {
  it('fetches the invoices the authority held back, once', async () => {
    const pulled = PullResultEnvelopeSchema.parse((await client.post('/v1/purchases/pull')).json).data;
    // Three held-back demo invoices and the stock-in supplier's two.
    expect(pulled).toEqual({ pulled: 5, total: 50 });
    const first = await page();
    expect(first.data.purchases.slice(0, 3).map((p) => p.id)).toEqual(['pur_nbo_048', 'pur_nbo_047', 'pur_nbo_046']);
    // The demo world holds one more back until the second pull: an invoice dated two months ago.
    expect(PullResultEnvelopeSchema.parse((await client.post('/v1/purchases/pull')).json).data).toEqual({
      pulled: 1,
      total: 51,
    });
    expect(PullResultEnvelopeSchema.parse((await client.post('/v1/purchases/pull')).json).data).toEqual({
      pulled: 0,
      total: 51,
    });
  });

  it('needs purchases:read', async () => {
    expect((await sbx.client(DEMO.keys.readOnly).post('/v1/purchases/pull')).status).toBe(403);
  });
});

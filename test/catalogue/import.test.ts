/**
 * A catalogue imported end to end: real workers on the shared dev server, the sandbox over HTTP. Two chunks, items
 * that need fixing, one the service already has and one it holds otherwise, a creation whose answer is lost; then
 * the same file again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  catalogueImportProgress,
  catalogueImportReport,
  retryCatalogueImport,
  startCatalogueImport,
  waitForCatalogueImport,
} from '../../src/client/catalogue.js';
import {
  catalogueChunkWorkflowId,
  catalogueImportWorkflowId,
  type CatalogueRow,
} from '../../src/contracts/catalogue-import.js';
import { closeTestEnv } from '../helpers/temporal.js';
import { expectRefusedAs } from '../helpers/updates.js';
import { DEMO, fastFixture, startSaleHarness, type SaleHarness } from '../workflows/harness.js';

let h: SaleHarness;
const nairobi = DEMO.businesses.nairobi;

beforeAll(async () => {
  // The import's pace is the budget's: a minute's worth of 6,000 keeps the test short.
  const fixture = fastFixture((f) => {
    f.applications = f.applications?.map((a) =>
      a.id === DEMO.applications.retail ? { ...a, requestsPerMinute: 6_000 } : a,
    );
  });
  h = await startSaleHarness({ fixture });
});
afterAll(async () => {
  await h?.close();
  await closeTestEnv();
});

function rowsOf(run: string): Array<{ line: number; row: CatalogueRow }> {
  const rows: CatalogueRow[] = [];
  for (let i = 0; i < 260; i++) {
    rows.push({
      externalId: `IMP-${run}-${i}`,
      name: `Item ${i}`,
      taxTypeCode: 'B',
      unitPrice: 10 + i,
      classificationCode: '5016150100',
      // Every tenth lacks a product type; the rule below takes the classification mapping from every 13th.
      ...(i % 10 === 0 ? {} : { productTypeCode: '2' }),
      ...(i % 13 === 0 && i % 10 !== 0 ? { externalId: `IMP-${run}-NOMAP-${i}` } : {}),
    });
  }
  // The service has this one already, as given; and this one with another price.
  rows.push({ externalId: 'SKU-SUGAR-2KG', name: 'Sugar 2kg', taxTypeCode: 'B', unitPrice: 250 });
  rows.push({ externalId: 'SKU-MILK-500', name: 'Fresh milk 500ml', taxTypeCode: 'A', unitPrice: 70 });
  return rows.map((row, index) => ({ line: index + 2, row }));
}

describe('a catalogue import', () => {
  it('creates and registers every item once, reports each line as the service holds it, and imports a file once', async () => {
    const run = randomUUID().slice(0, 8);
    const rows = rowsOf(run);
    await h.sandbox.inspector.addItemNeedsRule({ externalId: `^IMP-${run}-NOMAP-`, classificationMapping: true });
    // One creation's answer lost after the service took it: the item list settles it.
    await h.sandbox.inspector.addFault({
      service: 'compliance',
      method: 'POST',
      path: '/v1/items',
      kind: 'commit-then-fail',
      status: 503,
      failWith: 'reset',
      times: 1,
    });
    const since = Date.now();
    const started = await startCatalogueImport(h.client, nairobi, rows, h.taskQueue);
    expect(started).toMatchObject({ chunksSent: 2, chunks: 2 });
    // Its report is asked for too early: said, not waited for.
    await expect(catalogueImportReport(h.client, nairobi, started.importId)).rejects.toThrow(/has not ended/);
    const seen: number[] = [];
    const final = await waitForCatalogueImport(h.client, nairobi, started.importId, (p) => seen.push(p.done), 200);
    expect(final).toMatchObject({ state: 'done', items: 262, done: 262, chunksReceived: 2 });
    expect(seen.length).toBeGreaterThan(0);

    const report = await catalogueImportReport(h.client, nairobi, started.importId);
    expect(report.map((r) => r.line)).toEqual(rows.map((r) => r.line));
    const byId = new Map(report.map((r) => [r.externalId, r]));
    expect(byId.get('SKU-SUGAR-2KG')).toMatchObject({ outcome: 'already_registered', itemId: DEMO.items.sugar });
    expect(byId.get('SKU-MILK-500')).toMatchObject({ outcome: 'conflict', itemId: DEMO.items.milk });
    expect(byId.get('SKU-MILK-500')!.reason).toContain('unitPrice');
    expect(byId.get(`IMP-${run}-0`)).toMatchObject({ outcome: 'needs_product_type' });
    expect(byId.get(`IMP-${run}-NOMAP-13`)).toMatchObject({ outcome: 'needs_classification' });
    expect(byId.get(`IMP-${run}-1`)).toMatchObject({ outcome: 'registered' });

    // Every report row as the sandbox holds the item, and nothing created or registered twice.
    const records = new Map((await h.sandbox.inspector.itemRecords(nairobi)).map((r) => [r.externalId, r]));
    for (const row of report) {
      const record = records.get(row.externalId)!;
      expect(record.id).toBe(row.itemId);
      expect(record.creations).toBeLessThanOrEqual(1);
      expect(record.registrations).toBeLessThanOrEqual(1);
      const registered = row.outcome === 'registered' || row.outcome === 'already_registered';
      expect(record.registrationStatus === 'REGISTERED').toBe(registered || row.outcome === 'conflict');
    }
    expect(Object.values(final.outcomes).reduce((a, b) => a + b, 0)).toBe(262);
    expect(final.outcomes.needs_product_type).toBe(26);
    expect(final.outcomes.conflict).toBe(1);
    // The lost answer was settled from the item list, not by creating blindly.
    const lists = (await h.sandbox.inspector.requestLog({ since, service: 'compliance' })).filter(
      (r) => r.method === 'GET' && r.path === '/v1/items',
    );
    expect(lists.length).toBeGreaterThanOrEqual(1);
    // Creations hand their items to registration themselves: only a row settled from the item list asks on its own.
    const importId = catalogueImportWorkflowId(nairobi, started.importId);
    const asked = await Promise.all(
      [0, 1].map(async (index) => {
        const { events } = await h.client.workflow.getHandle(catalogueChunkWorkflowId(importId, index)).fetchHistory();
        const named = (name: string) =>
          (events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name).length;
        return { creations: named('createCatalogueItem'), requests: named('requestItemRegistration') };
      }),
    );
    expect(asked.reduce((sum, a) => sum + a.creations, 0)).toBeGreaterThanOrEqual(262);
    expect(asked.reduce((sum, a) => sum + a.requests, 0)).toBeLessThanOrEqual(1);

    // Fixed in the dashboard, an item that needed a product type registers when the import is retried.
    const fixedId = byId.get(`IMP-${run}-10`)!.itemId!;
    await h.sandbox.inspector.fixItem(fixedId);
    const retried = await retryCatalogueImport(h.client, nairobi, started.importId, 20_000);
    expect(retried).toHaveLength(final.outcomes.needs_product_type + final.outcomes.needs_classification);
    expect(retried.find((r) => r.itemId === fixedId)).toMatchObject({ outcome: 'registered' });
    expect(retried.filter((r) => r.outcome === 'registered')).toHaveLength(1);
    expect((await h.sandbox.inspector.itemRecords(nairobi)).find((r) => r.id === fixedId)).toMatchObject({
      registrationStatus: 'REGISTERED',
      registrations: 1,
    });

    // The same file again: the same import, nothing sent.
    const before = (await h.sandbox.inspector.requestLog({ service: 'compliance' })).length;
    const again = await startCatalogueImport(h.client, nairobi, rows, h.taskQueue);
    expect(again).toMatchObject({ importId: started.importId, chunksSent: 0 });
    expect((await h.sandbox.inspector.requestLog({ service: 'compliance' })).length).toBe(before);
    expect((await catalogueImportProgress(h.client, nairobi, started.importId)).state).toBe('done');
  }, 180_000);

  it('refuses a plain-JSON start and chunk it cannot use, naming the field', async () => {
    const bad = await h.client.workflow.start('catalogueImportWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `catalogue-import:${nairobi}:bad-${randomUUID().slice(0, 8)}`,
      args: [{ businessId: nairobi, importId: 'bad', items: 1, chunks: 0 }],
    });
    await expect(bad.result()).rejects.toMatchObject({
      cause: { type: 'invalid_input', message: 'invalid catalogue import input: chunks must be 1 or more' },
    });

    const importId = `plain-${randomUUID().slice(0, 8)}`;
    const handle = await h.client.workflow.start('catalogueImportWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `catalogue-import:${nairobi}:${importId}`,
      args: [{ businessId: nairobi, importId, items: 1, chunks: 1 }],
    });
    const row = { externalId: `PLAIN-${importId}`, name: 'Tea', taxTypeCode: 'B', unitPrice: -1 };
    await expectRefusedAs(
      handle.executeUpdate('addChunk', { args: [{ index: 0, rows: [{ line: 2, row }] }] }),
      'invalid_input',
      /rows\[0\]\.row\.unitPrice must be 0 or more/,
    );
    await expectRefusedAs(
      handle.executeUpdate('addChunk', { args: [{ index: 1, rows: [{ line: 2, row: { ...row, unitPrice: 1 } }] }] }),
      'invalid_input',
      /past the import's 1 chunks/,
    );
    await handle.terminate('test done');
  });
});

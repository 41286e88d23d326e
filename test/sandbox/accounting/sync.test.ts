import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccountingClient } from '../../../src/accounting/client.js';
import { ApiError } from '../../../src/http/errors.js';
import { DEMO_ACCOUNTING_API_KEY, DEMO_ACCOUNTING_CLIENT_SECRET } from '../../../sandbox/accounting/default-fixture.js';
import type { FixtureBillPayment } from '../../../sandbox/accounting/fixture.js';
import type { SyncBatchRecord } from '../../../sandbox/accounting/state.js';
import { eventually } from '../../helpers/eventually.js';
import { inspect, startAccountingSandbox, type RunningAccountingSandbox } from './start-accounting.js';

let sandbox: RunningAccountingSandbox;
let client: AccountingClient;

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  client = new AccountingClient({
    baseUrl: sandbox.url,
    apiKey: DEMO_ACCOUNTING_API_KEY,
    clientSecret: DEMO_ACCOUNTING_CLIENT_SECRET,
  });
});
beforeEach(async () => {
  const res = await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

async function batch(id: string): Promise<SyncBatchRecord> {
  const { data } = await inspect<{ data: SyncBatchRecord[] }>(sandbox, '/sync-batches');
  const found = data.find((b) => b.id === id);
  if (!found) throw new Error(`no batch ${id}`);
  return found;
}

async function paymentStatuses(ids: readonly string[]): Promise<string[]> {
  const { data } = await inspect<{ data: FixtureBillPayment[] }>(sandbox, '/bill-payments');
  return ids.map((id) => data.find((b) => b.id === id)?.status ?? 'missing');
}

function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  return eventually(read, done, { timeoutMs: 5_000, intervalMs: 25 });
}

describe('POST /sync/batches/{id}/process (A10)', () => {
  it('processes a pending batch: payments pending → syncing → synced, batch → completed', async () => {
    const before = await batch('sb_nbo_pending');
    expect(before.status).toBe('pending');
    expect(await paymentStatuses(before.billPaymentIds)).toEqual(before.billPaymentIds.map(() => 'pending'));

    const { data, meta } = await client.processSyncBatch('sb_nbo_pending');
    expect(meta.status).toBe(200);
    expect(data.message).toMatch(/started/);
    expect((await batch('sb_nbo_pending')).status).toBe('processing');
    expect(await paymentStatuses(before.billPaymentIds)).toEqual(before.billPaymentIds.map(() => 'syncing'));

    const after = await pollUntil(
      () => batch('sb_nbo_pending'),
      (b) => b.status !== 'processing',
    );
    expect(after.status).toBe('completed');
    expect(after.finishedAt).toBeDefined();
    expect(await paymentStatuses(before.billPaymentIds)).toEqual(before.billPaymentIds.map(() => 'synced'));

    // The listing shows the new status too.
    const listed = await client.listBillPayments({ status: 'synced', limit: 100 });
    expect(listed.data.data.map((b) => b.id)).toEqual(expect.arrayContaining(before.billPaymentIds));
  });

  it('ends a batch whose fixture outcome is failed as failed, with failed payments', async () => {
    const before = await batch('sb_mba_pending');
    await client.processSyncBatch('sb_mba_pending');
    const after = await pollUntil(
      () => batch('sb_mba_pending'),
      (b) => b.status !== 'processing',
    );
    expect(after.status).toBe('failed');
    expect(await paymentStatuses(before.billPaymentIds)).toEqual(before.billPaymentIds.map(() => 'failed'));
  });

  it('is safe to repeat: a processing or processed batch answers 200 and stays as it is', async () => {
    await client.processSyncBatch('sb_nbo_pending');
    const again = await client.processSyncBatch('sb_nbo_pending');
    expect(again.data.message).toMatch(/already processing/);
    const done = await pollUntil(
      () => batch('sb_nbo_pending'),
      (b) => b.status === 'completed',
    );
    const third = await client.processSyncBatch('sb_nbo_pending');
    expect(third.data.message).toMatch(/already processed \(completed\)/);
    expect(await batch('sb_nbo_pending')).toEqual(done);
  });

  it('answers 404 for an unknown batch and 403 for another application’s batch', async () => {
    const unknown = await client.processSyncBatch('sb_nope').catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(ApiError);
    expect(unknown).toMatchObject({
      status: 404,
      code: 'not_found',
      retry: 'final',
      message: 'Sync batch sb_nope not found',
    });
    const other = await client.processSyncBatch('sb_other_pending').catch((err: unknown) => err);
    expect(other).toMatchObject({ status: 403, code: 'forbidden' });
    expect((await batch('sb_other_pending')).status).toBe('pending');
  });

  it('encodes the batch id into the path', async () => {
    const error = await client.processSyncBatch('a/b?c').catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 404, message: 'Sync batch a/b?c not found' });
  });

  it('reset restores the fixture and cancels processing in flight', async () => {
    await client.processSyncBatch('sb_nbo_pending');
    await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await batch('sb_nbo_pending')).status).toBe('pending');
  });
});

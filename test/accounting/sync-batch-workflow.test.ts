import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAccountingFixture } from '../../sandbox/accounting/default-fixture.js';
import type { AccountingFixtureInput } from '../../sandbox/accounting/fixture.js';
import { NeedsAttention } from '../../src/contracts/search-attributes.js';
import {
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWorkflowId,
  type SyncBatchOptions,
  type SyncBatchState,
} from '../../src/contracts/sync-batch.js';
import { eventually } from '../helpers/eventually.js';
import { closeTestEnv } from '../helpers/temporal.js';
import { runCli } from '../helpers/run-cli.js';
import { expectUpdateRefused } from '../helpers/updates.js';
import { startSyncBatchStack, startWorkerPair, type SyncBatchStack } from './sync-batch-stack.js';

/** Every id is fresh per run: the Temporal server may be shared, and workflow ids are `sync-batch:<id>`. */
const run = randomUUID().slice(0, 8);
const COMPANY = 'cmp_demo_nairobi';
const template = defaultAccountingFixture.billPayments.find((b) => b.companyId === COMPANY)!;

function payments(label: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    ...template,
    id: `bp_${label}_${i}_${run}`,
    status: 'pending' as const,
  }));
}

const batches = {
  ok: { id: `sb_ok_${run}`, payments: payments('ok', 3) },
  twice: { id: `sb_twice_${run}`, payments: payments('twice', 1) },
  fail: { id: `sb_fail_${run}`, payments: payments('fail', 2) },
  wake: { id: `sb_wake_${run}`, payments: payments('wake', 2) },
  limited: { id: `sb_limited_${run}`, payments: payments('limited', 1) },
  long: { id: `sb_long_${run}`, payments: payments('long', 2) },
  ids: { id: `sb_ids_${run}`, payments: payments('ids', 2) },
  stuck: { id: `sb_stuck_${run}`, payments: payments('stuck', 1) },
  cli: { id: `sb_cli_${run}`, payments: payments('cli', 1) },
};
/** Pending, in no batch: never processed, so a workflow following it never settles. */
const neverProcessed = payments('never', 1)[0]!;
const FAILURE_REASON = 'Supplier is not mapped to a vendor in the accounting system';

const fixture: AccountingFixtureInput = {
  ...defaultAccountingFixture,
  // Long enough that a workflow's first poll sees the payments syncing.
  processingDelayMs: 1_500,
  webhooks: { retryScheduleMs: [0, 500, 1_000], timeoutMs: 2_000, outOfOrderHoldMs: 500 },
  billPayments: [
    ...defaultAccountingFixture.billPayments,
    ...Object.values(batches).flatMap((b) => b.payments),
    neverProcessed,
  ],
  syncBatches: Object.values(batches).map((b) => ({
    id: b.id,
    companyId: COMPANY,
    billPaymentIds: b.payments.map((p) => p.id),
    ...(b === batches.fail ? { failures: [{ billPaymentId: b.payments[1]!.id, reason: FAILURE_REASON }] } : {}),
    // Long enough for several runs of two polls each even when a loaded server takes seconds per poll.
    ...(b === batches.long ? { processingDelayMs: 8_000 } : {}),
  })),
};

/** Test pace: first poll 200 ms after the previous, polls at most 50 ms apart when webhooks wake it. */
const FAST: SyncBatchOptions = { pollInterval: '200 ms', minPollGap: '50 ms' };

let stack: SyncBatchStack;

beforeAll(async () => {
  stack = await startSyncBatchStack(fixture);
});
afterAll(async () => {
  await stack?.close();
  await closeTestEnv();
});

async function processRequests(syncBatchId: string) {
  const log = await stack.sandbox.inspector.requestLog({ service: 'accounting' });
  return log.filter((r) => r.method === 'POST' && r.path === `/sync/batches/${syncBatchId}/process`);
}

async function waitForState(
  syncBatchId: string,
  done: (s: SyncBatchState) => boolean,
  timeoutMs = 15_000,
): Promise<SyncBatchState> {
  return eventually(() => stack.syncBatches.getState(syncBatchId), done, {
    timeoutMs,
    what: `state of ${syncBatchId}`,
  });
}

async function currentDetails(syncBatchId: string): Promise<string> {
  const metadata = await stack.syncBatches
    .handle(syncBatchId)
    .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

async function needsAttention(syncBatchId: string): Promise<boolean | undefined> {
  return (await stack.syncBatches.handle(syncBatchId).describe()).typedSearchAttributes.get(NeedsAttention);
}

describe('syncBatchWorkflow', () => {
  it('processes a batch and follows its bill payments until all are synced (polling alone)', async () => {
    const { id } = batches.ok;
    const started = await stack.syncBatches.process({ syncBatchId: id, companyId: COMPANY, options: FAST });
    expect(started).toMatchObject({ workflowId: syncBatchWorkflowId(id), started: true });
    const summary = await stack.syncBatches.result(id);
    expect(summary).toMatchObject({
      syncBatchId: id,
      companyId: COMPANY,
      outcome: 'synced',
      synced: 3,
      failed: [],
      missing: [],
      processCalls: 1,
      webhooks: 0,
      runs: 1,
    });
    expect(summary.polls).toBeGreaterThanOrEqual(2);
    expect(await processRequests(id)).toHaveLength(1);
    const lists = (await stack.sandbox.inspector.requestLog({ service: 'accounting' })).filter(
      (r) => r.route === '/bill-payments',
    );
    expect(lists.length).toBeGreaterThanOrEqual(summary.polls);
    expect(await needsAttention(id)).toBe(false);
    expect(await currentDetails(id)).toContain('completed');
  });

  it('is one execution per batch: a second start finds the first, running or completed', async () => {
    const { id } = batches.twice;
    const input = { syncBatchId: id, options: FAST };
    const [a, b] = await Promise.all([stack.syncBatches.process(input), stack.syncBatches.process(input)]);
    expect(a.runId).toBe(b.runId);
    expect([a.started, b.started].sort()).toEqual([false, true]);
    await stack.syncBatches.result(id);
    const again = await stack.syncBatches.process(input);
    expect(again).toMatchObject({ runId: a.runId, started: false });
    expect(await processRequests(id)).toHaveLength(1);
  });

  it('parks a failed bill payment with NeedsAttention and its reason; reprocess resumes and completes', async () => {
    const {
      id,
      payments: [, failing],
    } = batches.fail;
    await stack.syncBatches.process({ syncBatchId: id, options: FAST });
    const parked = await waitForState(id, (s) => s.step === 'parked');
    expect(parked.failed).toEqual([{ id: failing!.id, reason: FAILURE_REASON, updatedAt: expect.any(String) }]);
    expect(parked.synced).toBe(1);
    expect(parked.parked).toMatchObject({ code: 'bill_payments_failed', actions: ['reprocess', 'dismiss'] });
    expect(await needsAttention(id)).toBe(true);
    const details = await currentDetails(id);
    expect(details).toContain(failing!.id);
    expect(details).toContain(FAILURE_REASON);
    expect(details).toContain('`reprocess`');
    await expectUpdateRefused(
      stack.syncBatches.handle(id).executeUpdate(dismissSyncBatchUpdate, { args: [{ reason: ' ' }] }),
      /needs a reason/,
    );

    const resumed = await stack.syncBatches.reprocess(id);
    expect(resumed).toMatchObject({ step: 'following', processCalls: 2, parked: null, failed: [] });
    expect(resumed.processMessage).toMatch(/started again/);
    expect(await needsAttention(id)).toBe(false);
    // Nothing is failed any more: a second reprocess is refused by the validator.
    await expectUpdateRefused(
      stack.syncBatches.handle(id).executeUpdate(reprocessSyncBatchUpdate),
      /parked with failed bill payments/,
    );

    const summary = await stack.syncBatches.result(id);
    expect(summary).toMatchObject({ outcome: 'synced', synced: 2, failed: [], processCalls: 2 });
    expect(await processRequests(id)).toHaveLength(2);
    expect(await needsAttention(id)).toBe(false);
  });

  it('refuses reprocess and dismiss while nothing has failed', async () => {
    const { id } = batches.stuck;
    // Follows a payment no processing touches: the batch never settles.
    await stack.syncBatches.process({ syncBatchId: id, billPaymentIds: [neverProcessed.id], options: FAST });
    const following = await waitForState(id, (s) => s.step === 'following' && s.lastPoll !== null);
    expect(following.lastPoll).toMatchObject({ pending: 1, syncing: 0 });
    const handle = stack.syncBatches.handle(id);
    await expectUpdateRefused(
      handle.executeUpdate(reprocessSyncBatchUpdate),
      /reprocess is possible only while the sync batch is parked with failed bill payments/,
    );
    await expectUpdateRefused(
      handle.executeUpdate(dismissSyncBatchUpdate, { args: [{ reason: 'not needed' }] }),
      /dismiss is possible only/,
    );
    expect((await handle.query(getSyncBatchStateQuery)).processCalls).toBe(1);
    await handle.terminate('test done');
  });

  it('is woken by a webhook long before its poll interval', async () => {
    const { id } = batches.wake;
    await stack.webhooks(true);
    try {
      await stack.syncBatches.process({
        syncBatchId: id,
        options: { pollInterval: '1 hour', maxPollInterval: '2 hours', minPollGap: '50 ms' },
      });
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('not woken: the workflow waited for its hour-long poll timer')), 20_000),
      );
      const summary = await Promise.race([stack.syncBatches.result(id), timeout]);
      expect(summary).toMatchObject({ outcome: 'synced', synced: 2, processCalls: 1 });
      expect(summary.webhooks).toBeGreaterThanOrEqual(1);
      const attempts = (await (
        await fetch(`${stack.sandbox.accountingUrl}/__sandbox/webhooks?syncBatchId=${id}`)
      ).json()) as { attempts: Array<{ responseStatus: number }> };
      expect(attempts.attempts.length).toBeGreaterThanOrEqual(4);
      expect(attempts.attempts.every((a) => a.responseStatus === 202 || a.responseStatus === 200)).toBe(true);
    } finally {
      await stack.webhooks(false);
    }
  });

  it('honours Retry-After on a 429 from the accounting service', async () => {
    const { id } = batches.limited;
    const path = `/sync/batches/${id}/process`;
    await stack.sandbox.inspector.addFault({
      service: 'accounting',
      method: 'POST',
      path,
      kind: 'rate-limit',
      retryAfterSeconds: 3,
      times: 1,
    });
    await stack.syncBatches.process({ syncBatchId: id, options: FAST });
    const summary = await stack.syncBatches.result(id);
    expect(summary).toMatchObject({ outcome: 'synced', processCalls: 1 });
    const requests = await processRequests(id);
    expect(requests.map((r) => r.status)).toEqual([429, 200]);
    // The retry policy alone would come back after 1 s; Retry-After said 3.
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(3_000);
  });

  it('continues as new to keep its history short, carrying its state', async () => {
    const { id } = batches.long;
    await stack.syncBatches.process({
      syncBatchId: id,
      options: { pollInterval: '500 ms', maxPollInterval: '500 ms', minPollGap: '50 ms', pollsPerRun: 2 },
    });
    const summary = await stack.syncBatches.result(id);
    expect(summary).toMatchObject({ outcome: 'synced', synced: 2, processCalls: 1 });
    expect(summary.runs).toBeGreaterThanOrEqual(2);
    expect(summary.polls).toBeGreaterThanOrEqual(3);
    const info = (await stack.syncBatches.handle(id).describe()).raw.workflowExecutionInfo;
    expect(info?.firstRunId).toBeTruthy();
    expect(info?.execution?.runId).not.toBe(info?.firstRunId);
    expect(await processRequests(id)).toHaveLength(1);
  });

  it('follows the bill payments named by billPaymentIds, and reports those it never finds', async () => {
    const { id, payments: named } = batches.ids;
    const missing = `bp_missing_${run}`;
    await stack.syncBatches.process({
      syncBatchId: id,
      billPaymentIds: [...named.map((p) => p.id), missing],
      options: FAST,
    });
    const summary = await stack.syncBatches.result(id);
    expect(summary).toMatchObject({ outcome: 'synced', synced: 2, missing: [missing] });
  });

  it('fails clearly, without retrying, for a batch the service does not know', async () => {
    const id = `sb_unknown_${run}`;
    await stack.syncBatches.process({ syncBatchId: id });
    const error = await stack.syncBatches.result(id).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const activity = (error as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    const cause = (activity as ActivityFailure).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: 'not_found', nonRetryable: true });
    expect(cause.message).toMatch(/check the sync batch id.*Sync batch .* not found/);
    expect(await processRequests(id)).toHaveLength(1);
  });

  it('refuses a bad plain-JSON start before calling the service', async () => {
    const handle = await stack.client.workflow.start('syncBatchWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `sync-batch:bad-input-${run}`,
      args: [{ syncBatchId: `sb_bad_${run}`, options: { pollInterval: 'soon' } }],
    });
    const error = await handle.result().catch((err: unknown) => err);
    expect((error as WorkflowFailedError).cause).toMatchObject({
      type: 'invalid_input',
      message: expect.stringMatching(/options.pollInterval/),
    });
  });
});

describe('accounting request signing', () => {
  it('signs every request when a client secret is configured: a wrong secret is refused (401), not retried', async () => {
    const pair = await startWorkerPair(stack.sandbox.accountingUrl, {
      clientSecret: 'cs_well_formed_but_wrong_000000001',
    });
    try {
      const id = `sb_signed_${run}`;
      await pair.syncBatches.process({ syncBatchId: id });
      const error = await pair.syncBatches.result(id).catch((err: unknown) => err);
      const cause = ((error as WorkflowFailedError).cause as ActivityFailure).cause as ApplicationFailure;
      expect(cause).toMatchObject({ type: 'unauthorized', nonRetryable: true });
      expect(cause.message).toMatch(/ACCOUNTING_CLIENT_SECRET.*Invalid signature/);
      expect(await processRequests(id)).toEqual([expect.objectContaining({ status: 401 })]);
    } finally {
      await pair.close();
    }
  });
});

describe('src/cli/sync-batch.ts', () => {
  const cli = (args: string[]) => runCli('sync-batch', args);

  it('process --wait starts the workflow and prints its summary; a second process finds it', async () => {
    const { id } = batches.cli;
    const result = await cli(['process', id, '--wait', '--company', COMPANY, '--task-queue', stack.taskQueue]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as {
      workflowId: string;
      started: boolean;
      summary: { outcome: string; synced: number };
    };
    expect(printed).toMatchObject({
      workflowId: syncBatchWorkflowId(id),
      started: true,
      summary: { outcome: 'synced', synced: 1 },
    });
    const again = await cli(['process', id, '--task-queue', stack.taskQueue]);
    expect(JSON.parse(again.stdout)).toMatchObject({ workflowId: syncBatchWorkflowId(id), started: false });
    expect(await processRequests(id)).toHaveLength(1);
  });

  it('exits 2 on bad input before contacting Temporal', async () => {
    const result = await cli(['process', ' ']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/syncBatchId must not be empty/);
  });

  it('refuses a blank batch id for every verb that acts on a batch, exit 2, before contacting Temporal', async () => {
    for (const args of [
      ['state', ''],
      ['reprocess', ' '],
      ['dismiss', '', 'duplicate batch'],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain('invalid sync batch reference: syncBatchId must not be empty');
    }
  });
});

/**
 * The sync-batch workflow's logic against stub activities on the time-skipping test server: polling with
 * back-off until every bill payment settles, webhooks that cut a wait short, parking on failures and the
 * operator's updates, attention after hours unsettled, and continue-as-new. Waits of seconds to hours pass in
 * milliseconds. What only the sandbox (its webhooks, 429s, signing) and the CLI show stays in
 * test/accounting/sync-batch-workflow.test.ts.
 */
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { BillPaymentSyncRecord, ListBillPaymentsPageInput } from '../../activities/accounting.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import { NeedsAttention } from '../../src/contracts/search-attributes.js';
import {
  SYNC_BATCH_FAILURES,
  SYNC_BATCH_WORKFLOW_TYPE,
  dismissSyncBatchUpdate,
  getSyncBatchStateQuery,
  reprocessSyncBatchUpdate,
  syncBatchWebhookSignal,
  syncBatchWorkflowId,
  type SyncBatchInput,
  type SyncBatchState,
} from '../../src/contracts/sync-batch.js';
import { accountingTaskQueue } from '../../src/contracts/task-queues.js';
import type { syncBatchWorkflow } from '../../workflows/sync-batch.js';
import { expectUpdateRefused } from '../helpers/updates.js';
import { HOUR, MINUTE, SECOND, useProcessHarness, type ProcessScenario, type Stubs } from './process-logic-harness.js';

const h = useProcessHarness();

type Status = 'pending' | 'syncing' | 'synced' | 'failed';
type BatchHandle = WorkflowHandle<typeof syncBatchWorkflow>;
const REASON = 'Supplier is not mapped to a vendor in the accounting system';

/**
 * The accounting service as far as the workflow sees it: bill payments whose status the test sets, the list
 * endpoint's filters, sorting and paging, and process. Every poll starts with the first page of the syncing ones, so
 * `onPoll` is called at the start of each (numbered from 1), before the page is read.
 */
function accountingService(count: number, status: Status = 'syncing') {
  const payments: BillPaymentSyncRecord[] = Array.from({ length: count }, (_, i) => ({
    id: `bp_${i + 1}`,
    status,
    syncBatchId: null,
    syncError: null,
    updatedAt: `2026-11-21T10:00:0${i}Z`,
  }));
  const service = {
    payments,
    polls: 0,
    onPoll: (_poll: number): void => {},
    onProcess: (_call: number): void => {},
    processCalls: 0,
    /** A service that does not filter by batch (nor tag its payments). */
    ignoresBatchFilter: false,
    /** The payments are the batch's, as the service tags them (A18). */
    tag(syncBatchId: string): void {
      for (const p of payments) p.syncBatchId = syncBatchId;
    },
    set(statusOf: Record<string, Status>): void {
      for (const p of payments) {
        const next = statusOf[p.id];
        if (next === undefined) continue;
        p.status = next;
        p.syncError = next === 'failed' ? REASON : null;
      }
    },
    all(next: Status): void {
      service.set(Object.fromEntries(payments.map((p) => [p.id, next])));
    },
    stubs(): Stubs {
      return {
        processSyncBatch: async () => {
          service.processCalls++;
          service.onProcess(service.processCalls);
          return {
            message:
              service.processCalls === 1 ? 'Sync batch processing started' : 'Sync batch processing started again',
            httpStatus: 202,
          };
        },
        listBillPaymentsPage: async (input: ListBillPaymentsPageInput) => {
          if (input.status === 'syncing' && input.page === 1) service.onPoll(++service.polls);
          const direction = input.sortOrder === 'desc' ? -1 : 1;
          const matching = payments
            .filter(
              (p) =>
                p.status === input.status &&
                (service.ignoresBatchFilter || input.syncBatchId === undefined || p.syncBatchId === input.syncBatchId),
            )
            .sort((a, b) => direction * (a.updatedAt ?? '').localeCompare(b.updatedAt ?? ''));
          const items = matching.slice((input.page - 1) * input.limit, input.page * input.limit).map((p) => ({ ...p }));
          return {
            items,
            page: input.page,
            total: matching.length,
            hasNextPage: input.page * input.limit < matching.length,
          };
        },
      };
    },
  };
  return service;
}

const batchId = (s: ProcessScenario) => `sb_${s.id}`;

/** The test's batch; an input's own syncBatchId (a bad one) replaces it in the input only. */
function start(s: ProcessScenario, input: Partial<SyncBatchInput> = {}): Promise<BatchHandle> {
  return s.start<typeof syncBatchWorkflow>(SYNC_BATCH_WORKFLOW_TYPE, syncBatchWorkflowId(batchId(s)), [
    { syncBatchId: batchId(s), ...input },
  ]);
}
const state = (handle: BatchHandle) => handle.query(getSyncBatchStateQuery);
const waitForState = (s: ProcessScenario, handle: BatchHandle, done: (st: SyncBatchState) => boolean) =>
  s.waitFor(() => state(handle), done);
const needsAttention = async (handle: BatchHandle) =>
  (await handle.describe()).typedSearchAttributes.get(NeedsAttention);

/** Server times of the polls: each starts with the first page of the syncing payments. */
const pollTimes = (s: ProcessScenario) =>
  s
    .callsOf('listBillPaymentsPage')
    .filter((c) => c.input.status === 'syncing' && c.input.page === 1)
    .map((c) => c.ranAtMs);
const gapsOf = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

/** Each gap at least its wait, and not much more (the test server's clock also runs while work is under way). */
function expectGaps(gaps: number[], waitsMs: number[]): void {
  expect(gaps).toHaveLength(waitsMs.length);
  waitsMs.forEach((wait, i) => {
    expect(gaps[i], `gap ${i + 1}`).toBeGreaterThanOrEqual(wait);
    expect(gaps[i], `gap ${i + 1}`).toBeLessThan(wait + 2 * SECOND);
  });
}

/** What the test's batches recorded: batches ended by outcome, and parks. */
const batchMetrics = (s: ProcessScenario) => ({
  synced: s.metrics.total('etims_sync_batches', { outcome: 'synced' }),
  dismissed: s.metrics.total('etims_sync_batches', { outcome: 'dismissed' }),
  failed: s.metrics.total('etims_sync_batches', { outcome: 'failed' }),
  parked: s.metrics.total('etims_sync_batches_parked'),
});

describe('syncBatchWorkflow', () => {
  it('processes once, then polls with a doubling wait (up to the maximum, back to the first on progress) until every payment is synced', async () => {
    const service = accountingService(3);
    // Polls 1–3 see three syncing, 4–5 two (progress at 4), 6 all synced.
    service.onPoll = (poll) => {
      if (poll === 4) service.set({ bp_1: 'synced' });
      if (poll === 6) service.all('synced');
    };
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s, { companyId: 'cmp_1', options: { maxPollInterval: '5 seconds' } });
      const summary = await handle.result();

      expectGaps(
        gapsOf(pollTimes(s)),
        [2, 4, 5, 2, 4].map((n) => n * SECOND),
      );
      expect(s.inputs('processSyncBatch')).toEqual([{ syncBatchId: batchId(s), companyId: 'cmp_1' }]);
      expect(new Set(s.calls.map((c) => c.taskQueue))).toEqual(new Set([accountingTaskQueue(s.taskQueue)]));
      // Unsettled first, oldest update first, stopping at the first found; then the settled, newest first.
      const lastPoll = s.inputs('listBillPaymentsPage').slice(-4);
      expect(lastPoll).toEqual(
        (
          [
            ['syncing', 'asc'],
            ['pending', 'asc'],
            ['failed', 'desc'],
            ['synced', 'desc'],
          ] as const
        ).map(([status, sortOrder]) => ({
          companyId: 'cmp_1',
          syncBatchId: batchId(s),
          status,
          sortBy: 'updatedAt',
          sortOrder,
          page: 1,
          limit: 100,
        })),
      );
      expect(summary).toMatchObject({
        syncBatchId: batchId(s),
        companyId: 'cmp_1',
        outcome: 'synced',
        synced: 3,
        failed: [],
        missing: [],
        processCalls: 1,
        polls: 6,
        // Process, five polls that stop at the first syncing page, one that reads all four lists.
        webhooks: 0,
        runs: 1,
      });
      expect(await needsAttention(handle)).toBe(false);
      expect(await s.currentDetails(handle)).toContain('**Settled:** 3 synced, 0 failed');
      expect(batchMetrics(s)).toEqual({ synced: 1, dismissed: 0, failed: 0, parked: 0 });
    });
  });

  it('is woken by a webhook long before its poll interval, yet polls stay minPollGap (1 second) apart', async () => {
    const service = accountingService(2);
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s, { options: { pollInterval: '1 hour' } });
      await waitForState(s, handle, (st) => st.polls === 1);

      await handle.signal(syncBatchWebhookSignal, { webhookId: 'wh_1', billPaymentId: 'bp_1', status: 'synced' });
      await waitForState(s, handle, (st) => st.polls === 2);
      const [first, second] = pollTimes(s);
      expect(second! - first!).toBeGreaterThanOrEqual(SECOND);
      expect(second! - first!).toBeLessThan(MINUTE);

      service.all('synced');
      await handle.signal(syncBatchWebhookSignal, { webhookId: 'wh_2', billPaymentId: 'bp_2', status: 'synced' });
      await waitForState(s, handle, (st) => st.step === 'completed');
      expect(await handle.result()).toMatchObject({ outcome: 'synced', synced: 2, webhooks: 2, polls: 3 });
      expect(Math.max(...gapsOf(pollTimes(s)))).toBeLessThan(MINUTE);
    });
  });

  it('parks failed payments for an operator with NeedsAttention; reprocess calls process again and follows them to synced', async () => {
    const service = accountingService(2, 'synced');
    service.set({ bp_2: 'failed' });
    service.onProcess = (call) => {
      if (call === 2) service.set({ bp_2: 'syncing' });
    };
    service.onPoll = (poll) => {
      // Seen syncing once after the reprocess, then synced.
      if (poll === 3) service.set({ bp_2: 'synced' });
    };
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s);
      const parked = await waitForState(s, handle, (st) => st.step === 'parked');
      expect(parked.failed).toEqual([{ id: 'bp_2', reason: REASON, updatedAt: '2026-11-21T10:00:01Z' }]);
      expect(parked).toMatchObject({
        synced: 1,
        parked: { code: 'bill_payments_failed', actions: ['reprocess', 'dismiss'] },
      });
      expect(await needsAttention(handle)).toBe(true);
      const details = await s.currentDetails(handle);
      expect(details).toContain('`bp_2`');
      expect(details).toContain(REASON);
      expect(details).toContain('`reprocess`');
      await expectUpdateRefused(
        handle.executeUpdate(dismissSyncBatchUpdate, { args: [{ reason: '  ' }] }),
        /needs a reason/,
      );

      const resumed = await handle.executeUpdate(reprocessSyncBatchUpdate);
      expect(resumed).toMatchObject({
        step: 'following',
        processCalls: 2,
        parked: null,
        failed: [],
        processMessage: 'Sync batch processing started again',
      });
      expect(await needsAttention(handle)).toBe(false);
      await expectUpdateRefused(handle.executeUpdate(reprocessSyncBatchUpdate), /parked with failed bill payments/);

      await waitForState(s, handle, (st) => st.polls >= 2);
      expect(await handle.result()).toMatchObject({
        outcome: 'synced',
        synced: 2,
        failed: [],
        processCalls: 2,
        polls: 3,
      });
      expect(s.inputs('processSyncBatch')).toHaveLength(2);
      expect(await needsAttention(handle)).toBe(false);
      expect(batchMetrics(s)).toEqual({ synced: 1, dismissed: 0, failed: 0, parked: 1 });
    });
  });

  it('closes a parked batch on dismiss, with its failures left and the reason in the summary', async () => {
    const service = accountingService(2, 'failed');
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s);
      await waitForState(s, handle, (st) => st.step === 'parked');
      const dismissed = await handle.executeUpdate(dismissSyncBatchUpdate, {
        args: [{ reason: ' fixed in the ledger by hand ' }],
      });
      expect(dismissed).toMatchObject({ step: 'dismissed', parked: null });
      const summary = await handle.result();
      expect(summary).toMatchObject({
        outcome: 'dismissed',
        dismissReason: 'fixed in the ledger by hand',
        synced: 0,
        processCalls: 1,
        polls: 1,
      });
      expect(summary.failed.map((f) => f.id)).toEqual(['bp_2', 'bp_1']);
      expect(await needsAttention(handle)).toBe(false);
      expect(batchMetrics(s)).toEqual({ synced: 0, dismissed: 1, failed: 0, parked: 1 });
    });
  });

  it('counts a park once however many polls find the same failures, and the batch once, dismissed, at its end', async () => {
    const service = accountingService(2, 'failed');
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s, { options: { parkedPollInterval: '1 minute' } });
      await waitForState(s, handle, (st) => st.step === 'parked');
      await s.env.sleep(3 * MINUTE + 30 * SECOND);
      await waitForState(s, handle, (st) => st.polls >= 4);
      expect(await state(handle)).toMatchObject({ step: 'parked' });
      expect(batchMetrics(s)).toEqual({ synced: 0, dismissed: 0, failed: 0, parked: 1 });

      await handle.executeUpdate(dismissSyncBatchUpdate, { args: [{ reason: 'fixed by hand' }] });
      expect(await handle.result()).toMatchObject({ outcome: 'dismissed' });
      expect(batchMetrics(s)).toEqual({ synced: 0, dismissed: 1, failed: 0, parked: 1 });
    });
  });

  it('refuses reprocess and dismiss while nothing has failed', async () => {
    const service = accountingService(1);
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s, { options: { pollInterval: '1 hour' } });
      await waitForState(s, handle, (st) => st.polls === 1);
      await expectUpdateRefused(handle.executeUpdate(reprocessSyncBatchUpdate), /parked with failed bill payments/);
      await expectUpdateRefused(
        handle.executeUpdate(dismissSyncBatchUpdate, { args: [{ reason: 'no' }] }),
        /parked with failed bill payments/,
      );
      expect(await state(handle)).toMatchObject({ step: 'following', processCalls: 1 });
    });
  });

  it('looks again every parkedPollInterval while parked: failures fixed elsewhere complete the batch', async () => {
    const service = accountingService(2, 'synced');
    service.set({ bp_1: 'failed' });
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s);
      await waitForState(s, handle, (st) => st.step === 'parked');
      await s.env.sleep(30 * MINUTE);
      expect(await state(handle)).toMatchObject({ step: 'parked', polls: 1 });

      service.set({ bp_1: 'synced' });
      const summary = await handle.result();
      expect(summary).toMatchObject({ outcome: 'synced', synced: 2, failed: [], polls: 2, processCalls: 1 });
      expectGaps(gapsOf(pollTimes(s)), [HOUR]);
      expect(await needsAttention(handle)).toBe(false);
    });
  });

  it('sets NeedsAttention once payments stay unsettled past attentionAfter, polling on; it clears when they settle', async () => {
    const service = accountingService(1);
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s, { options: { attentionAfter: '30 minutes' } });
      await waitForState(s, handle, (st) => st.polls === 1);
      await s.env.sleep(20 * MINUTE);
      expect(await state(handle)).toMatchObject({ step: 'following', stuck: false });
      expect(await needsAttention(handle)).toBe(false);

      await s.env.sleep(20 * MINUTE);
      const stuck = await state(handle);
      expect(stuck).toMatchObject({ step: 'following', stuck: true, parked: null });
      expect(stuck.history.map((e) => e.event)).toContain(`still unsettled since ${stuck.unsettledSince}`);
      expect(await needsAttention(handle)).toBe(true);
      expect(await s.currentDetails(handle)).toContain(`(since ${stuck.unsettledSince})`);
      // The wait between polls stops growing at the default maximum of 5 minutes.
      expect(stuck.pollIntervalMs).toBe(5 * MINUTE);

      service.all('synced');
      expect(await handle.result()).toMatchObject({ outcome: 'synced', synced: 1 });
      expect(await state(handle)).toMatchObject({ stuck: false, unsettledSince: null });
      expect(await needsAttention(handle)).toBe(false);
    });
  });

  it('continues as new after pollsPerRun polls, carrying its state and back-off; process is not called again', async () => {
    const service = accountingService(1);
    service.onPoll = (poll) => {
      if (poll === 8) service.all('synced');
    };
    await h.run(service.stubs(), async (s) => {
      service.tag(batchId(s));
      const handle = await start(s, { options: { pollsPerRun: 3 } });
      const summary = await handle.result();

      const runs = [...new Set(s.calls.map((c) => c.runId))];
      expect(runs).toHaveLength(3);
      const pollsByRun = runs.map(
        (run) =>
          s.callsOf('listBillPaymentsPage').filter((c) => c.runId === run && c.input.status === 'syncing').length,
      );
      expect(pollsByRun).toEqual([3, 3, 2]);
      expect(s.callsOf('processSyncBatch').map((c) => c.runId)).toEqual([runs[0]]);
      // The back-off goes on doubling across runs.
      expectGaps(
        gapsOf(pollTimes(s)),
        [2, 4, 8, 16, 32, 64, 128].map((n) => n * SECOND),
      );
      expect(summary).toMatchObject({ outcome: 'synced', runs: 3, polls: 8, processCalls: 1 });
      const final = await state(handle);
      expect(final.history.map((e) => e.event)).toEqual(
        expect.arrayContaining(['continued as new (run 2)', 'continued as new (run 3)']),
      );
      // One batch, whatever its runs.
      expect(batchMetrics(s)).toEqual({ synced: 1, dismissed: 0, failed: 0, parked: 0 });
    });
  });

  it('follows the payments named by billPaymentIds, without the batch filter, and reports those no listing shows', async () => {
    const service = accountingService(2, 'synced');
    service.ignoresBatchFilter = true;
    await h.run(service.stubs(), async (s) => {
      const summary = await (await start(s, { billPaymentIds: ['bp_1', 'bp_2', 'bp_gone'] })).result();
      expect(summary).toMatchObject({ outcome: 'synced', synced: 2, missing: ['bp_gone'] });
      expect(s.inputs('listBillPaymentsPage').every((i) => !('syncBatchId' in i))).toBe(true);
    });
  });

  it('fails clearly when neither the service nor the input says which payments the batch covers', async () => {
    const service = accountingService(2, 'synced');
    service.ignoresBatchFilter = true;
    await h.run(service.stubs(), async (s) => {
      const error = await (await start(s)).result().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause).toMatchObject({
        type: SYNC_BATCH_FAILURES.coverageUnknown,
        nonRetryable: true,
      });
      expect(((error as WorkflowFailedError).cause as ApplicationFailure).message).toContain(
        'start the workflow with billPaymentIds',
      );
      expect(batchMetrics(s)).toEqual({ synced: 0, dismissed: 0, failed: 1, parked: 0 });
    });
  });

  it.each([
    [{ syncBatchId: ' ' }, 'syncBatchId: must be a non-empty string'],
    [{ companyId: '' }, 'companyId: must be a non-empty string when given'],
    [{ billPaymentIds: [] }, 'billPaymentIds: must be a non-empty list of bill payment ids when given'],
    [{ options: { pollInterval: 'soon' } }, 'options.pollInterval: not a duration: soon'],
    [{ options: { pollsPerRun: 0 } }, 'options.pollsPerRun: must be an integer from 1 to 10000'],
    [{ options: { pageSize: 101 } }, 'options.pageSize: must be an integer from 1 to 100'],
  ] as Array<[Partial<SyncBatchInput>, string]>)('refuses %j before any call: %s', async (input, message) => {
    await h.run(accountingService(1).stubs(), async (s) => {
      const error = await (await start(s, input)).result().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause).toMatchObject({ type: FAILURE_TYPES.invalidInput, nonRetryable: true, message });
      expect(s.calls).toEqual([]);
      expect(batchMetrics(s)).toEqual({ synced: 0, dismissed: 0, failed: 1, parked: 0 });
    });
  });
});

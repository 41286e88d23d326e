import { setCurrentDetails } from '@temporalio/workflow';
import type { ProcessSyncBatchResult } from '../../activities/accounting.js';
import {
  type SyncBatchInput,
  type SyncBatchState,
  type SyncBatchStep,
  type SyncBatchSummary,
} from '../../src/contracts/sync-batch.js';
import { Attention } from '../attention.js';
import { count } from '../metrics.js';

/** History entries kept in the state: enough to see what happened lately, bounded over any number of runs. */
const HISTORY_LIMIT = 30;
/** Failed payments named in the Temporal UI's details; the query has them all. */
const DETAILS_FAILURES_SHOWN = 20;

function initialState(input: SyncBatchInput): SyncBatchState {
  return {
    syncBatchId: input.syncBatchId,
    companyId: input.companyId ?? null,
    step: 'processing',
    processMessage: null,
    processCalls: 0,
    polls: 0,
    webhooks: 0,
    runs: 1,
    startedAt: new Date().toISOString(),
    lastPoll: null,
    unsettledSince: null,
    synced: 0,
    failed: [],
    missing: [],
    parked: null,
    stuck: false,
    pollIntervalMs: 0,
    history: [],
  };
}

/** Its state (the `getState` query), `NeedsAttention`, UI details and metrics: all changes go through here. */
export class SyncBatchRecord {
  readonly state: SyncBatchState;
  private readonly attention = new Attention();

  constructor(input: SyncBatchInput) {
    this.state = input.continued ? { ...input.continued, runs: input.continued.runs + 1 } : initialState(input);
    if (input.continued) this.note(`continued as new (run ${this.state.runs})`);
  }

  note(event: string): void {
    this.state.history = [...this.state.history, { at: new Date().toISOString(), event }].slice(-HISTORY_LIMIT);
  }

  enter(step: SyncBatchStep): void {
    this.state.step = step;
    this.publish();
  }

  processed(result: ProcessSyncBatchResult): void {
    this.state.processCalls += 1;
    this.state.processMessage = result.message;
    this.note(`process: ${result.message}`);
    this.publish();
  }

  /** A poll found payments still pending or syncing; past `attentionAfterMs` the batch needs a look. */
  unsettled(pending: number, syncing: number, attentionAfterMs: number): void {
    const now = new Date().toISOString();
    this.state.polls += 1;
    this.state.lastPoll = { at: now, pending, syncing };
    this.state.unsettledSince ??= now;
    const stuck = Date.now() - Date.parse(this.state.unsettledSince) >= attentionAfterMs;
    if (stuck && !this.state.stuck) this.note(`still unsettled since ${this.state.unsettledSince}`);
    this.state.stuck = stuck;
    this.publish();
  }

  park(): void {
    const { failed } = this.state;
    const listed = failed
      .slice(0, DETAILS_FAILURES_SHOWN)
      .map((f) => `${f.id} (${f.reason ?? 'no reason given'})`)
      .join('; ');
    const more = failed.length > DETAILS_FAILURES_SHOWN ? `; and ${failed.length - DETAILS_FAILURES_SHOWN} more` : '';
    const message = `${failed.length} bill payment(s) failed to sync: ${listed}${more}`;
    // A poll while parked that finds the same failures changes nothing.
    if (this.state.parked?.message !== message) {
      // Counted when the batch parks, not when a poll while parked finds other failures: one park, one operator's act.
      if (this.state.parked === null) count('etims_sync_batches_parked', {});
      this.state.parked = {
        code: 'bill_payments_failed',
        message,
        since: new Date().toISOString(),
        actions: ['reprocess', 'dismiss'],
      };
      this.note(`parked: ${failed.length} failed`);
    }
    this.enter('parked');
  }

  /** The failures were fixed elsewhere (a poll while parked found none). */
  unparked(): void {
    if (!this.state.parked) return;
    this.state.parked = null;
    this.note('no failed bill payments any more');
    this.publish();
  }

  /** The batch's end, in its last run (earlier runs continue as new): its summary, its outcome counted once. */
  finished(dismissReason?: string): SyncBatchSummary {
    const { syncBatchId, companyId, step, synced, failed, missing, processCalls, polls, webhooks, runs, startedAt } =
      this.state;
    const outcome = step === 'dismissed' ? 'dismissed' : 'synced';
    count('etims_sync_batches', { outcome });
    return {
      ...{ syncBatchId, companyId, outcome, synced, failed, missing, processCalls, polls, webhooks, runs, startedAt },
      finishedAt: new Date().toISOString(),
      ...(dismissReason === undefined ? {} : { dismissReason }),
    };
  }

  /** `NeedsAttention` while parked or stuck, and the details an operator reads in the Temporal UI. */
  private publish(): void {
    const s = this.state;
    this.attention.write(s.parked !== null || s.stuck);
    const lines = [`**Sync batch:** ${s.syncBatchId}${s.companyId ? ` (company ${s.companyId})` : ''} · ${s.step}`];
    if (s.processMessage)
      lines.push(`**Process:** ${s.processMessage} (${s.processCalls} call${s.processCalls === 1 ? '' : 's'})`);
    if (s.lastPoll)
      lines.push(
        `**Unsettled:** ${s.lastPoll.pending} pending, ${s.lastPoll.syncing} syncing at ${s.lastPoll.at}` +
          (s.stuck ? ` (since ${s.unsettledSince})` : ''),
      );
    if (s.step === 'parked' || s.step === 'completed' || s.step === 'dismissed')
      lines.push(`**Settled:** ${s.synced} synced, ${s.failed.length} failed`);
    if (s.parked) {
      lines.push(`**Parked:** \`${s.parked.code}\` since ${s.parked.since}`);
      const shown = s.failed
        .slice(0, DETAILS_FAILURES_SHOWN)
        .map((f) => `- \`${f.id}\`: ${f.reason ?? 'no reason given'}`);
      if (s.failed.length > DETAILS_FAILURES_SHOWN)
        shown.push(`- and ${s.failed.length - DETAILS_FAILURES_SHOWN} more (query \`getState\`)`);
      lines.push(`**Failed bill payments:**\n${shown.join('\n')}`);
      lines.push(
        '**Resolve with the update:** `reprocess` (process the failed payments again) or `dismiss` with a reason',
      );
    }
    setCurrentDetails(lines.join('\n\n'));
  }
}

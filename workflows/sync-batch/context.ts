import type { SyncBatchInput } from '../../src/contracts/sync-batch.js';
import type { SyncBatchApi } from './activities.js';
import type { BatchScope } from './observe.js';
import type { SyncBatchRecord } from './record.js';

/** The batch's options with their defaults applied, durations in milliseconds. */
export interface SyncBatchSettings {
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  minPollGapMs: number;
  parkedPollIntervalMs: number;
  attentionAfterMs: number;
  pollsPerRun: number;
  pageSize: number;
}

/** What the message handlers recorded for the process to act on. */
export interface SyncBatchInbox {
  reprocessing: boolean;
  dismissReason: string | undefined;
}

/** Everything the steps of one run of a sync batch share. */
export interface Batch {
  input: SyncBatchInput;
  settings: SyncBatchSettings;
  scope: BatchScope;
  record: SyncBatchRecord;
  inbox: SyncBatchInbox;
  api: SyncBatchApi;
  /** Polls made by this run (the history grows with them; bounded by `pollsPerRun`). */
  pollsThisRun: number;
  lastPollAt: number;
}

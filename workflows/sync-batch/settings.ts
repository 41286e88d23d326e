import { ApplicationFailure } from '@temporalio/workflow';
import { parseDuration } from '../../src/contracts/duration.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { SyncBatchInput, SyncBatchOptions } from '../../src/contracts/sync-batch.js';

export type SyncBatchSettings = ReturnType<typeof settingsOf>;

/** Starts from plain JSON skip the client's validation: a bad input fails the run clearly, before any call. */
function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidInput);
}

export function settingsOf(input: SyncBatchInput) {
  if (typeof input?.syncBatchId !== 'string' || input.syncBatchId.trim() === '')
    throw invalid('syncBatchId: must be a non-empty string');
  if (input.companyId !== undefined && (typeof input.companyId !== 'string' || input.companyId.trim() === ''))
    throw invalid('companyId: must be a non-empty string when given');
  const ids = input.billPaymentIds;
  if (
    ids !== undefined &&
    (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.trim() !== ''))
  )
    throw invalid('billPaymentIds: must be a non-empty list of bill payment ids when given');
  const options: SyncBatchOptions = input.options ?? {};
  const duration = (name: keyof SyncBatchOptions, fallback: string) => {
    const value = options[name] ?? fallback;
    const ms = typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined || ms <= 0) throw invalid(`options.${name}: not a duration: ${String(value)}`);
    return ms;
  };
  const integer = (name: 'pollsPerRun' | 'pageSize', fallback: number, max: number) => {
    const value = options[name] ?? fallback;
    if (!Number.isSafeInteger(value) || value < 1 || value > max)
      throw invalid(`options.${name}: must be an integer from 1 to ${max}`);
    return value;
  };
  return {
    pollIntervalMs: duration('pollInterval', '2 seconds'),
    maxPollIntervalMs: duration('maxPollInterval', '5 minutes'),
    minPollGapMs: duration('minPollGap', '1 second'),
    parkedPollIntervalMs: duration('parkedPollInterval', '1 hour'),
    attentionAfterMs: duration('attentionAfter', '6 hours'),
    pollsPerRun: integer('pollsPerRun', 200, 10_000),
    pageSize: integer('pageSize', 100, 100),
  };
}

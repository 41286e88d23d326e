import { ApplicationFailure } from '@temporalio/workflow';
import { parseDuration } from '../../src/contracts/duration.js';
import { FAILURE_TYPES } from '../../src/contracts/failures.js';
import type { SyncBatchInput, SyncBatchOptions } from '../../src/contracts/sync-batch.js';
import type { SyncBatchSettings } from './context.js';

/** Starts from plain JSON skip the client's validation: a bad input fails the run clearly, before any call. */
function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES.invalidInput);
}

function durationOption(options: SyncBatchOptions, name: keyof SyncBatchOptions, fallback: string): number {
  const value = options[name] ?? fallback;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || ms <= 0) throw invalid(`options.${name}: not a duration: ${String(value)}`);
  return ms;
}

function integerOption(
  options: SyncBatchOptions,
  name: 'pollsPerRun' | 'pageSize',
  fallback: number,
  max: number,
): number {
  const value = options[name] ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max)
    throw invalid(`options.${name}: must be an integer from 1 to ${max}`);
  return value;
}

export function settingsOf(input: SyncBatchInput): SyncBatchSettings {
  if (typeof input?.syncBatchId !== 'string' || input.syncBatchId.trim() === '')
    throw invalid('syncBatchId: must be a non-empty string');
  if (input.companyId !== undefined && (typeof input.companyId !== 'string' || input.companyId.trim() === '')) {
    throw invalid('companyId: must be a non-empty string when given');
  }
  const ids = input.billPaymentIds;
  if (
    ids !== undefined &&
    (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === 'string' && id.trim() !== ''))
  ) {
    throw invalid('billPaymentIds: must be a non-empty list of bill payment ids when given');
  }
  const options = input.options ?? {};
  return {
    pollIntervalMs: durationOption(options, 'pollInterval', '2 seconds'),
    maxPollIntervalMs: durationOption(options, 'maxPollInterval', '5 minutes'),
    minPollGapMs: durationOption(options, 'minPollGap', '1 second'),
    parkedPollIntervalMs: durationOption(options, 'parkedPollInterval', '1 hour'),
    attentionAfterMs: durationOption(options, 'attentionAfter', '6 hours'),
    pollsPerRun: integerOption(options, 'pollsPerRun', 200, 10_000),
    pageSize: integerOption(options, 'pageSize', 100, 100),
  };
}

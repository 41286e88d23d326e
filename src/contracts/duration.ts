/**
 * Durations in the `ms` string format that Temporal's `Duration` accepts (`'24 hours'`, `'30s'`, `'1.5h'`), read by
 * the SDK's own parser, so a value accepted when a process is started is exactly what its workflow reads, and what
 * Temporal itself would make of it. Workflow code imports this file: only `@temporalio/common`.
 * The unit is required here: a bare number would be read as milliseconds, which is never what someone writing a
 * sale's timeout means; and a negative duration is no timeout at all.
 */
import { msToNumber, type Duration } from '@temporalio/common';

const NUMBER_AND_UNIT = /^\d*\.?\d+ *[a-z]+$/i;

/** The duration in milliseconds, or `undefined` when `text` is not a non-negative number followed by a known unit. */
export function parseDuration(text: string): number | undefined {
  if (!NUMBER_AND_UNIT.test(text)) return undefined;
  try {
    const value = msToNumber(text as Duration);
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

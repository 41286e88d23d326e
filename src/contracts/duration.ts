/** Temporal's duration parser, unit required: a bare number would be milliseconds, never what a timeout means. */
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

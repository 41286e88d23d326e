/**
 * Durations as Temporal reads them (`'24 hours'`, `'30s'`), by the SDK's own parser. The unit is required: a bare
 * number would be milliseconds, never what someone writing a timeout means. Workflow code imports this file.
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

/**
 * Durations in the `ms` string format that Temporal's `Duration` accepts (`'24 hours'`, `'30s'`, `'1.5h'`),
 * shared by the client's input validation and workflow code, so a value accepted when a sale is started is
 * exactly what the workflow reads (no Node APIs here: workflow code imports it).
 * The number and the unit are both required here: a bare number would be read as milliseconds, which is
 * never what someone writing a sale's timeout means.
 */

const DURATION_PATTERN =
  /^(\d*\.?\d+) *(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)$/i;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Milliseconds per unit, as the `ms` package counts them (a year is 365.25 days). */
function unitMs(unit: string): number {
  const u = unit.toLowerCase();
  if (u === 'ms' || u.startsWith('msec') || u.startsWith('millisecond')) return 1;
  if (u === 's' || u.startsWith('sec')) return SECOND;
  if (u === 'm' || u.startsWith('min')) return MINUTE;
  if (u === 'h' || u.startsWith('h')) return HOUR;
  if (u === 'd' || u.startsWith('day')) return DAY;
  if (u === 'w' || u.startsWith('week')) return 7 * DAY;
  return 365.25 * DAY;
}

/** The duration in milliseconds, or `undefined` when `text` is not a number followed by a unit. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]) * unitMs(match[2] ?? '');
  return Number.isFinite(value) ? value : undefined;
}


/**
 * Durations as people write them in sale options ('30s', '24 hours', '7 days') or plain milliseconds.
 * Shared by workflow code and the client's input validation, so both accept exactly the same forms.
 */
const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
};

/** Milliseconds of `value`, or undefined when it is not a duration this project accepts. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i.exec(value);
  if (!match) return undefined;
  const unit = (match[2] ?? 'ms').toLowerCase();
  const factor = UNIT_MS[unit] ?? UNIT_MS[unit.replace(/s$/, '')];
  return factor === undefined ? undefined : Math.round(Number(match[1]) * factor);
}

/** Like parseDuration, for values already validated at the edge; a bad value is a programming error. */
export function durationMs(value: string | number): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new TypeError(`not a duration: ${String(value)}`);
  return ms;
}

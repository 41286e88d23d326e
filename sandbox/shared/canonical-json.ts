import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted and no whitespace, so two equal values always give the same text
 * (used to fingerprint request bodies for idempotency). `undefined` object members are dropped and
 * `undefined` array items become `null`, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/** Hex SHA-256 of the canonical JSON of all parts. */
export function fingerprint(...parts: unknown[]): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('hex');
}

function sortKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Dates, Buffers and similar serialise through their own toJSON; sort whatever that yields.
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return sortKeys(withToJson.toJSON());
  if (Array.isArray(value)) return value.map(sortKeys);
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return sorted;
}

// The hint in a result callback's body, as assumed where the contract is silent (C45): `{id, event, createdAt,
// data: {sale}}` and `x-callback-id`; `data` being the document itself is read too. Nothing depends on it (the token
// names the execution); valid fields only sharpen de-duplication and logs.
import { createHash } from 'node:crypto';
import type { CallbackHint } from '../contracts/sale.js';
import { isRecord } from '../contracts/sale-input.js';

/** 'none', for a service whose bodies use these names otherwise: callbacks are de-duplicated by their bytes only. */
export type CallbackBodyFieldSetting = 'assumed' | 'none';

/** Longer values are not identifiers the service issues: dropped rather than put into history. */
const MAX_ID_LENGTH = 256;
const MAX_EVENT_LENGTH = 100;

export type CallbackHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** `fingerprint` digests the body's bytes. */
export function readHint(
  body: Buffer | undefined,
  headers: CallbackHeaders = {},
  fields: CallbackBodyFieldSetting = 'assumed',
): { hint: CallbackHint; fingerprint: string } {
  const bytes = body ?? Buffer.alloc(0);
  const fingerprint = createHash('sha256').update(bytes).digest('base64url').slice(0, 22);
  if (fields === 'none') return { hint: { documentId: null, event: null, callbackId: null }, fingerprint };
  const parsed = parseJson(bytes);
  const at = (...path: string[]) =>
    path.reduce<unknown>((value, name) => (isRecord(value) ? value[name] : undefined), parsed);
  const id = (value: unknown) => text(value, MAX_ID_LENGTH);
  return {
    hint: {
      documentId: id(at('data', 'sale', 'id')) ?? id(at('data', 'id')),
      event: text(at('event'), MAX_EVENT_LENGTH),
      callbackId: id(at('id')) ?? id([headers['x-callback-id']].flat()[0]),
    },
    fingerprint,
  };
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function text(value: unknown, maxLength: number): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed !== '' && trimmed.length <= maxLength ? trimmed : null;
}

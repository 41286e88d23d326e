// The hint in a result callback's body, as assumed where the contract is silent (C45). Nothing depends on it (the
// token names the execution); valid fields only sharpen de-duplication and logs.
import { createHash } from 'node:crypto';
import type { CallbackHint } from '../contracts/sale.js';

type JsonPath = readonly string[];

/** Paths to each field (the first that holds an identifier wins), and headers carrying the delivery id. */
export interface CallbackBodyFields {
  readonly documentId: readonly JsonPath[];
  readonly event: readonly JsonPath[];
  readonly callbackId: readonly JsonPath[];
  readonly callbackIdHeaders: readonly string[];
}

/** C45: `{id, event, createdAt, data: {sale}}`, `x-callback-id`; `data` being the document itself is read too. */
const ASSUMED_BODY_FIELDS: CallbackBodyFields = {
  documentId: [
    ['data', 'sale', 'id'],
    ['data', 'id'],
  ],
  event: [['event']],
  callbackId: [['id']],
  callbackIdHeaders: ['x-callback-id'],
};

export type CallbackBodyFieldSetting = 'assumed' | 'none';

/** 'none', for a service whose bodies use these names otherwise: callbacks are de-duplicated by their bytes only. */
export function callbackBodyFields(setting: CallbackBodyFieldSetting = 'assumed'): CallbackBodyFields {
  return setting === 'none'
    ? { documentId: [], event: [], callbackId: [], callbackIdHeaders: [] }
    : ASSUMED_BODY_FIELDS;
}

/** Longer values are not identifiers the service issues: dropped rather than put into history. */
const MAX_ID_LENGTH = 256;
const MAX_EVENT_LENGTH = 100;

export type CallbackHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** `fingerprint` digests the body's bytes. */
export function readHint(
  body: unknown,
  headers: CallbackHeaders = {},
  fields: CallbackBodyFields = ASSUMED_BODY_FIELDS,
): { hint: CallbackHint; fingerprint: string } {
  const bytes = bodyBytes(body);
  const parsed = parseJson(body, bytes);
  const first = (values: unknown[], maxLength: number) =>
    values.map((value) => text(value, maxLength)).find((value) => value !== null) ?? null;
  const at = (paths: readonly JsonPath[]) => paths.map((path) => valueAt(parsed, path));
  const inHeaders = fields.callbackIdHeaders.map((name) => [headers[name]].flat()[0]);
  return {
    hint: {
      documentId: first(at(fields.documentId), MAX_ID_LENGTH),
      event: first(at(fields.event), MAX_EVENT_LENGTH),
      callbackId: first([...at(fields.callbackId), ...inHeaders], MAX_ID_LENGTH),
    },
    fingerprint: createHash('sha256').update(bytes).digest('base64url').slice(0, 22),
  };
}

function bodyBytes(body: unknown): Buffer {
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body === undefined || body === null) return Buffer.alloc(0);
  return Buffer.from(JSON.stringify(body) ?? '', 'utf8');
}

function parseJson(body: unknown, bytes: Buffer): unknown {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return body;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function valueAt(value: unknown, path: JsonPath): unknown {
  let current = value;
  for (const name of path) {
    if (!isObject(current)) return undefined;
    current = current[name];
  }
  return current;
}

export function text(value: unknown, maxLength: number): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed !== '' && trimmed.length <= maxLength ? trimmed : null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

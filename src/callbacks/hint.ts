/**
 * Reads the hint out of a result callback body. The body is read leniently (C45: beyond `data.sale.id`
 * every field is optional): the workflow re-reads the document anyway, so all a callback must tell it is
 * which document to look at.
 */
import type { CallbackHint } from '../contracts/sale.js';

/** Longer values are not identifiers the service issues; they are dropped rather than put into history. */
const MAX_ID_LENGTH = 256;
const MAX_EVENT_LENGTH = 100;

export type CallbackHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The body as a JSON object: already parsed, or JSON text / bytes; anything else is undefined. */
function parseCallbackBody(body: unknown): Record<string, unknown> | undefined {
  let value = body;
  if (value instanceof Uint8Array) value = Buffer.from(value).toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return isObject(value) ? value : undefined;
}

/** The hint to signal, or undefined when the body names no document. */
export function extractHint(body: unknown, headers: CallbackHeaders = {}): CallbackHint | undefined {
  const parsed = parseCallbackBody(body);
  const data = parsed?.data;
  // `data.sale` is the documented shape; `data` being the document itself is accepted as well.
  const document = isObject(data) ? (isObject(data.sale) ? data.sale : data) : undefined;
  const documentId = text(document?.id, MAX_ID_LENGTH);
  if (documentId === null) return undefined;
  return {
    documentId,
    event: text(parsed?.event, MAX_EVENT_LENGTH),
    callbackId: text(parsed?.id, MAX_ID_LENGTH) ?? text(firstHeader(headers['x-callback-id']), MAX_ID_LENGTH),
  };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function text(value: unknown, maxLength: number): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed !== '' && trimmed.length <= maxLength ? trimmed : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

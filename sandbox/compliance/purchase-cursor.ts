import { invalidRequest } from './errors.js';

/** A position in the purchases list (newest first: invoice date, then id, both descending). */
export interface PurchasePosition {
  invoiceDate: string;
  id: string;
}

/** The opaque cursor: base64url of the last position returned. */
export function encodeCursor(position: PurchasePosition): string {
  return Buffer.from(JSON.stringify([position.invoiceDate, position.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): PurchasePosition {
  const malformed = () =>
    invalidRequest({
      field: 'cursor',
      message: 'is not a cursor this service issued; pass pagination.nextCursor back unchanged',
    });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw malformed();
  const [invoiceDate, id] = parsed as unknown[];
  if (
    typeof invoiceDate !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}$/.test(invoiceDate) ||
    typeof id !== 'string' ||
    id === ''
  ) {
    throw malformed();
  }
  return { invoiceDate, id };
}

/** Newest first: by invoice date, then by id, both descending. */
export function newestFirst(a: PurchasePosition, b: PurchasePosition): number {
  if (a.invoiceDate !== b.invoiceDate) return a.invoiceDate < b.invoiceDate ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

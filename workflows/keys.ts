// Keys derived from business identity only (never run ids or randomness), so a reset, a continue-as-new or a second
// worker sends the same key. Workflow code has no Node crypto, hence @noble/hashes.
import { sha256 } from '@noble/hashes/sha2';
import { utf8ToBytes } from '@noble/hashes/utils';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function base64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63].map((v) => BASE64URL[v]).join('');
    out += chars.slice(0, Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6)));
  }
  return out;
}

/** `prefix:` + 43 characters of base64url SHA-256 of the parts: within the API's 8..128 `[A-Za-z0-9._:-]`. */
function derive(prefix: string, parts: readonly string[]): string {
  // Length-prefixed parts: ("a|b", "c") and ("a", "b|c") never collide.
  return `${prefix}:${base64url(sha256(utf8ToBytes(parts.map((p) => `${p.length}:${p}`).join('|'))))}`;
}

export function saleIdempotencyKey(businessId: string, traderInvoiceNumber: string): string {
  return derive('sale-v1', [businessId, traderInvoiceNumber]);
}

/** A sale is credited once: one key per sale and credit note (their trader invoice numbers). */
export function creditNoteIdempotencyKey(businessId: string, saleNumber: string, creditNoteNumber: string): string {
  return derive('cn-v1', [businessId, saleNumber, creditNoteNumber]);
}

/** The `referenceId` of one stock movement of a document (≤ 100 characters). */
export function stockReferenceId(documentKey: string, lineIndex: number, action: 'ADD' | 'DEDUCT'): string {
  return `${documentKey}:${lineIndex}:${action}`;
}

/** The stem of a stock ledger's own movement references (`stk:<stem>:<n>`): 16 characters, stable per ledger. */
export function ledgerReferenceStem(ledgerWorkflowId: string): string {
  return derive('stk', [ledgerWorkflowId]).slice('stk:'.length, 'stk:'.length + 16);
}

/** The `referenceId` of a stock-in movement: one per invoice line, round of confirmation and step (50 characters). */
export function stockInReferenceId(
  businessId: string,
  purchaseId: string,
  line: number,
  round: number,
  step: string,
): string {
  return derive('sin-v1', [businessId, purchaseId, String(line), String(round), step]);
}

/**
 * A line id as a stock ledger remembers it once its movement is long recorded: 16 characters of its SHA-256 (96 bits,
 * no collision among the few thousand remembered), `#`-marked so it is never taken for an id.
 */
export function rememberedLineId(lineId: string): string {
  return `#${base64url(sha256(utf8ToBytes(lineId))).slice(0, 16)}`;
}

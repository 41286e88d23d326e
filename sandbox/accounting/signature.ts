import { createHmac, timingSafeEqual } from 'node:crypto';

/** "within 5 minutes of server time", both directions (A13). */
const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export interface SignedRequest {
  method: string;
  /** The request target as received (path and query). */
  url: string;
  rawBody: Buffer;
  timestampHeader: string;
  signatureHeader: string;
}

/**
 * The sandbox's own check of the accounting request signature, deliberately independent of the client's
 * signing code so a shared mistake cannot make both agree: hex HMAC-SHA256 under a client secret of
 * METHOD + path (+ query when `signQuery`, A11) + raw body bytes + the X-Timestamp value.
 */
export function checkRequestSignature(
  request: SignedRequest,
  clientSecrets: readonly string[],
  options: { now: number; signQuery: boolean },
): SignatureCheck {
  if (!/^\d{1,16}$/.test(request.timestampHeader)) {
    return { ok: false, reason: 'X-Timestamp must be Unix time in milliseconds' };
  }
  const timestamp = Number(request.timestampHeader);
  if (Math.abs(options.now - timestamp) > SIGNATURE_TOLERANCE_MS) {
    return { ok: false, reason: 'X-Timestamp is more than 5 minutes away from server time' };
  }
  if (!/^[0-9a-fA-F]{64}$/.test(request.signatureHeader)) {
    return { ok: false, reason: 'Invalid signature' };
  }
  const received = Buffer.from(request.signatureHeader.toLowerCase(), 'hex');
  const path = options.signQuery ? request.url : (request.url.split('?')[0] ?? request.url);
  const matches = clientSecrets.some((secret) => {
    const expected = createHmac('sha256', secret)
      .update(request.method.toUpperCase() + path, 'utf8')
      .update(request.rawBody)
      .update(request.timestampHeader, 'utf8')
      .digest();
    // Both are 32-byte digests here (the header was checked above), so timingSafeEqual cannot throw.
    return expected.length === received.length && timingSafeEqual(expected, received);
  });
  return matches ? { ok: true } : { ok: false, reason: 'Invalid signature' };
}

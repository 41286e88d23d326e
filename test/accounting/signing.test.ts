import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { signRequest, signatureHeaders } from '../../src/accounting/signing.js';

const SECRET = 'cs_test_secret_for_signing_0001';

/** Hex HMAC-SHA256 from the openssl CLI: an implementation that shares no code with ours. */
function opensslHmac(secret: string, message: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: message }).toString('utf8');
  const hex = /([0-9a-f]{64})\s*$/.exec(out)?.[1];
  if (!hex) throw new Error(`unexpected openssl output: ${out}`);
  return hex;
}

describe('accounting request signing', () => {
  it('signs a GET as METHOD + path + empty body + timestamp', () => {
    const timestamp = 1_732_000_000_123;
    const signature = signRequest({ method: 'get', path: '/bill-payments', timestamp, clientSecret: SECRET });
    expect(signature).toBe(opensslHmac(SECRET, `GET/bill-payments${timestamp}`));
  });

  it('signs a POST over the exact body bytes, including non-ASCII text', () => {
    const timestamp = 1_732_000_000_456;
    const body = JSON.stringify({ note: 'Malipo ya café — KES 1,000', amount: 1000.5 });
    const signature = signRequest({
      method: 'POST',
      path: '/sync/batches/sb_1/process',
      body,
      timestamp,
      clientSecret: SECRET,
    });
    expect(signature).toBe(opensslHmac(SECRET, `POST/sync/batches/sb_1/process${body}${timestamp}`));
    // One byte of whitespace changes the signature: the body is signed as sent, not as parsed.
    const reformatted = JSON.stringify(JSON.parse(body), null, 1);
    expect(
      signRequest({
        method: 'POST',
        path: '/sync/batches/sb_1/process',
        body: reformatted,
        timestamp,
        clientSecret: SECRET,
      }),
    ).not.toBe(signature);
  });

  it('signs the path without the query by default and with it when asked (A11)', () => {
    const signed = (target: string, signQuery: boolean) =>
      signatureHeaders({ method: 'GET', target, clientSecret: SECRET, signQuery, now: () => 1 })['X-Signature'];
    expect(signed('/bill-payments?page=2&limit=5', false)).toBe(opensslHmac(SECRET, 'GET/bill-payments1'));
    expect(signed('/bill-payments?page=2&limit=5', true)).toBe(
      opensslHmac(SECRET, 'GET/bill-payments?page=2&limit=51'),
    );
    expect(signed('/companies', false)).toBe(opensslHmac(SECRET, 'GET/companies1'));
  });

  it('builds both headers from one fresh timestamp per call', () => {
    let now = 1_732_000_000_000;
    const headers = (target: string) =>
      signatureHeaders({ method: 'GET', target, clientSecret: SECRET, signQuery: false, now: () => now });
    const first = headers('/bill-payments?page=1');
    now += 1500;
    const second = headers('/bill-payments?page=1');
    expect(first['X-Timestamp']).toBe('1732000000000');
    expect(second['X-Timestamp']).toBe('1732000001500');
    expect(first['X-Signature']).toBe(opensslHmac(SECRET, 'GET/bill-payments1732000000000'));
    expect(second['X-Signature']).toBe(opensslHmac(SECRET, 'GET/bill-payments1732000001500'));
  });

  it('refuses a timestamp that is not whole milliseconds', () => {
    const sign = (timestamp: number) => () =>
      signRequest({ method: 'GET', path: '/companies', timestamp, clientSecret: SECRET });
    expect(sign(1.5)).toThrow(RangeError);
    expect(sign(-1)).toThrow(RangeError);
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { creditNoteIdempotencyKey, saleIdempotencyKey, stockReferenceId } from '../../workflows/keys.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url');

const KEY_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

describe('workflow keys', () => {
  it('derives keys from SHA-256 exactly as node:crypto does, across block boundaries and non-ASCII text', () => {
    for (const text of [
      '',
      'abc',
      'a'.repeat(55),
      'a'.repeat(56),
      'a'.repeat(64),
      'a'.repeat(119),
      'Mama Mboga — sukari 2kg ✓',
      'x'.repeat(1000),
    ]) {
      expect(saleIdempotencyKey('biz_1', text)).toBe(`sale-v1:${sha256(`5:biz_1|${text.length}:${text}`)}`);
    }
  });

  it('derives the same key from the same business identity, and a different one otherwise', () => {
    expect(saleIdempotencyKey('biz_1', 'INV/2026/001')).toBe(saleIdempotencyKey('biz_1', 'INV/2026/001'));
    expect(saleIdempotencyKey('biz_1', 'INV/2026/001')).not.toBe(saleIdempotencyKey('biz_2', 'INV/2026/001'));
    expect(saleIdempotencyKey('a|b', 'c')).not.toBe(saleIdempotencyKey('a', 'b|c'));
    expect(creditNoteIdempotencyKey('biz_1', 'INV-1', 'CN-1')).not.toBe(
      creditNoteIdempotencyKey('biz_1', 'INV-1', 'CN-2'),
    );
  });

  it('matches the API’s Idempotency-Key rules and the 100-character referenceId limit', () => {
    const key = saleIdempotencyKey('biz_with_a_long_identifier_0000000001', 'Z'.repeat(50));
    expect(key).toMatch(KEY_PATTERN);
    expect(key).toBe(`sale-v1:${sha256('37:biz_with_a_long_identifier_0000000001|50:' + 'Z'.repeat(50))}`);
    expect(creditNoteIdempotencyKey('b', 'i', 'c')).toMatch(KEY_PATTERN);
    expect(stockReferenceId(key, 499, 'DEDUCT').length).toBeLessThanOrEqual(100);
  });
});

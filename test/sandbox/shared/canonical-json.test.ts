import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint } from '../../../sandbox/shared/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and leaves out whitespace', () => {
    const value = { b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } };
    expect(canonicalJson(value)).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
  });

  it('gives the same text for objects that differ only in key order', () => {
    expect(canonicalJson({ x: 1, y: [1, 2], z: { q: 1, p: 2 } })).toBe(
      canonicalJson({ z: { p: 2, q: 1 }, y: [1, 2], x: 1 }),
    );
  });

  it('keeps array order, since it carries meaning', () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('drops undefined members like JSON.stringify, and turns undefined array items into null', () => {
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('serialises dates through toJSON and escapes strings as JSON does', () => {
    expect(canonicalJson({ at: new Date('2026-01-02T03:04:05.000Z'), s: 'a"b\n' })).toBe(
      '{"at":"2026-01-02T03:04:05.000Z","s":"a\\"b\\n"}',
    );
  });
});

describe('fingerprint', () => {
  it('is the hex SHA-256 of the canonical JSON of its parts', () => {
    const expected = createHash('sha256').update('["POST",{"a":1,"b":2}]').digest('hex');
    expect(fingerprint('POST', { b: 2, a: 1 })).toBe(expected);
    expect(fingerprint('POST', { b: 2, a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tells different bodies and different part splits apart', () => {
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
    expect(fingerprint('ab', 'c')).not.toBe(fingerprint('a', 'bc'));
  });
});

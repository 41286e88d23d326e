import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { loadKeyRing, parseKeyList, PayloadKeyConfigError, requireKeyRing } from '../../src/codec/keys.js';
import { payloadEncryptionFromEnv } from '../../src/codec/data-converter.js';
import { newKey } from './helpers.js';

const k1 = newKey().toString('base64');
const k2 = newKey().toString('base64');

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

const tempDirs: string[] = [];
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'codec-keys-'));
  tempDirs.push(dir);
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

describe('loadKeyRing', () => {
  it('reads PAYLOAD_KEYS oldest first; the last key encrypts, every key decrypts', () => {
    const ring = loadKeyRing({ PAYLOAD_KEYS: `k1:${k1}, k2:${k2}` })!;
    expect(ring.ids).toEqual(['k1', 'k2']);
    expect(ring.encryptKeyId).toBe('k2');
    expect(ring.key('k1')?.export()).toEqual(Buffer.from(k1, 'base64'));
  });

  it('PAYLOAD_KEY_ID picks the encrypting key', () => {
    expect(loadKeyRing({ PAYLOAD_KEYS: `k1:${k1},k2:${k2}`, PAYLOAD_KEY_ID: 'k1' })!.encryptKeyId).toBe('k1');
  });

  it('returns undefined when nothing is configured, and requireKeyRing says what to set', () => {
    expect(loadKeyRing({})).toBeUndefined();
    const err = thrown(() => requireKeyRing({}));
    expect(err).toBeInstanceOf(PayloadKeyConfigError);
    expect(err.message).toContain('PAYLOAD_KEYS');
    expect(err.message).toContain('PAYLOAD_KEYS_FILE');
  });

  it('a key of the wrong length is a named error that never prints the key', () => {
    const short = newKey().subarray(0, 16).toString('base64');
    const err = thrown(() => loadKeyRing({ PAYLOAD_KEYS: `k1:${k1},short-one:${short}` }));
    expect(err).toBeInstanceOf(PayloadKeyConfigError);
    expect(err).toBeInstanceOf(ConfigError); // runMain: "configuration error: …", exit 2
    expect(err.name).toBe('PayloadKeyConfigError');
    expect(err.message).toContain('PAYLOAD_KEYS');
    expect(err.message).toContain('"short-one"');
    expect(err.message).toContain('16 bytes');
    expect(err.message).not.toContain(short);
    expect(err.message).not.toContain(k1);
  });

  it('refuses malformed entries without echoing them', () => {
    const noId = thrown(() => parseKeyList(k1, 'PAYLOAD_KEYS'));
    expect(noId.message).toBe('PAYLOAD_KEYS entry 1 is not in the form <id>:<base64 key>');
    const badId = thrown(() => parseKeyList(`bad id!:${k1}`, 'PAYLOAD_KEYS'));
    expect(badId.message).toContain('PAYLOAD_KEYS entry 1');
    expect(badId.message).not.toContain(k1);
    const notBase64 = thrown(() => parseKeyList('k1:not base64 at all!', 'PAYLOAD_KEYS'));
    expect(notBase64.message).toBe('PAYLOAD_KEYS entry 1: key "k1" is not base64');
  });

  it('refuses duplicate ids, and PAYLOAD_KEY_ID naming no key', () => {
    expect(thrown(() => loadKeyRing({ PAYLOAD_KEYS: `k1:${k1},k1:${k2}` })).message).toContain('"k1" is listed twice');
    const err = thrown(() => loadKeyRing({ PAYLOAD_KEYS: `k1:${k1}`, PAYLOAD_KEY_ID: 'k9' }));
    expect(err.message).toBe('PAYLOAD_KEY_ID: no key with id "k9" in PAYLOAD_KEYS');
    expect(thrown(() => loadKeyRing({ PAYLOAD_KEY_ID: 'k1' })).message).toContain('PAYLOAD_KEY_ID is set but');
  });

  it('reads PAYLOAD_KEYS_FILE as lines or JSON, file keys before PAYLOAD_KEYS', () => {
    const lines = tempFile('keys.txt', `# rotated 2026-01\nk1:${k1}\n\nk2:${k2}\n`);
    expect(loadKeyRing({ PAYLOAD_KEYS_FILE: lines })!.toJSON()).toEqual({ encryptKeyId: 'k2', ids: ['k1', 'k2'] });

    const json = tempFile(
      'keys.json',
      JSON.stringify({
        keys: [
          { id: 'k1', key: k1 },
          { id: 'k2', key: k2 },
        ],
        encryptKeyId: 'k1',
      }),
    );
    expect(loadKeyRing({ PAYLOAD_KEYS_FILE: json })!.encryptKeyId).toBe('k1');

    const array = tempFile('keys.json', JSON.stringify([{ id: 'k1', key: k1 }]));
    const k3 = newKey().toString('base64');
    expect(loadKeyRing({ PAYLOAD_KEYS_FILE: array, PAYLOAD_KEYS: `k3:${k3}` })!.toJSON()).toEqual({
      encryptKeyId: 'k3',
      ids: ['k1', 'k3'],
    });
  });

  it('file errors name the variable, not the contents', () => {
    const missing = thrown(() => loadKeyRing({ PAYLOAD_KEYS_FILE: '/nonexistent/keys' }));
    expect(missing.message).toBe('PAYLOAD_KEYS_FILE: cannot read /nonexistent/keys (ENOENT)');
    const broken = tempFile('keys.json', `{"keys": [{"id": "k1", "key": "${k1}"`);
    const err = thrown(() => loadKeyRing({ PAYLOAD_KEYS_FILE: broken }));
    expect(err.message).toBe('PAYLOAD_KEYS_FILE: not valid JSON');
    const short = tempFile('keys.json', JSON.stringify([{ id: 'old', key: 'c2hvcnQ=' }]));
    expect(thrown(() => loadKeyRing({ PAYLOAD_KEYS_FILE: short })).message).toContain(
      'PAYLOAD_KEYS_FILE entry 1: key "old" is 5 bytes',
    );
  });

  it('printing or serialising a ring shows ids only', () => {
    const ring = loadKeyRing({ PAYLOAD_KEYS: `k1:${k1},k2:${k2}` })!;
    const hexes = [k1, k2].map((k) => Buffer.from(k, 'base64').toString('hex'));
    for (const text of [inspect(ring), JSON.stringify(ring), String(ring), JSON.stringify({ ring })]) {
      for (const secret of [k1, k2, ...hexes]) expect(text).not.toContain(secret);
    }
    expect(inspect(ring)).toContain("encryptKeyId: 'k2'");
  });
});

describe('payloadEncryptionFromEnv', () => {
  it('encrypts when keys are configured', () => {
    const enc = payloadEncryptionFromEnv({ PAYLOAD_KEYS: `k1:${k1}` });
    expect(enc.encrypted).toBe(true);
    expect(enc.dataConverter.payloadCodecs).toHaveLength(1);
    expect(enc.dataConverter.failureConverterPath).toMatch(/failure-converter\.cjs$/);
  });

  it('without keys: an error unless plain text is explicitly allowed', () => {
    expect(thrown(() => payloadEncryptionFromEnv({})).message).toContain('PAYLOAD_KEYS');
    expect(payloadEncryptionFromEnv({}, { allowPlaintext: true }).encrypted).toBe(false);
    expect(payloadEncryptionFromEnv({ PAYLOAD_ENCRYPTION: 'off' }).encrypted).toBe(false);
    // The operator's "required" wins over a local stack's permission.
    expect(() => payloadEncryptionFromEnv({ PAYLOAD_ENCRYPTION: 'required' }, { allowPlaintext: true })).toThrow(
      PayloadKeyConfigError,
    );
  });

  it('refuses contradictions and unknown modes', () => {
    expect(
      thrown(() => payloadEncryptionFromEnv({ PAYLOAD_ENCRYPTION: 'off', PAYLOAD_KEYS: `k1:${k1}` })).message,
    ).toContain('PAYLOAD_ENCRYPTION=off but payload keys are configured');
    expect(thrown(() => payloadEncryptionFromEnv({ PAYLOAD_ENCRYPTION: 'maybe' })).message).toBe(
      'PAYLOAD_ENCRYPTION: must be "required" or "off"',
    );
  });
});

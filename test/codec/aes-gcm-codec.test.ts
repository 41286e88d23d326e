import { spawnSync } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, PayloadDecryptionError } from '../../src/codec/aes-gcm-codec.js';
import { PlaintextPayloadCodec } from '../../src/codec/data-converter.js';
import { jsonPayload, newKey, ring } from './helpers.js';

const text = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());
/** Payload → comparable form (Buffer and Uint8Array holding the same bytes compare equal). */
function bytesAsHex(payload: Payload) {
  const metadata = Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('hex')]);
  return { metadata: Object.fromEntries(metadata), data: Buffer.from(payload.data ?? []).toString('hex') };
}
const customer = { name: 'Wanjiku Kamau', pin: 'A012345678Z' };

async function rejection(promise: Promise<unknown>): Promise<PayloadDecryptionError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(PayloadDecryptionError);
    return err as PayloadDecryptionError;
  }
  throw new Error('expected a rejection');
}

describe('AesGcmPayloadCodec', () => {
  const k1 = newKey();
  const k2 = newKey();

  it('round-trips every payload, metadata included, and leaves no plaintext behind', async () => {
    const codec = new AesGcmPayloadCodec(ring([['k1', k1]]));
    const originals = [
      defaultPayloadConverter.toPayload(customer),
      defaultPayloadConverter.toPayload(undefined),
      defaultPayloadConverter.toPayload(new Uint8Array([1, 2, 3])),
      {
        metadata: { encoding: new TextEncoder().encode('json/plain'), custom: new TextEncoder().encode('x') },
        data: new TextEncoder().encode('"Wanjiku"'),
      },
    ];
    const encoded = await codec.encode(originals);
    expect(encoded).toHaveLength(originals.length);
    for (const payload of encoded) {
      expect(Object.keys(payload.metadata ?? {}).sort()).toEqual(['encoding', 'encryption-key-id']);
      expect(text(payload.metadata?.encoding)).toBe('binary/encrypted');
      expect(text(payload.metadata?.['encryption-key-id'])).toBe('k1');
      expect(Buffer.from(payload.data!).includes('Wanjiku')).toBe(false);
    }
    // A fresh IV each time: the same value never encrypts to the same bytes.
    const again = await codec.encode([originals[0]!]);
    expect(Buffer.from(again[0]!.data!).equals(Buffer.from(encoded[0]!.data!))).toBe(false);

    const decoded = await codec.decode(encoded);
    expect(decoded.map(bytesAsHex)).toEqual(originals.map(bytesAsHex));
    expect(defaultPayloadConverter.fromPayload(decoded[0]!)).toEqual(customer);
    expect(defaultPayloadConverter.fromPayload(decoded[1]!)).toBeUndefined();
    expect(await codec.encode([])).toEqual([]);
  });

  it('rotation: old payloads still decode after a new key is added; new payloads use the newest key', async () => {
    const before = new AesGcmPayloadCodec(ring([['k1', k1]]));
    const old = await before.encode([jsonPayload(customer)]);

    const after = new AesGcmPayloadCodec(
      ring([
        ['k1', k1],
        ['k2', k2],
      ]),
    );
    expect(after.encryptKeyId).toBe('k2');
    expect(defaultPayloadConverter.fromPayload((await after.decode(old))[0]!)).toEqual(customer);
    const fresh = await after.encode([jsonPayload(customer)]);
    expect(text(fresh[0]!.metadata?.['encryption-key-id'])).toBe('k2');

    // Retiring k1 too early is a clear error naming it, not garbage.
    const retired = new AesGcmPayloadCodec(ring([['k2', k2]]));
    const err = await rejection(retired.decode(old));
    expect(err.keyId).toBe('k1');
    expect(err.message).toContain('key "k1", which is not configured');
    expect(err.message).toContain('configured: k2');
  });

  it('decodes the layout of the Go/Python samples: Marshal(payload), then nonce ‖ Seal', async () => {
    const inner = jsonPayload(customer);
    const marshalled = proto.temporal.api.common.v1.Payload.encode(inner).finish();
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', k1, nonce);
    const sealed = Buffer.concat([nonce, cipher.update(marshalled), cipher.final(), cipher.getAuthTag()]);
    const foreign = {
      metadata: {
        encoding: new TextEncoder().encode('binary/encrypted'),
        'encryption-key-id': new TextEncoder().encode('go-key'),
      },
      data: sealed,
    };
    const [decoded] = await new AesGcmPayloadCodec(ring([['go-key', k1]])).decode([foreign]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(customer);
  });

  it('plain payloads (starts without the codec) pass through unchanged', async () => {
    const codec = new AesGcmPayloadCodec(ring([['k1', k1]]));
    const plain = [jsonPayload(customer), { metadata: { encoding: new TextEncoder().encode('binary/null') } }];
    const decoded = await codec.decode(plain);
    expect(decoded[0]).toBe(plain[0]);
    expect(decoded[1]).toBe(plain[1]);
  });

  it('tampered ciphertext, IV or tag fails authentication with an error naming the key id', async () => {
    const codec = new AesGcmPayloadCodec(ring([['k1', k1]]));
    const [encrypted] = await codec.encode([jsonPayload(customer)]);
    for (const index of [0, 13, encrypted!.data!.byteLength - 1]) {
      const data = Buffer.from(encrypted!.data!);
      data[index] = data[index]! ^ 0x01;
      const err = await rejection(codec.decode([{ ...encrypted!, data }]));
      expect(err.keyId).toBe('k1');
      expect(err.message).toContain('failed authentication with key "k1"');
      expect(err.message).not.toContain('Wanjiku');
    }
    const truncated = await rejection(codec.decode([{ ...encrypted!, data: encrypted!.data!.subarray(0, 20) }]));
    expect(truncated.message).toContain('too short');
  });

  it('the same id holding different bytes fails authentication, never returns garbage', async () => {
    const [encrypted] = await new AesGcmPayloadCodec(ring([['k1', k1]])).encode([jsonPayload(customer)]);
    const wrong = new AesGcmPayloadCodec(ring([['k1', k2]]));
    expect((await rejection(wrong.decode([encrypted!]))).message).toContain('failed authentication with key "k1"');
  });

  it('an encrypted payload without a key id is an error', async () => {
    const codec = new AesGcmPayloadCodec(ring([['k1', k1]]));
    const [encrypted] = await codec.encode([jsonPayload(customer)]);
    const noId = { metadata: { encoding: encrypted!.metadata!.encoding! }, data: encrypted!.data! };
    expect((await rejection(codec.decode([noId]))).message).toContain('no encryption-key-id');
  });

  it('a stack without keys refuses encrypted payloads by name instead of passing ciphertext on', async () => {
    const [encrypted] = await new AesGcmPayloadCodec(ring([['k1', k1]])).encode([jsonPayload(customer)]);
    const plain = new PlaintextPayloadCodec();
    const err = await rejection(plain.decode([encrypted!]));
    expect(err.message).toContain('key "k1" but payload encryption is off here');
    const p = jsonPayload(1);
    expect(await plain.encode([p])).toEqual([p]);
  });
});

describe('codec server entry point (bad input)', () => {
  it('a key of the wrong length exits non-zero with a named error and no secret', () => {
    const short = newKey().subarray(0, 24).toString('base64');
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/codec-server.ts'], {
      cwd: new URL('../..', import.meta.url),
      env: { PATH: process.env.PATH, PAYLOAD_KEYS: `prod-2026:${short}`, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      'configuration error: PAYLOAD_KEYS entry 1: key "prod-2026" is 24 bytes; AES-256 needs exactly 32',
    );
    expect(result.stderr + result.stdout).not.toContain(short);
  });
});

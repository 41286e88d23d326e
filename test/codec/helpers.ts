import { randomBytes } from 'node:crypto';
import { PayloadKeyRing } from '../../src/codec/keys.js';

export function newKey(): Buffer {
  return randomBytes(32);
}

export function ring(keys: Array<[string, Buffer]>, encryptKeyId?: string): PayloadKeyRing {
  return new PayloadKeyRing(
    keys.map(([id, key]) => ({ id, key })),
    encryptKeyId,
  );
}

export function jsonPayload(value: unknown) {
  return {
    metadata: { encoding: new TextEncoder().encode('json/plain') },
    data: new TextEncoder().encode(JSON.stringify(value)),
  };
}

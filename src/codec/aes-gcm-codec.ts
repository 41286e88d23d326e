// AES-256-GCM in the layout of Temporal's Go, Python and .NET encryption samples: see docs/encryption.md.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { PayloadKeyRing } from './keys.js';

const ENCODING_METADATA_KEY = 'encoding';
const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA_KEY = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

const PayloadProto = proto.temporal.api.common.v1.Payload;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Names the key id and the reason, never the payload's contents. */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
  constructor(
    message: string,
    readonly keyId: string | undefined,
  ) {
    super(message);
  }
}

function metadataText(payload: Payload, key: string): string | undefined {
  const value = payload.metadata?.[key];
  return value == null ? undefined : decoder.decode(value);
}

export function isEncryptedPayload(payload: Payload): boolean {
  return metadataText(payload, ENCODING_METADATA_KEY) === ENCRYPTED_ENCODING;
}

export function payloadKeyId(payload: Payload): string | undefined {
  return metadataText(payload, KEY_ID_METADATA_KEY);
}

export class AesGcmPayloadCodec implements PayloadCodec {
  constructor(private readonly keys: PayloadKeyRing) {}

  get encryptKeyId(): string {
    return this.keys.encryptKeyId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncryptedPayload(payload) ? this.decrypt(payload) : payload));
  }

  private encrypt(payload: Payload): Payload {
    const keyId = this.keys.encryptKeyId;
    const key = this.keys.key(keyId)!; // the ring refuses an encryption key id it does not hold
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    const plain = PayloadProto.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [ENCODING_METADATA_KEY]: encoder.encode(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA_KEY]: encoder.encode(keyId),
      },
      data,
    };
  }

  private decrypt(payload: Payload): Payload {
    const keyId = payloadKeyId(payload);
    if (keyId === undefined)
      throw new PayloadDecryptionError(`encrypted payload has no ${KEY_ID_METADATA_KEY} metadata`, undefined);
    const key = this.keys.key(keyId);
    if (key === undefined)
      throw new PayloadDecryptionError(
        `payload was encrypted with key "${keyId}", which is not configured ` +
          `(configured: ${this.keys.ids.join(', ')}); add it to PAYLOAD_KEYS or PAYLOAD_KEYS_FILE`,
        keyId,
      );
    const data = payload.data ?? new Uint8Array();
    if (data.byteLength < IV_BYTES + TAG_BYTES)
      throw new PayloadDecryptionError(
        `encrypted payload (key "${keyId}") is too short to hold an IV and a tag`,
        keyId,
      );
    const iv = data.subarray(0, IV_BYTES);
    const tag = data.subarray(data.byteLength - TAG_BYTES);
    const body = data.subarray(IV_BYTES, data.byteLength - TAG_BYTES);
    let plain: Buffer;
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      plain = Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `payload failed authentication with key "${keyId}": the ciphertext was altered ` +
          `or the key "${keyId}" holds different bytes than the one that encrypted it`,
        keyId,
      );
    }
    let decoded: proto.temporal.api.common.v1.Payload;
    try {
      decoded = PayloadProto.decode(plain);
    } catch {
      throw new PayloadDecryptionError(`payload decrypted with key "${keyId}" is not a Temporal Payload`, keyId);
    }
    // A plain object (not a protobufjs message with prototype defaults), with the fields the SDK reads.
    const result: Payload = { metadata: { ...decoded.metadata }, data: decoded.data };
    if (decoded.externalPayloads.length > 0) result.externalPayloads = decoded.externalPayloads;
    return result;
  }
}

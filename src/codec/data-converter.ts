// Plain only when the caller (a local stack) or the operator (`PAYLOAD_ENCRYPTION=off`) says so explicitly.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { AesGcmPayloadCodec, isEncryptedPayload, PayloadDecryptionError, payloadKeyId } from './aes-gcm-codec.js';
import { loadKeyRing, PAYLOAD_KEY_ENV, PayloadKeyConfigError, type PayloadKeyRing, requireKeyRing } from './keys.js';
import type { Env } from '../config/env.js';

/** The module that moves failure messages and stack traces into an encrypted payload. */
export function failureConverterPath(): string {
  const path = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));
  if (!existsSync(path))
    throw new Error(`payload codec: ${path} is missing (copy src/codec/failure-converter.cjs next to this module)`);
  return path;
}

export function createDataConverter(keyRing: PayloadKeyRing): DataConverter {
  return { payloadCodecs: [new AesGcmPayloadCodec(keyRing)], failureConverterPath: failureConverterPath() };
}

/** Without keys: refuses encrypted payloads, naming the key, rather than hand ciphertext to the payload converter. */
export class PlaintextPayloadCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    const encrypted = payloads.find(isEncryptedPayload);
    if (encrypted === undefined) return payloads;
    const keyId = payloadKeyId(encrypted);
    throw new PayloadDecryptionError(
      `payload was encrypted with key "${keyId ?? '(none)'}" but payload encryption is off here: ` +
        `set ${PAYLOAD_KEY_ENV.keys} or ${PAYLOAD_KEY_ENV.keysFile}`,
      keyId,
    );
  }
}

export type PayloadEncryption =
  | { encrypted: true; keyRing: PayloadKeyRing; codec: AesGcmPayloadCodec; dataConverter: DataConverter }
  | { encrypted: false; codec: PlaintextPayloadCodec; dataConverter: DataConverter };

/** Encrypted when keys are set; plain only with `PAYLOAD_ENCRYPTION=off`, or `allowPlaintext` unless `=required`. */
export function payloadEncryptionFromEnv(env: Env, options: { allowPlaintext?: boolean } = {}): PayloadEncryption {
  const modeText = env[PAYLOAD_KEY_ENV.encryption]?.trim().toLowerCase() || undefined;
  if (modeText !== undefined && modeText !== 'required' && modeText !== 'off')
    throw new PayloadKeyConfigError(`${PAYLOAD_KEY_ENV.encryption}: must be "required" or "off"`);
  const ring = loadKeyRing(env);
  if (ring !== undefined) {
    if (modeText === 'off')
      throw new PayloadKeyConfigError(
        `${PAYLOAD_KEY_ENV.encryption}=off but payload keys are configured: unset one or the other`,
      );
    const codec = new AesGcmPayloadCodec(ring);
    return { encrypted: true, keyRing: ring, codec, dataConverter: createDataConverter(ring) };
  }
  const plaintext = modeText === 'off' || (modeText === undefined && options.allowPlaintext === true);
  if (!plaintext) requireKeyRing(env); // throws the "needs keys" error
  const codec = new PlaintextPayloadCodec();
  return { encrypted: false, codec, dataConverter: { payloadCodecs: [codec] } };
}

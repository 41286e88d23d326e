/**
 * The data converters of the worker, the client helpers and the CLIs: encrypted when payload keys are configured;
 * plain only when the caller (a local stack) or the operator (`PAYLOAD_ENCRYPTION=off`) says so explicitly.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { AesGcmPayloadCodec, isEncryptedPayload, PayloadDecryptionError, payloadKeyId } from './aes-gcm-codec.js';
import { loadKeyRing, PAYLOAD_KEY_ENV, PayloadKeyConfigError, type PayloadKeyRing, requireKeyRing } from './keys.js';
import type { Env } from '../config/env.js';

/**
 * Path of the failure converter module that moves failure messages and stack traces into an encoded (so
 * encrypted) payload. Given to `DataConverter.failureConverterPath`; the SDK `require()`s it in the worker and
 * client and bundles it into the workflow code.
 */
export function failureConverterPath(): string {
  const path = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));
  if (!existsSync(path))
    throw new Error(`payload codec: ${path} is missing (copy src/codec/failure-converter.cjs next to this module)`);
  return path;
}

export interface DataConverterOptions {
  /** Also encrypt failure messages and stack traces (default true). */
  encryptFailures?: boolean;
}

/** A data converter that encrypts every payload (and, by default, failure messages) with the ring's current key. */
export function createDataConverter(keyRing: PayloadKeyRing, options: DataConverterOptions = {}): DataConverter {
  return {
    payloadCodecs: [new AesGcmPayloadCodec(keyRing)],
    ...(options.encryptFailures === false ? {} : { failureConverterPath: failureConverterPath() }),
  };
}

/**
 * The codec of a stack running without keys: writes plain payloads (as the SDK does without a codec) and, instead of
 * handing ciphertext to the payload converter, refuses encrypted payloads with an error saying which key is needed.
 */
export class PlaintextPayloadCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    for (const payload of payloads) {
      if (isEncryptedPayload(payload)) {
        const keyId = payloadKeyId(payload);
        throw new PayloadDecryptionError(
          `payload was encrypted with key "${keyId ?? '(none)'}" but payload encryption is off here: set ${PAYLOAD_KEY_ENV.keys} or ${PAYLOAD_KEY_ENV.keysFile}`,
          keyId,
        );
      }
    }
    return payloads;
  }
}

export type PayloadEncryption =
  | {
      encrypted: true;
      keyRing: PayloadKeyRing;
      codec: AesGcmPayloadCodec;
      /** For `Worker.create({ dataConverter })` and `new Client({ dataConverter })`. */
      dataConverter: DataConverter;
    }
  | {
      encrypted: false;
      codec: PlaintextPayloadCodec;
      dataConverter: DataConverter;
    };

export interface PayloadEncryptionOptions extends DataConverterOptions {
  /**
   * Run in plain text when no keys are configured (local stacks on the embedded sandbox). Without it, missing keys
   * are a `PayloadKeyConfigError`. `PAYLOAD_ENCRYPTION=required` in the environment overrides it.
   */
  allowPlaintext?: boolean;
}

/**
 * Payload encryption as the environment configures it:
 * - keys set (`PAYLOAD_KEYS` / `PAYLOAD_KEYS_FILE`) → encrypted;
 * - no keys and (`PAYLOAD_ENCRYPTION=off`, or `allowPlaintext` and `PAYLOAD_ENCRYPTION` unset) → plain text;
 * - otherwise → `PayloadKeyConfigError` naming the variables (as does any malformed key, or keys with
 *   `PAYLOAD_ENCRYPTION=off`).
 */
export function payloadEncryptionFromEnv(env: Env, options: PayloadEncryptionOptions = {}): PayloadEncryption {
  const modeText = env[PAYLOAD_KEY_ENV.encryption]?.trim().toLowerCase() || undefined;
  if (modeText !== undefined && modeText !== 'required' && modeText !== 'off') {
    throw new PayloadKeyConfigError(`${PAYLOAD_KEY_ENV.encryption}: must be "required" or "off"`);
  }
  const ring = loadKeyRing(env);
  if (ring !== undefined) {
    if (modeText === 'off') {
      throw new PayloadKeyConfigError(
        `${PAYLOAD_KEY_ENV.encryption}=off but payload keys are configured: unset one or the other`,
      );
    }
    return {
      encrypted: true,
      keyRing: ring,
      codec: new AesGcmPayloadCodec(ring),
      dataConverter: createDataConverter(ring, options),
    };
  }
  const plaintext = modeText === 'off' || (modeText === undefined && options.allowPlaintext === true);
  if (!plaintext) requireKeyRing(env); // throws the "needs keys" error
  const codec = new PlaintextPayloadCodec();
  return { encrypted: false, codec, dataConverter: { payloadCodecs: [codec] } };
}

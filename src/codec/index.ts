/**
 * Payload encryption: key ring (keys.ts), AES-256-GCM codec (aes-gcm-codec.ts), data converters
 * (data-converter.ts) and the codec server (server.ts). See docs/encryption.md.
 */
export {
  PAYLOAD_KEY_BYTES,
  PAYLOAD_KEY_ENV,
  PAYLOAD_KEY_ID_PATTERN,
  PayloadKeyConfigError,
  PayloadKeyRing,
  loadKeyRing,
  parseKeyList,
  requireKeyRing,
  type PayloadKeyInput,
} from './keys.js';
export {
  AesGcmPayloadCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA_KEY,
  PayloadDecryptionError,
  isEncryptedPayload,
  payloadKeyId,
} from './aes-gcm-codec.js';
export {
  PlaintextPayloadCodec,
  createDataConverter,
  failureConverterPath,
  payloadEncryptionFromEnv,
  type DataConverterOptions,
  type PayloadEncryption,
  type PayloadEncryptionOptions,
} from './data-converter.js';
export {
  CODEC_ALLOWED_HEADERS,
  DEFAULT_CODEC_CORS_ORIGINS,
  DEFAULT_CODEC_PORT,
  buildCodecApp,
  codecServerOptionsFromEnv,
  normaliseOrigins,
  startCodecServer,
  type CodecAppOptions,
  type CodecServer,
  type CodecServerEnvOptions,
  type CodecServerOptions,
} from './server.js';

/**
 * The codec server on its own: `tsx src/cli/codec-server.ts` (keys from PAYLOAD_KEYS / PAYLOAD_KEYS_FILE, listening
 * on CODEC_HOST:CODEC_PORT, CORS for CODEC_CORS_ORIGINS, optional CODEC_AUTH_TOKEN). Exits 2 on a bad
 * configuration, naming the variable and never a key.
 */
import { runMain } from './run-main.js';
import { createLogger } from '../logger.js';
import { requireKeyRing } from '../codec/keys.js';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../codec/server.js';

runMain(async () => {
  const keyRing = requireKeyRing();
  const options = codecServerOptionsFromEnv();
  const logger = createLogger({ name: 'codec-server' });
  const server = await startCodecServer({ ...options, codec: new AesGcmPayloadCodec(keyRing), logger });
  logger.info(
    { url: server.url, keyIds: keyRing.ids, encryptKeyId: keyRing.encryptKeyId, corsOrigins: options.corsOrigins, auth: options.authToken !== undefined },
    'codec server listening',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
});

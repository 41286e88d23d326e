/**
 * The codec server on its own: `npm run codec-server`, or `node dist/src/cli/codec-server.js` in the image (keys from
 * PAYLOAD_KEYS / PAYLOAD_KEYS_FILE, listening on CODEC_HOST:CODEC_PORT, CORS for CODEC_CORS_ORIGINS, a bearer token
 * from CODEC_AUTH_TOKEN / CODEC_AUTH_TOKEN_FILE, required unless CODEC_HOST is loopback). Exits 2 on a bad
 * configuration, naming the variable and never a key or the token.
 */
import { runMain } from './run-main.js';
import { createLogger } from '../logger.js';
import { requireKeyRing } from '../codec/keys.js';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../codec/server.js';

runMain(async () => {
  // Its whole configuration, read once here.
  const keyRing = requireKeyRing(process.env);
  const options = codecServerOptionsFromEnv(process.env);
  const logger = createLogger({ name: 'codec-server' });
  const server = await startCodecServer({ ...options, codec: new AesGcmPayloadCodec(keyRing), logger });
  logger.info(
    {
      url: server.url,
      keyIds: keyRing.ids,
      encryptKeyId: keyRing.encryptKeyId,
      corsOrigins: options.corsOrigins,
      auth: options.authToken !== undefined,
    },
    'codec server listening',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
});

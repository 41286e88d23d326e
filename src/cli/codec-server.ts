import { runMain } from './run-main.js';
import { createLogger } from '../logger.js';
import { requireKeyRing } from '../codec/keys.js';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec.js';
import { codecServerOptionsFromEnv, startCodecServer } from '../codec/server.js';

runMain(async () => {
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

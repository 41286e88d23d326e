/** `npm start`: the whole stack on embedded defaults (or whatever is configured), until Ctrl+C. */
import { loadConfig } from '../../src/config/env.js';
import { loadWorkerConfig } from '../../src/config/worker.js';
import { createLogger } from '../../src/logger.js';
import { startStack } from './stack.js';
import { runMain } from '../../src/cli/run-main.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const workerConfig = loadWorkerConfig();
  const logger = createLogger({ level: config.logLevel, name: 'stack' });
  const stack = await startStack({ config, workerConfig, logger });
  console.log(`
eTIMS sale worker is running
  Temporal        ${stack.temporalAddress} (namespace ${stack.namespace})
  Temporal UI     ${stack.uiUrl ?? '(server not started here)'}
  compliance      ${stack.services.compliance.baseUrl}${config.compliance ? '' : ' (embedded sandbox)'}
  accounting      ${stack.services.accounting.baseUrl}${config.accounting ? '' : ' (embedded sandbox)'}
  callbacks       ${stack.sale.callbacks?.url ?? 'none (polling only)'}
  codec server    ${stack.codecUrl ?? 'none'}${stack.payloadKeysFile ? `
  payload key     ${stack.payloadKeysFile} (the sales CLI needs it: export PAYLOAD_KEYS_FILE=${stack.payloadKeysFile})` : ''}
Start a sale:     ${stack.payloadKeysFile ? `PAYLOAD_KEYS_FILE=${stack.payloadKeysFile} ` : ''}npm run sales -- start examples/sale.json
Press Ctrl+C to stop.
`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.info({ signal }, 'stopping');
      void stack.stop();
    });
  }
  await stack.running;
  await stack.stop();
  return 0;
}

runMain(main);
